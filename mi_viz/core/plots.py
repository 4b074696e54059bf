"""Domain-free plotly pictures: the MI map of a state (the app draws it for every domain)."""

from __future__ import annotations

import io
import textwrap
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .samplers import SAMPLERS

MI_COLORSCALE = "Viridis"
ENTROPY_COLORSCALE = "Blues"


# The marks every state figure and map shares: this step's batch and the focused position. "safe" is
# Okabe-Ito's blue and orange (told apart by every colour vision, and in greyscale: one dark, one
# light); "classic" the plotly orange and red. The palette is per session: a ContextVar the app
# sets at the top of every page run (Streamlit runs each session's script in its own thread).
MARKS = {  # batch, focus, and the other positions' bars (which must not look like the batch)
    "classic": {"batch": "#ff7f0e", "focus": "#d62728", "rest": "#1f77b4"},
    "safe": {"batch": "#0072B2", "focus": "#E69F00", "rest": "#aaaaaa"},
}
PALETTE_NAME: ContextVar[str] = ContextVar("mi_viz_palette", default="classic")


def marks() -> dict[str, str]:
    """{"batch": colour, "focus": colour} of the current palette."""
    return MARKS[PALETTE_NAME.get()]


VECTOR = (".svg", ".pdf")  # figures for papers: matplotlib writes them as vectors


def save_figure(fig: Any, path: str | Path, dpi: int) -> None:
    """A matplotlib figure by its path's suffix: .svg or .pdf as vectors (for papers); otherwise a
    256-colour PNG (line charts and heatmaps look the same at about a third of the bytes, and
    committed figures are part of the tree a GPU lease must carry)."""
    from PIL import Image

    if Path(path).suffix.lower() in VECTOR:
        fig.savefig(path, format=Path(path).suffix[1:].lower())
        return
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    quantize_png(Image.open(buf), path)


def quantize_png(image: Any, path: str | Path) -> None:
    """An image (PIL) saved as a 256-colour palette PNG, no dithering (flat chart colours stay flat)."""
    from PIL import Image

    q = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    q.save(path, format="PNG", optimize=True)


def square_layout(fig: go.Figure, width: int, height: int, title: str, bottom: int, **layout: Any) -> go.Figure:
    """The frame every pairwise map shares: white, a small title, margins for the tick names."""
    fig.update_layout(
        width=width,
        height=height,
        margin=dict(l=50, r=10, t=34, b=bottom),
        title=dict(text=title, font=dict(size=13)),
        plot_bgcolor="white",
        font=dict(color="#222"),
        **layout,
    )
    fig.update_xaxes(tickfont=dict(size=11, color="#222"))  # legible on a laptop screen: not 9 px pale grey
    fig.update_yaxes(tickfont=dict(size=11, color="#222"))
    return fig


def cell_markers(x: Any, y: Any, hover: list[str], marker: dict, name: str) -> go.Scatter:
    """A state figure's clickable cells: square markers whose customdata is the position (the
    viewer's click-to-focus reads it), one hover text per cell."""
    return go.Scatter(
        x=x,
        y=y,
        mode="markers",
        customdata=np.arange(len(hover)),
        hovertext=hover,
        hoverinfo="text",
        marker=dict(symbol="square", **marker),
        name=name,
        showlegend=False,
    )


PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
SAMPLER_COLORS = {  # every sampler of the registry its own colour, in every chart (the first six as before)
    "sequential": "#1f77b4",
    "topk": "#ff7f0e",
    "eb": "#2ca02c",
    "mi": "#d62728",
    "mi-zero": "#9467bd",
    "mi-gt": "#8c564b",
    "mi-tc": "#e377c2",
    "mi-cap": "#7f7f7f",
    "mi-pairs": "#bcbd22",
    "threshold": "#17becf",
    "margin": "#393b79",
    "klass": "#8c6d31",
    "dilated": "#637939",
    "dawn": "#000000",
    "demask": "#e6550d",
    "demask-gt": "#843c39",
    # the revisers: mi-revise a purple of its own, the field's in greens and teal, LLaDA's blocks grey-blue
    "mi-revise": "#7b3294",
    "mi-revise-gt": "#c2a5cf",
    "remdm": "#1b7837",
    "navira": "#01665e",
    "llada": "#6a7fa8",
}


def sampler_color(curve: str) -> str:
    """One colour per sampler (a curve's first word), the same in every chart (this sweep, committed,
    paper); a sampler outside the registry's list gets one of the palette's by its name."""
    base = curve.split(" ")[0]
    return SAMPLER_COLORS.get(base) or PALETTE[sum(map(ord, base)) % len(PALETTE)]


Z90 = 1.645  # a point's interval in the sweep charts: 90 %, as every paired interval the project reports


def point_interval(row: dict, metric: str) -> float | None:
    """Half the 90 % interval of a sweep row's mean: from its standard error column (pll -> pll_se), or,
    for a share of n inputs (solved_frac), the binomial one; None when the row carries neither."""
    se = row.get(f"{metric}_se")
    try:
        if se not in (None, ""):
            return Z90 * float(se)
        if metric.endswith("_frac") and row.get("n") not in (None, ""):
            p, n = float(row[metric]), float(row["n"])
            return Z90 * (p * (1 - p) / n) ** 0.5 if n > 0 else None
    except (TypeError, ValueError):
        return None
    return None


@dataclass(frozen=True)
class SweepStyle:
    """What a sweep's chart draws: the metric against passes, its scale and axis name, and the paper's
    points ([{"method", "avg_passes", metric}], black crosses) under their label. A domain's CLI names
    it as a dict (Task.plot: these keys)."""

    metric: str = "solved_frac"
    scale: float = 100.0
    ylabel: str = "solved (%)"
    paper: list[dict] | None = None
    paper_label: str = "paper"


SOLVE_RATE = SweepStyle()  # Sudoku's: the share of puzzles solved, in %


def sweep_figure(
    curves: dict, style: SweepStyle, title: str, height: int = 450, markers: list[dict] | None = None
) -> go.Figure:
    """style.metric against average passes. curves: {label suffix: [rows]} (e.g. {"this sweep": rows,
    "committed": rows}); each row has sampler / lam / scan (sweep_family groups them), avg_passes
    and the metric. A family with one point (sequential) is a marker, not a line; dotted lines
    for every source but the first; each point with its 90 % interval where its row says it
    (point_interval). markers: live points (a star each, with an interval)."""
    metric, ylabel, paper, scale, paper_label = style.metric, style.ylabel, style.paper, style.scale, style.paper_label
    fig = go.Figure()
    for n, (source, rows) in enumerate(curves.items()):
        fams: dict[str, list] = {}
        for r in rows:
            fams.setdefault(sweep_family(r), []).append(r)
        seen: dict[str, int] = {}  # settings of one sampler (mi lam=1, mi lam=10): its colour, other dashes
        for fam, rs in fams.items():
            rs = sorted(rs, key=lambda r: float(r["avg_passes"]))
            nth = seen[fam.split(" ")[0]] = seen.get(fam.split(" ")[0], -1) + 1
            dash = ("solid", "dash", "dashdot", "longdash")[nth % 4] if n == 0 else "dot"
            half = [point_interval(r, metric) for r in rs]
            bars = [abs(scale) * h for h in half if h is not None]
            fig.add_trace(
                go.Scatter(
                    x=[float(r["avg_passes"]) for r in rs],
                    y=[scale * float(r[metric]) for r in rs],
                    error_y=dict(type="data", array=bars, thickness=1, width=3) if len(bars) == len(rs) else None,
                    mode="markers" if len(rs) == 1 else "lines+markers",
                    name=f"{fam} ({source})" if source else fam,
                    line=dict(color=sampler_color(fam), dash=dash),
                    marker=dict(
                        color=sampler_color(fam),
                        size=9 if len(rs) == 1 else 6,
                        symbol="circle" if n == 0 else "diamond",
                    ),
                    opacity=1.0 if n == 0 else 0.6,
                )
            )
    if paper:
        fig.add_trace(
            go.Scatter(
                x=[p["avg_passes"] for p in paper],
                y=[scale * p[metric] for p in paper],
                mode="markers",
                marker=dict(symbol="x", size=10, color="black"),
                name=paper_label,
                text=[p["method"] for p in paper],
            )
        )
    for m in markers or []:  # live points: {label, family, avg_passes, y, lo, hi} (y, lo, hi already scaled)
        fig.add_trace(
            go.Scatter(
                x=[m["avg_passes"]],
                y=[m["y"]],
                error_y=dict(type="data", symmetric=False, array=[m["hi"] - m["y"]], arrayminus=[m["y"] - m["lo"]]),
                mode="markers",
                marker=dict(
                    symbol="star", size=15, color=sampler_color(m["family"]), line=dict(width=1, color="black")
                ),
                name=m["label"],
            )
        )
    # every trace named: the legend to the right, one entry a line, scrolling past the plot's height
    fig.update_layout(
        xaxis_title="average backbone passes",
        yaxis_title=ylabel,
        height=height,
        title=title,
        legend=dict(x=1.02, y=1, xanchor="left", yanchor="top", font=dict(size=11)),
        margin=dict(r=10),
    )
    return fig


def order_figure(orders: dict[str, np.ndarray], kind: str, labels: list[str], title: str) -> go.Figure:
    """Decode order averaged over a sweep's inputs (core.order.order_map), one per setting: a 9 x 9
    board each (kind "board") or one row a setting over the positions (a track); colour: the mean
    share of the decode at which the position was revealed (early purple, late yellow)."""
    names = list(orders)
    hover = "%{customdata}<br>revealed at %{z:.0%} of the decode<extra>%{meta}</extra>"
    if kind == "board":
        cols = min(4, len(names))
        rows = -(-len(names) // cols)
        titles = [textwrap.fill(n, 26).replace("\n", "<br>") for n in names]  # a long setting on two lines
        fig = make_subplots(rows=rows, cols=cols, subplot_titles=titles, horizontal_spacing=0.03, vertical_spacing=0.1)
        for k, name in enumerate(names):
            fig.add_trace(
                go.Heatmap(
                    z=np.asarray(orders[name]).reshape(9, 9),
                    customdata=np.asarray(labels).reshape(9, 9),
                    meta=name,
                    hovertemplate=hover,
                    colorscale=MI_COLORSCALE,
                    zmin=0,
                    zmax=1,
                    showscale=k == 0,
                    colorbar={"title": "share", "tickformat": ".0%"},
                ),
                row=k // cols + 1,
                col=k % cols + 1,
            )
        fig.update_yaxes(autorange="reversed", showticklabels=False)
        fig.update_xaxes(showticklabels=False)
        for k in range(len(names)):  # each board square, whatever the page's width (never a 9 x 9 stretched flat)
            fig.update_yaxes(scaleanchor=f"x{k + 1 if k else ''}", scaleratio=1, row=k // cols + 1, col=k % cols + 1)
        fig.update_layout(title=title, height=230 * rows + 70, margin={"t": 70, "l": 10, "r": 10, "b": 10})
        return fig
    z = np.stack([np.asarray(orders[n], dtype=np.float64) for n in names])  # (S, L)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=list(range(1, z.shape[1] + 1)),
            y=names,
            customdata=np.tile(np.asarray(labels), (len(names), 1)),
            meta=names,
            hovertemplate="%{y}: %{customdata}<br>revealed at %{z:.0%} of the decode<extra></extra>",
            colorscale=MI_COLORSCALE,
            zmin=0,
            zmax=1,
            colorbar={"title": "share", "tickformat": ".0%"},
        )
    )
    fig.update_layout(
        title=title, height=120 + 28 * len(names), xaxis_title="position", margin={"t": 50, "l": 10, "r": 10, "b": 40}
    )
    return fig


def timeline_figure(traces: dict, families: dict, title: str, ylabel: str) -> go.Figure:
    """Positions decoded against passes, one line per decode: traces {name: Trace},
    families {name: sampler name} (its colour)."""
    fig = go.Figure()
    for name, tr in traces.items():
        filled = np.cumsum([len(s.selected) - len(s.remasked) for s in tr.steps])  # a remask takes one back
        fig.add_trace(
            go.Scatter(
                x=list(range(1, len(filled) + 1)),
                y=filled,
                mode="lines+markers",
                name=name,
                line=dict(color=sampler_color(families[name])),
            )
        )
    fig.update_layout(title=title, xaxis_title="pass", yaxis_title=ylabel, height=320)
    return fig


def sweep_family(row: dict) -> str:
    """The curve a sweep row belongs to: the sampler, the parameters its registry entry names its
    curves by (SamplerSpec.curve: lambda for most, the cap k for mi-cap, whose lambda moves along
    it), and the scan rule when not the default. A curve that lambda moves along keeps its
    lambda-0 rows (no MI read at all: the ablation) on a curve of their own."""

    def given(p: str) -> bool:
        v = row.get(p)
        return v not in (None, "") and v == v  # v == v: not NaN (pandas rows)

    fam = row["sampler"]
    names = SAMPLERS[fam].curve if fam in SAMPLERS else ("lam",)
    key = fam + "".join(f" {p}={float(row[p]):g}" for p in names if given(p))
    if "lam" not in names and given("lam") and float(row["lam"]) == 0:
        key += " lam=0"
    return key + (" (skip)" if row.get("scan") == "skip" else "")


def plot_sweep(
    summaries: list[dict],
    png_path: str | Path,
    html_path: str | Path,
    title: str = "solve rate vs average passes",
    style: SweepStyle = SOLVE_RATE,
) -> None:
    """Metric-vs-passes curves, one line per sampler family (PNG via matplotlib, HTML via plotly)."""
    metric, scale, ylabel, paper, paper_label = style.metric, style.scale, style.ylabel, style.paper, style.paper_label
    fams: dict[str, list[dict]] = {}
    for s in summaries:
        fams.setdefault(sweep_family(s), []).append(s)
    if png_path:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4.5))
        seen: dict[str, int] = {}  # settings of one sampler (mi lam=1, mi lam=4): its colour, other dashes
        for fam, ss in fams.items():
            ss = sorted(ss, key=lambda s: s["avg_passes"])
            nth = seen[fam.split(" ")[0]] = seen.get(fam.split(" ")[0], -1) + 1
            ax.plot([s["avg_passes"] for s in ss], [scale * s[metric] for s in ss], "o", label=fam, ms=4,
                    color=sampler_color(fam), linestyle=("-", "--", ":", "-.")[nth % 4])  # fmt: skip
        if paper:
            ax.scatter(
                [p["avg_passes"] for p in paper],
                [scale * p[metric] for p in paper],
                marker="x",
                c="k",
                label=paper_label,
                zorder=5,
            )
        ax.set_xlabel("average backbone passes")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        save_figure(fig, png_path, dpi=130)
        plt.close(fig)
    if html_path:  # the app's chart (core.plots.sweep_figure), as a file
        fig = sweep_figure({"": summaries}, style, title)
        fig.write_html(html_path, include_plotlyjs="cdn")  # small file; the app shows the same chart offline


def pca_figure(sets: dict, shown: list[str], title: str, axes: tuple[str, str] = ("PC1", "PC2")) -> go.Figure:
    """Generated sets beside natural ones in a 2-D projection (the paper's Figure 3): sets
    {name: {"pc": [[x, y], ...]}}, the first natural, drawn grey under the others."""
    fig = go.Figure()
    names = list(sets)
    for k, name in enumerate([names[0]] + [n for n in shown if n != names[0]]):
        z = np.asarray(sets[name]["pc"], dtype=float)
        fig.add_trace(
            go.Scattergl(
                x=z[:, 0],
                y=z[:, 1],
                mode="markers",
                name=name,
                marker=dict(size=4, color="#bbbbbb" if k == 0 else sampler_color(name.split()[0]), opacity=0.8),
            )
        )
    fig.update_layout(
        title=dict(text=title, font=dict(size=13)),
        xaxis_title=axes[0],
        yaxis_title=axes[1],
        height=460,
        legend=dict(orientation="h", y=-0.2),
        margin=dict(l=50, r=10, t=40, b=40),
    )
    return fig
