"""Domain-free plotly pictures: the MI map of a state (the app draws it for every domain)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

MI_COLORSCALE = "Viridis"
ENTROPY_COLORSCALE = "Blues"


def mi_matrix_figure(mi, masked, zmax=None, title="", size=380, labels=None):
    """(L, L) MI map, masked positions only (others blank), shared scale via zmax;
    labels: a name per position for the hover text (default: the index)."""
    mi = np.array(mi, dtype=float)
    m = np.asarray(masked, bool)
    show = np.where(m[:, None] & m[None, :], mi, np.nan)
    zmax = float(zmax) if zmax else float(np.nanmax(show)) if np.isfinite(show).any() else 1.0
    L = len(m)
    labels = list(labels) if labels is not None else [str(i) for i in range(L)]
    fig = go.Figure(
        go.Heatmap(
            z=show,
            x=labels,
            y=labels,
            colorscale=MI_COLORSCALE,
            zmin=0,
            zmax=zmax or 1.0,
            colorbar=dict(title="MI (nats)", thickness=10),
            hoverongaps=False,
            hovertemplate="%{y} / %{x}: %{z:.4f}<extra></extra>",
        )
    )
    fig.update_yaxes(autorange="reversed", showticklabels=False)
    fig.update_xaxes(showticklabels=False)
    fig.update_layout(
        width=size + 60, height=size, margin=dict(l=5, r=5, t=30, b=5), title=dict(text=title, font=dict(size=13))
    )
    return fig
