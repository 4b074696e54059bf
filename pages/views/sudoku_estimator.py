"""The Sudoku MI estimator page: the head against the exact map on held-out decode states (the
committed report, or computed now), led by its figure; what the MI says about the rules folded below."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from mi_viz.core.mi_report import (
    ReportStates,
    directional_agreement,
    entropy_bounds,
    head_at_pairs,
    metrics,
    mi_report,
    read_pairs,
)
from mi_viz.domains.sudoku import RELATION_NAMES
from mi_viz.domains.sudoku import board as S

from ..kit import caches
from ..kit.models import models_or_error
from ..kit.runtime import RESULTS
from ..kit.widgets import chart, report_metrics, tv_measure
from .base import View
from .sudoku_sets import PUZZLE_SETS, SHIPPED_HEAD, load_puzzle_set

RELATION_COLORS = {"unrelated": "#9e9e9e", "same row": "#1f77b4", "same column": "#ff7f0e", "same box": "#2ca02c"}
LOG_FLOOR = 1e-6  # nats: the log axes' floor (ground truth prunes at eps 1e-3, so smaller MI is noise)


def estimator_page(view: View, key: str) -> None:
    """Head vs ground truth on held-out decode states (the committed report, or computed now), and
    what the MI says about the rules."""
    b = view.backbones()[0]  # the Sudoku view has one MDM
    head_path = view.head_path(b)
    loaded = models_or_error(b, head_path)
    if loaded is None or loaded[1] is None:
        return
    model, head = loaded
    dom = b.dom()
    pairs_file, report_file = RESULTS / "sudoku" / "mi_report_pairs.npz", RESULTS / "sudoku" / "mi_report.json"
    src = st.radio(
        "Data", ["Committed report (held-out hard test states)", "Compute now"], key=f"{key}_src", horizontal=True
    )
    pt = tokens = summary = None
    if src.startswith("Committed"):
        if pairs_file.exists() and report_file.exists():
            report_pairs, report_tokens = read_pairs(pairs_file)
            pt, tokens = report_pairs, report_tokens
            summary = json.loads(report_file.read_text())
            if Path(head_path or "").resolve() != SHIPPED_HEAD.resolve():
                # the report is the shipped head's: the same states and truth, this head's map
                est = caches.cached(
                    "report_estimates", head_path, lambda: head_at_pairs(model, head, report_tokens, report_pairs), 4
                )
                pt = dataclasses.replace(report_pairs, est=est)
                summary = {"n_states": summary["n_states"], "uncertain_nats": summary.get("uncertain_nats", 0.1)}
                st.caption(
                    "The committed report's states and ground truth, read by the head chosen in the sidebar "
                    "(the report's own rows, masked solutions and timings are the shipped head's)."
                )
        else:
            st.info("No committed report yet: run `python -m mi_viz mi-report sudoku ...` (see README) or compute now.")
    else:
        c1, c2 = st.columns(2)
        n = c1.slider("States (one per puzzle, random decode step)", 2, 40, 8, key=f"{key}_n")
        set_name = c2.selectbox("Puzzles", list(PUZZLE_SETS), key=f"{key}_set")
        if st.button("Compute", key=f"{key}_run"):
            rows = load_puzzle_set(str(PUZZLE_SETS[set_name]))[:n]
            bar = st.progress(0.0, text=f"Ground truth for {n} states ...")
            start = dom.encode([S.parse_board(r["puzzle"]) for r in rows])
            rep = mi_report(
                model,
                head,
                ReportStates(start, n),
                relations=dom.relations(81)[0],
                progress=lambda d, total: bar.progress(d / total, text=f"Ground truth: state {d} of {total}"),
            )
            bar.empty()
            st.session_state[key] = (rep.summary, rep.pairs, rep.tokens.numpy())
        if key in st.session_state:
            summary, pt, tokens = st.session_state[key]
    if pt is None:
        return
    assert summary is not None and tokens is not None
    m = metrics(pt, tokens, dom.mask_id) if "pearson" not in summary else summary
    n_states = summary.get("n_states", len(tokens))
    # the page leads with its figure and one plain sentence; the rest is folded below
    st.markdown(
        f"**The head predicts every pair's MI in one pass; on {n_states} held-out states it matches the exact "
        f"map at Pearson {m['pearson']:.2f}.** Each dot is a pair of masked cells (the dashed line: perfect "
        "agreement), coloured by how the rules relate the two cells."
    )
    rel = np.array(RELATION_NAMES)[pt.relation]
    idx = np.random.default_rng(0).choice(len(pt.gt), size=min(6000, len(pt.gt)), replace=False)
    left, right = st.columns([3, 1])
    with left:
        fig = go.Figure()
        for r in RELATION_NAMES:
            sel = idx[rel[idx] == r]
            fig.add_trace(
                go.Scattergl(
                    x=pt.gt[sel],
                    y=pt.est[sel],
                    mode="markers",
                    name=r,
                    marker=dict(size=4, opacity=0.5 if r == "unrelated" else 0.7, color=RELATION_COLORS[r]),
                )
            )
        top = float(max(pt.gt.max(), pt.est.max()))
        fig.add_trace(
            go.Scatter(x=[0, top], y=[0, top], mode="lines", line=dict(color="grey", dash="dash"), name="y = x")
        )
        axes = dict(xaxis_title="ground truth (nats)", yaxis_title="head (nats)", height=430)
        chart(fig, f"{key}_scatter", dict(title="Estimated vs ground-truth MI (masked pairs)", **axes))
    with right:
        right.metric("states", n_states)
        right.metric("Pearson", f"{m['pearson']:.3f}")
        right.metric("Spearman", f"{m['spearman']:.3f}")
        right.metric(
            "top-pair recall",
            f"{m['top_pair_recall']:.3f}",
            help="share of the truth's largest pairs the head also ranks largest",
        )
    with st.expander("More: does the MI recover the rules, what it costs, and the caveats"):
        estimator_details(summary, m, pt, rel, key)


def tv_head_report(key: str) -> None:
    """DEMASK's TV head against exact TV influence on the MI report's held-out states (the committed
    `mi-report --target tv`): below the MI head's figure, folded, so the two heads read side by side."""
    path = RESULTS / "sudoku" / "demask" / "tv_report.json"
    with st.expander("DEMASK's TV head against exact TV influence (the same held-out states)"):
        if not path.exists():
            st.info("No committed TV-head report yet (`make results/sudoku/demask/tv_report.json`).")
            return
        rep = json.loads(path.read_text())
        report_metrics(rep, ("head / one pass", f"{100 * rep['head_over_forward']:.1f} %"))
        st.caption(
            f"`checkpoints/sudoku_tv_head` reads, in one pass, {tv_measure('cell')} "
            f"({rep['gt_passes_per_state']:.0f} a state). Over "
            f"{rep['n_pairs']:,} masked pairs of {rep['n_states']} held-out hard test states; mean absolute error "
            f"{rep['mae']:.4f}; maps anyone could draw: separation only (Pearson "
            f"{rep['pearson_baseline_separation']:.3f}), entropies and separation "
            f"({rep['pearson_baseline_entropy_separation']:.3f}). The rule that reads it: the comparison page's "
            "`demask` rows."
        )


def estimator_details(summary: dict, m: dict, pt, rel, key: str) -> None:
    """The estimator page's folded part: structure AUROC (does the MI rank pairs the rules relate
    above unrelated ones), the rules on masked solutions, timing, MI by relation, asymmetry."""
    c = st.columns(2)
    c[0].metric("structure AUROC (true MI)", f"{m['auroc_structure_gt']:.3f}")
    c[1].metric("structure AUROC (head)", f"{m['auroc_structure_est']:.3f}")
    st.caption(
        "Structure AUROC: how well a map ranks pairs of cells that share a row, column or box above unrelated "
        "pairs (1 = every related pair first; 0.5 = no better than chance)."
    )
    if "auroc_structure_gt_uncertain" in m:
        st.caption(
            f"Structure AUROC over the {m['n_pairs_uncertain']:,} pairs of two uncertain cells "
            f"(both entropies > {summary.get('uncertain_nats', 0.1)} nats): true MI "
            f"{m['auroc_structure_gt_uncertain']:.3f}, head {m['auroc_structure_est_uncertain']:.3f}."
        )
    if "structure_by_mask_ratio" in summary:
        st.markdown(
            "**Does MI recover the rules?** Structure AUROC on randomly masked *solutions* "
            "(valid boards: the rules are the only dependence left), by masking ratio:"
        )
        st.dataframe(pd.DataFrame(summary["structure_by_mask_ratio"]).T.rename_axis("mask ratio"))
    if "gt_seconds_per_state" in summary:
        st.caption(
            f"Ground truth: {summary['gt_passes_per_state']} passes and {summary['gt_seconds_per_state']:.2f}s "
            f"per state; head: {summary['head_seconds_per_state'] * 1000:.1f} ms "
            f"({100 * summary['head_over_forward']:.1f}% of one backbone pass). Both timed cold, one state at a "
            "time right after its ground truth, as this page runs them; `benchmarks/latency.py` times them warm "
            "and interleaved, the figure the 10% target reads."
        )
    which = st.radio("Map", ["ground truth", "head"], horizontal=True, key=f"{key}_which")
    vals = pt.gt if which == "ground truth" else pt.est
    fig = go.Figure()
    for r in RELATION_NAMES:  # zeros (exact independence) sit on the floor, not at -infinity
        fig.add_trace(
            go.Box(y=np.maximum(vals[rel == r], LOG_FLOOR), name=r, boxpoints=False, marker_color=RELATION_COLORS[r])
        )
    fig.update_layout(
        title=f"MI by relation ({which}): what the model believes about the rules",
        yaxis_title=f"MI (nats; values below {LOG_FLOOR:g} drawn at it)",
        yaxis_type="log",
        yaxis_range=[np.log10(LOG_FLOOR), np.log10(max(float(vals.max()), 10 * LOG_FLOOR)) + 0.1],
        height=430,
    )
    chart(fig, f"{key}_box")
    df = pd.DataFrame({"relation": rel, "gt": pt.gt, "est": pt.est})
    st.dataframe(
        df.groupby("relation")
        .agg(pairs=("gt", "size"), mean_gt=("gt", "mean"), mean_head=("est", "mean"), median_gt=("gt", "median"))
        .round(4)
    )
    fig = go.Figure(go.Histogram(x=pt.asym, nbinsx=60))
    title = "Asymmetry |I(i->j) - I(j->i)| of the ground truth: the model's self-consistency"
    chart(fig, f"{key}_asym", dict(title=title, xaxis_title="nats", yaxis_type="log", height=320))
    st.caption(
        f"The truth's two directions agree at Pearson {directional_agreement(pt):.3f} over these pairs: where they "
        "disagree the model is not one consistent joint, and the symmetrised map is their mean (docs/mi.md)."
    )
    if pt.hmin is not None:
        bnd = entropy_bounds(pt.gt, pt.est, pt.hmin)
        st.caption(
            f"The map is the mean of I(i->j) <= H_i and I(j->i) <= H_j, so it can exceed min(H_i, H_j) where the "
            f"model is not a consistent joint: {100 * bnd['share_above_min_entropy']:.1f}% of these pairs do, and they "
            f"hold {100 * bnd['head_sq_error_share_above_min']:.0f}% of the head's squared error "
            f"({'this head never passes' if bnd['head_above_min_entropy'] == 0 else 'this head can pass'} the min; "
            f"docs/mi.md, excess). Pearson without them: {bnd['pearson_pairs_within_min']:.3f}."
        )
