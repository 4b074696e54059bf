"""Sampler comparison: one puzzle, several samplers on a shared timeline; and sweeps."""

import io

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from mi_viz.core.bench import parse_grid, run_bench, sweep_family
from mi_viz.core.samplers import SamplerConfig
from mi_viz.domains.sudoku import PAPER_TABLE1
from mi_viz.domains.sudoku import board as S
from mi_viz.domains.sudoku.drawing import board_figure
from pages._shared import PUZZLE_SETS, RESULTS, SUDOKU, decode_trace, load_puzzle_set, models_or_error, puzzle_picker

st.title("Sampler comparison")
loaded = models_or_error()
if loaded is None:
    st.stop()
model, head = loaded

MI_DEFAULT = SamplerConfig("mi")
MI_DEFAULT_LABEL = f"MI gamma={MI_DEFAULT.gamma:g} lam={MI_DEFAULT.lam:g} (default)"
PRESETS = {
    "sequential": SamplerConfig("sequential"),
    "top-k k=4": SamplerConfig("topk", k=4),
    "EB gamma=1e-4": SamplerConfig("eb", gamma=1e-4),
    "EB gamma=0.01": SamplerConfig("eb", gamma=0.01),
    "EB gamma=0.2": SamplerConfig("eb", gamma=0.2),
    MI_DEFAULT_LABEL: MI_DEFAULT,
    "MI gamma=0.1 lam=0.25": SamplerConfig("mi", gamma=0.1, lam=0.25),
    "MI with MI=0 (ablation) gamma=0.01": SamplerConfig("mi-zero", gamma=0.01),
    "MI gamma=0.3 lam=0 (paper gamma)": SamplerConfig("mi", gamma=0.3, lam=0.0),
}
if head is None:
    PRESETS = {k: v for k, v in PRESETS.items() if v.needs != "mi"}

tab1, tab2 = st.tabs(["Same puzzle, side by side", "Sweep"])
with tab1:
    with st.sidebar:
        st.subheader("Puzzle")
        picked = puzzle_picker("cmp")
    chosen = st.multiselect(
        "Samplers",
        list(PRESETS),
        default=[k for k in PRESETS if k in ("sequential", "EB gamma=1e-4", MI_DEFAULT_LABEL)],
        key="cmp_samplers",
    )
    if picked is None or not chosen:
        st.info("Choose a puzzle and at least one sampler.")
    else:
        board, solution, label = picked
        traces = {name: decode_trace(board, PRESETS[name]) for name in chosen}
        longest = max(len(tr.steps) for tr in traces.values())
        t = st.slider("Shared step (pass)", 0, longest, min(5, longest), key="cmp_step")
        cols = st.columns(min(3, len(chosen)))
        rows = []
        for k, (name, tr) in enumerate(traces.items()):
            tt = min(t, len(tr.steps))
            digits = [0 if v == 9 else v + 1 for v in tr.tokens_at(tt)]
            final = [0 if v == 9 else v + 1 for v in tr.final]
            wrong = [i for i in range(81) if solution is not None and digits[i] and digits[i] != solution[i]]
            sel = tr.steps[tt - 1].selected if 0 < tt <= len(tr.steps) else []
            with cols[k % len(cols)]:
                st.plotly_chart(
                    board_figure(
                        digits,
                        [v != 0 for v in board],
                        selected=sel,
                        wrong=wrong,
                        size=300,
                        title=f"{name}: pass {tt}/{len(tr.steps)}",
                    ),
                    key=f"cmp_board_{k}",
                    config={"displayModeBar": False},
                )
            rows.append(
                {
                    "sampler": name,
                    "passes": len(tr.steps),
                    "solved": S.is_solution(final, board),
                    "wrong cells at this step": len(wrong),
                    "max cells per pass": max(len(s.selected) for s in tr.steps),
                }
            )
        st.dataframe(pd.DataFrame(rows), hide_index=True)
        fig = go.Figure()
        for name, tr in traces.items():
            filled = np.cumsum([len(s.selected) for s in tr.steps])
            fig.add_trace(go.Scatter(x=list(range(1, len(filled) + 1)), y=filled, mode="lines+markers", name=name))
        fig.update_layout(title="Cells filled vs passes", xaxis_title="pass", yaxis_title="cells filled", height=320)
        st.plotly_chart(fig, key="cmp_timeline")

with tab2:
    st.markdown(
        "Decode N puzzles of a set with a grid of samplers; each point is one setting. "
        "Grid syntax: `sampler:param=v1,v2:param=v1; ...`."
    )
    c1, c2 = st.columns(2)
    src = c1.selectbox("Puzzle set", list(PUZZLE_SETS)[:3], key="sw_set")
    n = c2.slider("N puzzles (first N of the set)", 5, 200, 20, key="sw_n")
    default_grid = "sequential; topk:k=4; eb:gamma=1e-4,0.01; mi-zero:gamma=0.01,0.1" + (
        "; mi:gamma=0.01,0.1:lam=0.25" if head else ""
    )
    grid = st.text_input("Grid", default_grid, key="sw_grid")
    if st.button("Run sweep", key="sw_run"):
        try:
            cfgs = parse_grid(grid)
        except ValueError as e:
            st.error(f"Bad grid: {e}")
            cfgs = []
        if any(c.needs == "mi" for c in cfgs) and head is None:
            st.error("The grid uses 'mi' but no MI head is loaded.")
            cfgs = []
        rows = load_puzzle_set(str(PUZZLE_SETS[src]))[:n]
        puzzles = [S.parse_board(r["puzzle"]) for r in rows]
        bar = st.progress(0.0, text="sweep")
        out = []
        for k, c in enumerate(cfgs):
            bar.progress(k / len(cfgs), text=f"{c.label()} ({k + 1}/{len(cfgs)})")
            out.append(run_bench(SUDOKU, model, puzzles, c, head if c.needs == "mi" else None).summary)
        bar.empty()
        st.session_state.sw_result = out
    result = st.session_state.get("sw_result")
    committed = RESULTS / "sudoku" / "test_hard" / "sweep.csv"
    fig = go.Figure()
    if result:
        df = pd.DataFrame(result)
        for fam, g in df.groupby(df.apply(sweep_family, axis=1)):
            g = g.sort_values("avg_passes")
            fig.add_trace(
                go.Scatter(x=g.avg_passes, y=100 * g.solved_frac, mode="lines+markers", name=f"{fam} (this sweep)")
            )
        st.dataframe(df, hide_index=True)
        buf = io.StringIO()
        df.to_csv(buf, index=False)
        st.download_button("Download CSV", buf.getvalue(), file_name="sweep.csv", mime="text/csv")
    if committed.exists():
        cd = pd.read_csv(committed)
        for fam, g in cd.groupby(cd.apply(sweep_family, axis=1)):
            g = g.sort_values("avg_passes")
            fig.add_trace(
                go.Scatter(
                    x=g.avg_passes,
                    y=100 * g.solved_frac,
                    mode="lines",
                    line=dict(dash="dot"),
                    name=f"{fam} (committed, 1,000 hard)",
                    opacity=0.6,
                )
            )
    fig.add_trace(
        go.Scatter(
            x=[p["avg_passes"] for p in PAPER_TABLE1],
            y=[100 * p["solved_frac"] for p in PAPER_TABLE1],
            mode="markers",
            marker=dict(symbol="x", size=10, color="black"),
            name="paper Table 1",
            text=[p["method"] for p in PAPER_TABLE1],
        )
    )
    fig.update_layout(
        xaxis_title="average passes per puzzle",
        yaxis_title="solved (%)",
        height=450,
        title="Solve rate vs average passes",
    )
    st.plotly_chart(fig, key="sw_plot")
