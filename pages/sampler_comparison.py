"""Sampler comparison: one puzzle, several samplers on a shared timeline; and sweeps."""

import io

import numpy as np
import pandas as pd
import streamlit as st
import torch

from mi_viz.core.bench import run_bench
from mi_viz.core.plots import sweep_figure, timeline_figure
from mi_viz.core.samplers import SamplerConfig, config_for
from mi_viz.domains.sudoku import PAPER_TABLE1
from mi_viz.domains.sudoku import board as S
from mi_viz.domains.sudoku.drawing import board_figure
from pages._shared import RESULTS, through_app
from pages._sudoku import (
    PUZZLE_SETS,
    SUDOKU,
    decode_trace,
    head_path,
    head_picker,
    live_point,
    load_puzzle_set,
    mdm_path,
    models_or_error,
    puzzle_picker,
    show_puzzle_problem,
)
from pages._widgets import grid_or_error, sampler_rows, wilson

through_app()
head_picker()  # the Sudoku pages' MI head (the protein pages read their backbone's own)
st.title("Sampler comparison")
loaded = models_or_error()
if loaded is None:
    st.stop()
model, head = loaded

MI_DEFAULT = config_for("mi", SUDOKU.sampler_defaults)
MI_DEFAULT_LABEL = f"MI gamma={MI_DEFAULT.gamma:g} lam={MI_DEFAULT.lam:g} (default)"
PRESETS = {
    "sequential": SamplerConfig("sequential"),
    "top-k k=4": SamplerConfig("topk", k=4),
    "EB gamma=1e-4": SamplerConfig("eb", gamma=1e-4),
    "EB gamma=0.01": SamplerConfig("eb", gamma=0.01),
    "EB gamma=0.2": SamplerConfig("eb", gamma=0.2),
    MI_DEFAULT_LABEL: MI_DEFAULT,
    "MI gamma=0.3 lam=1 (paper gamma)": SamplerConfig("mi", gamma=0.3, lam=1.0),
    "MI with MI=0 (ablation) gamma=0.04": SamplerConfig("mi-zero", gamma=0.04),
    "MI, release 0.3's rule: mi-pairs gamma=0.01 lam=0.25": SamplerConfig("mi-pairs", gamma=0.01, lam=0.25),
    "Fast-dLLM threshold tau=0.9": SamplerConfig("threshold", tau=0.9),
    "top-2 margin k=4": SamplerConfig("margin", k=4),
}
if head is None:
    PRESETS = {k: v for k, v in PRESETS.items() if not v.needs_head}
# the committed sweep drawn beside a sweep on the same set; a set without one gets none
COMMITTED = {
    "Hard test set (ours, 1,000)": (RESULTS / "sudoku" / "test_hard" / "sweep.csv", "committed, all 1,000 hard"),
    "Kaggle hard/expert (external, 2,000)": (
        RESULTS / "sudoku" / "kaggle" / "sweep.csv",
        "committed, all 2,000 Kaggle",
    ),
}


tab1, tab2 = st.tabs(["Same puzzle, side by side", "Sweep"])
with tab1:
    with st.sidebar:
        st.subheader("Puzzle")
        picked = puzzle_picker("cmp")
    st.caption("Each row is one sampler with its own settings; a slider re-decodes that row only.")
    configs = sampler_rows(
        "cmp", PRESETS, ["sequential", "EB gamma=1e-4", MI_DEFAULT_LABEL], head is not None, SUDOKU.sampler_defaults
    )
    if picked is None:
        show_puzzle_problem("cmp")
    elif not configs:
        st.info("Choose at least one sampler, or type your own settings.")
    else:
        board, solution, label = picked
        traces = {name: decode_trace(board, c) for name, c in configs.items()}
        longest = max(len(tr.steps) for tr in traces.values())
        t = st.slider("Shared pass (the boards after this many passes)", 0, longest, min(5, longest), key="cmp_step")
        cols = st.columns(min(3, len(configs)))
        rows = []
        for k, (name, tr) in enumerate(traces.items()):
            tt = min(t, len(tr.steps))
            digits = list(SUDOKU.decode(torch.tensor([tr.tokens_at(tt)]))[0]) if tt else list(board)
            final = list(SUDOKU.decode(torch.tensor([tr.final]))[0])
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
                    "wrong cells at this pass": len(wrong),
                    "max cells per pass": max(len(s.selected) for s in tr.steps),
                }
            )
        st.dataframe(pd.DataFrame(rows), hide_index=True)
        fig = timeline_figure(traces, {n: c.name for n, c in configs.items()}, "Cells filled vs passes", "cells filled")
        st.plotly_chart(fig, key="cmp_timeline")

with tab2:
    st.markdown(
        "Decode N puzzles of a set with a grid of samplers; each point is one setting. "
        "Grid syntax: `sampler:param=v1,v2:param=v1; ...` (parameters: k for topk; gamma for eb, mi-zero; "
        "gamma, lam, scan for mi, mi-tc, mi-pairs and mi-gt; k, gamma, lam for mi-cap; tau for threshold; "
        "k or tau for margin; tau, kl "
        "for klass; k, d for dilated)."
    )
    c1, c2 = st.columns(2)
    src = c1.selectbox("Puzzle set", list(PUZZLE_SETS), key="sw_set")
    n = c2.slider("N puzzles (first N of the set)", 5, 200, 20, key="sw_n")
    default_grid = "sequential; topk:k=4; eb:gamma=1e-4,0.01; mi-zero:gamma=0.04,0.4" + (
        "; mi:gamma=0.04,0.4:lam=4" if head else ""
    )
    grid = st.text_input("Grid", default_grid, key="sw_grid")
    if st.button("Run sweep", key="sw_run"):
        cfgs = grid_or_error(grid, "Grid", head is not None, SUDOKU.sampler_defaults)
        if cfgs:
            rows = load_puzzle_set(str(PUZZLE_SETS[src]))[:n]
            puzzles = [S.parse_board(r["puzzle"]) for r in rows]
            bar = st.progress(0.0, text="sweep")
            out = []
            for k, c in enumerate(cfgs):
                bar.progress(k / len(cfgs), text=f"{c.label()} ({k + 1}/{len(cfgs)})")
                out.append(run_bench(SUDOKU, model, puzzles, c, head if c.needs_head else None).summary)
            bar.empty()
            st.session_state.sw_result = (src, n, out)
    result = st.session_state.get("sw_result")
    curves = {}
    if result:
        r_src, r_n, out = result
        curves[f"this sweep, {r_n} of {r_src.split(' (')[0]}"] = out
        df = pd.DataFrame(out)
        st.dataframe(df, hide_index=True)
        buf = io.StringIO()
        df.to_csv(buf, index=False)
        st.download_button("Download CSV", buf.getvalue(), file_name="sweep.csv", mime="text/csv")
    shown = result[0] if result else src
    if shown in COMMITTED and COMMITTED[shown][0].exists():
        curves[COMMITTED[shown][1]] = pd.read_csv(COMMITTED[shown][0]).replace({np.nan: None}).to_dict("records")
    paper = PAPER_TABLE1 if shown.startswith("Hard test set") else None
    if not curves:
        st.caption(f"No committed sweep for {shown}: run one to draw it.")
    live = st.toggle(
        "Stars: each compared row's current setting, measured live on the first N puzzles of the set",
        key="sw_live_on",
        help="Off by default: measuring runs every row on N puzzles, which a slider move would wait for.",
    )
    n_live = st.slider("N puzzles behind the stars", 5, 100, 20, key="sw_live", disabled=not live) if live else 0
    markers = []
    if n_live and configs:
        for name, c in configs.items():
            pt = live_point(str(PUZZLE_SETS[shown]), n_live, c.to_dict(), mdm_path(), head_path())
            lo, hi = wilson(pt["solved_frac"], n_live)
            markers.append(
                {
                    "label": f"{name} (now, {n_live} puzzles)",
                    "family": c.name,
                    "avg_passes": pt["avg_passes"],
                    "y": 100 * pt["solved_frac"],
                    "lo": 100 * lo,
                    "hi": 100 * hi,
                }
            )
    st.plotly_chart(
        sweep_figure(
            curves,
            "solved_frac",
            "solved (%)",
            f"Solve rate vs average passes: {shown}",
            paper=paper,
            scale=100.0,
            markers=markers,
        ),
        key="sw_plot",
    )
    if markers:
        st.caption(
            f"Stars: the rows of the first tab at their current settings, on the first {n_live} puzzles of "
            f"{shown.split(' (')[0]}, with a 90 % Wilson interval of the solve rate (a small sample: the "
            "committed curve is the measured front)."
        )
    if paper:
        st.caption("Crosses: the paper's Table 1 (its own 1,000 hard puzzles; ours are a little harder-looking).")
