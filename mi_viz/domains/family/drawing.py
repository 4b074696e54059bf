"""Pictures of a family (plotly, for the app): a column-pair score beside the structure's contacts."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ...core.plots import square_layout
from .structure import ContactMap


def contact_map_figure(score: np.ndarray, cmap: ContactMap, title: str, top: int | None = None, size: int = 520):
    """The classic comparison: the score (L, L) above the diagonal (Viridis), the structure's contacts
    below it (grey squares; unmapped columns blank), and the score's top `top` scored pairs marked
    on both halves (green: a contact, red: not)."""
    L = cmap.width
    S = np.array(score, dtype=float)
    iu = np.triu_indices(L, 1)
    upper = np.full((L, L), np.nan)
    upper[iu] = S[iu]
    scored = np.triu(cmap.scored(), 1)
    vals = S[scored]
    lo, hi = (np.quantile(vals, 0.5), np.quantile(vals, 0.995)) if len(vals) else (0.0, 1.0)
    fig = go.Figure(
        go.Heatmap(
            z=upper,
            x=np.arange(1, L + 1),
            y=np.arange(1, L + 1),
            colorscale="Viridis",
            zmin=lo,
            zmax=hi,
            hoverongaps=False,
            hovertemplate="columns %{y}, %{x}: %{z:.4f}<extra></extra>",
            colorbar=dict(thickness=10),
        )
    )
    c = np.argwhere(np.tril(cmap.contacts().T, -1))  # (row > col): contacts below the diagonal
    fig.add_trace(
        go.Scatter(
            x=c[:, 1] + 1,
            y=c[:, 0] + 1,
            mode="markers",
            marker=dict(symbol="square", size=max(2, size // L - 1), color="#9a9a9a"),
            name="contact (C-beta < 8 A)",
            hovertemplate="contact: columns %{x}, %{y}<extra></extra>",
        )
    )
    if top:
        i, j = np.nonzero(scored)
        order = np.argsort(-S[i, j], kind="stable")[:top]
        hit = cmap.contacts()[i[order], j[order]]
        for good, color, name in ((True, "#2ca02c", "top pair: a contact"), (False, "#d62728", "top pair: not")):
            sel = order[hit == good]
            fig.add_trace(
                go.Scatter(
                    x=np.concatenate([j[sel], i[sel]]) + 1,
                    y=np.concatenate([i[sel], j[sel]]) + 1,
                    mode="markers",
                    marker=dict(symbol="circle-open", size=max(5, size // L + 2), color=color, line=dict(width=1.5)),
                    name=name,
                    hoverinfo="skip",
                )
            )
    # the axes span the columns and nothing more: the square is kept by narrowing the plot's
    # domain (constrain), not by widening the range into empty columns on either side
    fig.update_yaxes(range=[L + 0.5, 0.5], scaleanchor="x", constrain="domain", title="column")
    fig.update_xaxes(range=[0.5, L + 0.5], constrain="domain", title="column")
    square_layout(fig, size + 160, size, title, bottom=40, legend=dict(orientation="h", y=-0.15))
    return fig
