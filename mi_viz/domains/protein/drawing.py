"""Pictures of a protein decode (plotly, for the app): the sequence as a coloured track, the
entropy along it, and one position's MI row.

Residues use the Clustal X colour scheme (hydrophobic blue, positive red, negative magenta,
polar green, cysteine pink, glycine orange, proline yellow, aromatic cyan); masked positions
are grey. The track is a scatter of square markers, not a heatmap, so a click on a residue
can be read back through st.plotly_chart(on_select=...) (Streamlit returns no selection for heatmap traces).
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ...core.plots import cell_markers, marks

CLUSTALX = {
    **dict.fromkeys("AILMFWV", "#80a0f0"),
    **dict.fromkeys("KR", "#f01505"),
    **dict.fromkeys("ED", "#c048c0"),
    **dict.fromkeys("NQST", "#15c015"),
    "C": "#f08080",
    "G": "#f09048",
    "P": "#c0c000",
    **dict.fromkeys("HY", "#15a4a4"),
}
MASKED_COLOR = "#e6e6e6"
PER_ROW = 50


def track_figure(seq: str, selected=(), focus=None, title="", width=900, chosen_label="chosen at this step"):
    """The sequence as a track of residues, PER_ROW to a line: seq uses '_' for masked
    positions; selected (0-based) outlined in orange (this step's batch), focus in red."""
    L = len(seq)
    pos = np.arange(L)
    x, y = pos % PER_ROW, -(pos // PER_ROW)
    colors = [MASKED_COLOR if ch == "_" else CLUSTALX.get(ch, "#999") for ch in seq]
    hover = [f"position {i + 1}: {'masked' if ch == '_' else ch}" for i, ch in enumerate(seq)]
    cell = min(18.0, (width - 40) / PER_ROW)
    fig = go.Figure()
    squares = dict(size=cell, color=colors, line=dict(width=0.5, color="#aaa"))
    fig.add_trace(cell_markers(x, y, hover, squares, "residues"))
    fig.add_trace(
        go.Scatter(
            x=x,
            y=y,
            mode="text",
            text=[ch if ch != "_" else "·" for ch in seq],
            hoverinfo="skip",
            textfont=dict(size=max(8, cell * 0.55), color="black", family="monospace"),
            showlegend=False,
        )
    )
    for cells, color, name in (
        (list(selected), marks()["batch"], chosen_label),
        ([focus] if focus is not None else [], marks()["focus"], "focus (its MI row below)"),
    ):
        if cells:
            fig.add_trace(
                go.Scatter(
                    x=x[cells],
                    y=y[cells],
                    mode="markers",
                    hoverinfo="skip",
                    name=name,
                    showlegend=False,
                    marker=dict(symbol="square-open", size=cell + 3, color=color, line=dict(width=2.5)),
                )
            )
    rows = (L - 1) // PER_ROW + 1
    for r in range(rows):  # position numbers at the start of each line
        fig.add_annotation(x=-1.2, y=-r, text=str(r * PER_ROW + 1), showarrow=False, font=dict(size=9, color="#666"))
    fig.update_xaxes(visible=False, range=[-2.2, PER_ROW], fixedrange=True)
    fig.update_yaxes(visible=False, range=[-rows + 0.4, 0.6], fixedrange=True)
    fig.update_layout(
        width=width,
        height=60 + 26 * rows,
        margin=dict(l=5, r=5, t=30, b=5),
        plot_bgcolor="white",
        title=dict(text=title, font=dict(size=13)),
        clickmode="event+select",
        dragmode=False,
    )
    return fig
