"""Pictures of Sudoku boards (plotly, for the app) and the paper's Figure 1 (matplotlib).

Boards are drawn as square scatter markers (not a heatmap) so that a click on a
cell can be read back through st.plotly_chart(on_select=...), which returns
nothing for heatmap traces (Streamlit 1.67).
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import torch

from ...core.mi import ground_truth_mi
from ...core.plots import ENTROPY_COLORSCALE, cell_markers, marks, save_figure
from ...core.reading import read_state
from ...core.samplers import SamplerConfig, decode
from .mdm import MASK_TOKEN, boards_to_tokens, tokens_to_boards


def _cells():
    r, c = np.divmod(np.arange(81), 9)
    return c, 8 - r  # x = column, y = row flipped so row 1 is on top


def board_figure(
    board,
    givens=None,
    heat=None,
    heat_name="",
    zmax=None,
    selected=(),
    wrong=(),
    focus=None,
    colorscale=ENTROPY_COLORSCALE,
    title="",
    size=360,
    show_scale=True,
):
    """A 9x9 board. board (81,) digits, 0 blank. heat (81,) optional cell colours.
    givens (81,) bool: bold black digits; others blue. selected: cells outlined in
    orange (this step's batch); wrong: digits in red; focus: one cell outlined in red."""
    x, y = _cells()
    givens = np.zeros(81, bool) if givens is None else np.asarray(givens, bool)
    heat_vals = np.zeros(81) if heat is None else np.asarray(heat, float)
    zmax = float(zmax) if zmax is not None else (float(np.nanmax(heat_vals)) if heat is not None else 1.0)
    zmax = zmax if zmax > 0 else 1.0
    hover = [
        f"r{i // 9 + 1}c{i % 9 + 1}" + (f"<br>{heat_name} {heat_vals[i]:.3f}" if heat is not None else "")
        for i in range(81)
    ]
    fig = go.Figure()
    fig.add_trace(
        cell_markers(
            x,
            y,
            hover,
            dict(
                size=size / 11.5,
                color=heat_vals if heat is not None else "white",
                colorscale=colorscale,
                cmin=0,
                cmax=zmax,
                line=dict(width=0.5, color="#bbb"),
                showscale=heat is not None and show_scale,
                colorbar=dict(title=heat_name, thickness=10, len=0.8) if heat is not None else None,
            ),
            "cells",
        )
    )
    wrong = set(int(c) for c in wrong)
    # all digits in ONE text trace: an annotation per digit is slow to build
    filled = [i for i, v in enumerate(board) if v]
    if heat is None:
        colors = ["#d62728" if i in wrong else ("black" if givens[i] else "#1f4e9c") for i in filled]
    else:  # digits legible over the heat: white on dark cells (low Viridis, high Blues), black on light ones
        rel = np.clip(heat_vals / zmax, 0, 1)
        dark = rel < 0.55 if colorscale == "Viridis" else rel > 0.55
        colors = ["#ff6b6b" if i in wrong else ("white" if dark[i] else "black") for i in filled]
    fig.add_trace(
        go.Scatter(
            x=x[filled],
            y=y[filled],
            mode="text",
            text=[str(board[i]) for i in filled],
            hoverinfo="skip",
            textfont=dict(size=size / 22, color=colors, family="Arial Black"),
            showlegend=False,
        )
    )
    # outlines and box lines as line traces, not one layout shape each (plotly validates every
    # shape on its own: the cost of a page run was mostly that)
    for cells, color, width in (
        (selected, marks()["batch"], 3),
        ([focus] if focus is not None else [], marks()["focus"], 3),
    ):
        xs, ys = [], []
        for i in cells:
            a, b, c, d = x[i] - 0.45, x[i] + 0.45, y[i] - 0.45, y[i] + 0.45
            xs += [a, b, b, a, a, None]
            ys += [c, c, d, d, c, None]
        if xs:
            fig.add_trace(
                go.Scatter(
                    x=xs, y=ys, mode="lines", line=dict(color=color, width=width), hoverinfo="skip", showlegend=False
                )
            )
    xs, ys = [], []
    for k in (3, 6):  # box lines, then the frame
        xs += [k - 0.5, k - 0.5, None, -0.5, 8.5, None]
        ys += [-0.5, 8.5, None, k - 0.5, k - 0.5, None]
    xs += [-0.5, 8.5, 8.5, -0.5, -0.5]
    ys += [-0.5, -0.5, 8.5, 8.5, -0.5]
    fig.add_trace(
        go.Scatter(x=xs, y=ys, mode="lines", line=dict(color="black", width=2), hoverinfo="skip", showlegend=False)
    )
    fig.update_xaxes(visible=False, range=[-0.6, 8.6], fixedrange=True)
    fig.update_yaxes(visible=False, range=[-0.6, 8.6], scaleanchor="x", fixedrange=True)
    fig.update_layout(
        width=size + (60 if heat is not None and show_scale else 0),
        height=size + 30,
        margin=dict(l=5, r=5, t=30, b=5),
        title=dict(text=title, font=dict(size=13)),
        plot_bgcolor="white",
        clickmode="event+select",
        dragmode=False,
    )
    return fig


def figure1(model, head, puzzle, step: int, out_png, eps: float = 1e-3) -> dict:
    """The paper's Figure 1 for one puzzle: the board after `step` sequential steps
    with the masked cell of largest total MI highlighted, its entropy map, and the
    estimated and ground-truth MI maps on one colour scale."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = boards_to_tokens([puzzle])
    states = decode(model, x, SamplerConfig("sequential"), keep_states=True).states or []
    step = max(0, min(step, len(states) - 1))
    state = states[step]  # (1, 81)
    masked = (state == MASK_TOKEN)[0]
    with torch.inference_mode():
        mi = read_state(model, state, head).mi
        assert mi is not None  # a head was given
        est = mi[0].numpy()
    gt = ground_truth_mi(model, state, eps=eps)
    gmi = gt.mi[0].numpy()
    H = gt.entropy[0].numpy()
    focus = int(np.argmax(gmi.sum(1)))
    vmax = max(gmi.max(), est.max(), 1e-6)
    board = tokens_to_boards(state)[0].numpy()
    fig, axes = plt.subplots(1, 5, figsize=(20, 4.3), gridspec_kw=dict(width_ratios=[1, 1, 1, 1.25, 1.25]))

    def draw_grid(ax):
        for k in range(10):
            lw = 2 if k % 3 == 0 else 0.4
            ax.axhline(k - 0.5, color="k", lw=lw)
            ax.axvline(k - 0.5, color="k", lw=lw)
        ax.set_xticks([])
        ax.set_yticks([])

    ax = axes[0]
    ax.imshow(np.zeros((9, 9)), cmap="Greys", vmin=0, vmax=1)
    for i in range(81):
        if board[i]:
            ax.text(
                i % 9,
                i // 9,
                str(board[i]),
                ha="center",
                va="center",
                fontsize=11,
                weight="bold" if puzzle[i] else "normal",
                color="k" if puzzle[i] else "#1f4e9c",
            )
    ax.add_patch(plt.Rectangle((focus % 9 - 0.5, focus // 9 - 0.5), 1, 1, fill=False, ec="red", lw=2.5))
    draw_grid(ax)
    ax.set_title(f"board after {step} steps (red: r{focus // 9 + 1}c{focus % 9 + 1})")
    ax = axes[1]
    im = ax.imshow(H.reshape(9, 9), cmap="Blues", vmin=0)
    draw_grid(ax)
    ax.set_title("marginal entropy (nats)")
    plt.colorbar(im, ax=ax, fraction=0.046)
    ax = axes[2]
    im = ax.imshow(gmi[focus].reshape(9, 9), cmap="viridis", vmin=0, vmax=vmax)
    ax.add_patch(plt.Rectangle((focus % 9 - 0.5, focus // 9 - 0.5), 1, 1, fill=False, ec="red", lw=2.5))
    draw_grid(ax)
    ax.set_title("true MI with the red cell")
    m = masked.numpy()
    for ax, mat, name in (
        (axes[3], est, "estimated MI (head, 1 pass)"),
        (axes[4], gmi, f"ground-truth MI ({int(gt.passes[0])} passes)"),
    ):
        show = np.where(m[:, None] & m[None, :], mat, np.nan)
        im = ax.imshow(show, cmap="viridis", vmin=0, vmax=vmax)
        ax.set_title(name)
        ax.set_xlabel("cell")
        ax.set_ylabel("cell")
        plt.colorbar(im, ax=ax, fraction=0.046, label="nats")
    fig.tight_layout()
    save_figure(fig, out_png, dpi=110)
    plt.close(fig)
    return {
        "step": step,
        "masked": int(m.sum()),
        "focus": f"r{focus // 9 + 1}c{focus % 9 + 1}",
        "gt_passes": int(gt.passes[0]),
        "vmax": float(vmax),
        "out": str(out_png),
    }


CELL_NAMES = [f"r{c // 9 + 1}c{c % 9 + 1}" for c in range(81)]
