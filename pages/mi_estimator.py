"""MI estimator: head vs ground truth on held-out states, and what MI says about the rules."""

import dataclasses
import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from mi_viz.core.fidelity import directional_agreement, entropy_bounds, metrics, mi_report, read_pairs
from mi_viz.domains.sudoku import RELATION_NAMES
from mi_viz.domains.sudoku import board as S
from pages._shared import RESULTS, through_app
from pages._sudoku import (
    PUZZLE_SETS,
    SUDOKU,
    head_is_reported,
    head_picker,
    load_puzzle_set,
    models_or_error,
    report_estimates,
)

# the four relation groups, told apart at a glance (unrelated pairs, the bulk, in grey)
RELATION_COLORS = {"unrelated": "#9e9e9e", "same row": "#1f77b4", "same column": "#ff7f0e", "same box": "#2ca02c"}
LOG_FLOOR = 1e-6  # nats: the log axes' floor (ground truth prunes at eps 1e-3, so smaller MI is noise)
PROTEIN_REPORT = RESULTS / "protein" / "mi_report.json"
PROTEIN_PAIRS = RESULTS / "protein" / "mi_report_pairs.npz"


def protein_view():
    """Head vs truth on held-out protein states (the committed protein report), and MI against
    sequence separation: how local the dependence the backbone believes in is."""
    if not (PROTEIN_REPORT.exists() and PROTEIN_PAIRS.exists()):
        st.info(
            "No committed protein MI report yet: it comes with the protein MI head "
            "(`python -m mi_viz mi-report protein --states 100 --out results/protein/mi_report.json "
            "--pairs results/protein/mi_report_pairs.npz`)."
        )
        return
    rep = json.loads(PROTEIN_REPORT.read_text())
    pt, _ = read_pairs(PROTEIN_PAIRS)
    c = st.columns(5)
    c[0].metric("states", rep["n_states"])
    c[1].metric("Pearson", f"{rep['pearson']:.3f}")
    c[2].metric("Spearman", f"{rep['spearman']:.3f}")
    c[3].metric("top-pair recall", f"{rep['top_pair_recall']:.3f}")
    c[4].metric("truth's two directions agree (Pearson)", f"{rep['gt_directional_pearson']:.3f}")
    st.caption(
        f"{rep['n_pairs']:,} masked pairs of {rep['n_states']} held-out states (test split: masked natural "
        f"proteins and states of prompted decodes; {rep['avg_masked']:.1f} masked positions on average). "
        f"Ground truth: {rep['gt_passes_per_state']:.0f} passes and {rep['gt_seconds_per_state']:.1f} s per "
        f"state; head: {100 * rep['head_over_forward']:.1f} % of a pass."
    )
    left, right = st.columns(2)
    sep = np.abs(pt.i - pt.j)
    with left:
        g = np.random.default_rng(0)
        idx = g.choice(len(pt.gt), size=min(6000, len(pt.gt)), replace=False)
        fig = go.Figure(
            go.Scattergl(
                x=pt.gt[idx],
                y=pt.est[idx],
                mode="markers",
                marker=dict(
                    size=4,
                    opacity=0.5,
                    color=np.log2(sep[idx]),
                    colorscale="Viridis",
                    colorbar=dict(title="log2 |i-j|"),
                ),
            )
        )
        top = float(max(pt.gt.max(), pt.est.max()))
        fig.add_trace(
            go.Scatter(x=[0, top], y=[0, top], mode="lines", line=dict(color="grey", dash="dash"), showlegend=False)
        )
        fig.update_layout(
            title="Estimated vs ground-truth MI (masked pairs)",
            xaxis_title="ground truth (nats)",
            yaxis_title="head (nats)",
            height=430,
            showlegend=False,
        )
        st.plotly_chart(fig, key="pmie_scatter")
    with right:
        prof = pd.DataFrame(rep["separation"])
        fig = go.Figure()
        fig.add_trace(go.Bar(x=prof["separation"], y=prof["mean_gt"], name="ground truth"))
        fig.add_trace(go.Bar(x=prof["separation"], y=prof["mean_est"], name="head"))
        fig.update_layout(
            title="Mean MI by sequence separation |i - j|",
            xaxis_title="|i - j|",
            yaxis_title="mean MI (nats)",
            barmode="group",
            height=430,
        )
        st.plotly_chart(fig, key="pmie_sep")
    st.dataframe(prof, hide_index=True)


through_app()
head_picker()  # the Sudoku pages' MI head (the protein pages read their backbone's own)
st.title("MI estimator")
if st.radio("Domain", ["Sudoku", "Proteins"], horizontal=True, key="mie_domain") == "Proteins":
    protein_view()
    st.stop()
loaded = models_or_error()
if loaded is None:
    st.stop()
model, head = loaded
if head is None:
    st.stop()

PAIRS = RESULTS / "sudoku" / "mi_report_pairs.npz"
REPORT = RESULTS / "sudoku" / "mi_report.json"

src = st.radio("Data", ["Committed report (held-out hard test states)", "Compute now"], key="mie_src", horizontal=True)
pt = tokens = summary = None
if src.startswith("Committed"):
    if PAIRS.exists() and REPORT.exists():
        pt, tokens = read_pairs(PAIRS)
        summary = json.loads(REPORT.read_text())
        if not head_is_reported():  # the report is the shipped head's: the same states and truth, this head's map
            pt = dataclasses.replace(pt, est=report_estimates())
            summary = {"n_states": summary["n_states"], "uncertain_nats": summary.get("uncertain_nats", 0.1)}
            st.caption(
                "The committed report's states and ground truth, read by the head chosen in the sidebar "
                "(the report's own rows, masked solutions and timings are the shipped head's)."
            )
    else:
        st.info("No committed report yet: run `python -m mi_viz mi-report sudoku ...` (see README) or compute now.")
else:
    c1, c2 = st.columns(2)
    n = c1.slider("States (one per puzzle, random decode step)", 2, 40, 8, key="mie_n")
    set_name = c2.selectbox("Puzzles", list(PUZZLE_SETS), key="mie_set")
    if st.button("Compute", key="mie_run"):
        rows = load_puzzle_set(str(PUZZLE_SETS[set_name]))[:n]
        bar = st.progress(0.0, text=f"Ground truth for {n} states ...")
        start = SUDOKU.encode([S.parse_board(r["puzzle"]) for r in rows])
        rep = mi_report(
            model,
            head,
            start,
            n,
            relations=SUDOKU.relations(81)[0],
            progress=lambda d, total: bar.progress(d / total, text=f"Ground truth: state {d} of {total}"),
        )
        bar.empty()
        st.session_state.mie = (rep.summary, rep.pairs, rep.tokens.numpy())
    if "mie" in st.session_state:
        summary, pt, tokens = st.session_state.mie

if pt is not None:
    m = metrics(pt, tokens, SUDOKU.mask_id) if summary is None or "pearson" not in summary else summary
    c = st.columns(6)
    c[0].metric("states", summary.get("n_states", len(tokens)))
    c[1].metric("Pearson", f"{m['pearson']:.3f}")
    c[2].metric("Spearman", f"{m['spearman']:.3f}")
    c[3].metric("top-pair recall", f"{m['top_pair_recall']:.3f}")
    c[4].metric("structure AUROC (true MI)", f"{m['auroc_structure_gt']:.3f}")
    c[5].metric("structure AUROC (head)", f"{m['auroc_structure_est']:.3f}")
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
            f"({100 * summary['head_over_forward']:.1f}% of one backbone pass). Both timed cold, "
            f"one state at a time right after its ground truth, as this page runs them; "
            f"`benchmarks/latency.py` times them warm and interleaved, the figure the 10% target reads."
        )
    rel = np.array(RELATION_NAMES)[pt.relation]
    g = np.random.default_rng(0)
    idx = g.choice(len(pt.gt), size=min(6000, len(pt.gt)), replace=False)
    left, right = st.columns(2)
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
        fig.update_layout(
            title="Estimated vs ground-truth MI (masked pairs)",
            xaxis_title="ground truth (nats)",
            yaxis_title="head (nats)",
            height=430,
        )
        st.plotly_chart(fig, key="mie_scatter")
    with right:
        which = st.radio("Map", ["ground truth", "head"], horizontal=True, key="mie_which")
        vals = pt.gt if which == "ground truth" else pt.est
        fig = go.Figure()
        for r in RELATION_NAMES:  # zeros (exact independence) sit on the floor, not at -infinity
            y = np.maximum(vals[rel == r], LOG_FLOOR)
            fig.add_trace(go.Box(y=y, name=r, boxpoints=False, marker_color=RELATION_COLORS[r]))
        fig.update_layout(
            title=f"MI by relation ({which}): what the model believes about the rules",
            yaxis_title=f"MI (nats; values below {LOG_FLOOR:g} drawn at it)",
            yaxis_type="log",
            yaxis_range=[np.log10(LOG_FLOOR), np.log10(max(float(vals.max()), 10 * LOG_FLOOR)) + 0.1],
            height=430,
        )
        st.plotly_chart(fig, key="mie_box")
    df = pd.DataFrame({"relation": rel, "gt": pt.gt, "est": pt.est})
    st.dataframe(
        df.groupby("relation")
        .agg(pairs=("gt", "size"), mean_gt=("gt", "mean"), mean_head=("est", "mean"), median_gt=("gt", "median"))
        .round(4)
    )
    fig = go.Figure(go.Histogram(x=pt.asym, nbinsx=60))
    fig.update_layout(
        title="Asymmetry |I(i->j) - I(j->i)| of the ground truth: the model's self-consistency",
        xaxis_title="nats",
        yaxis_type="log",
        height=320,
    )
    st.plotly_chart(fig, key="mie_asym")
    r = directional_agreement(pt)
    st.caption(
        f"The two directions agree at Pearson {r:.3f} over these pairs. Were their disagreement independent "
        f"noise, no estimator could correlate with the symmetrised map above "
        f"sqrt(2r / (1 + r)) = {np.sqrt(2 * r / (1 + r)):.3f}; the head reaches {m['pearson']:.3f}."
    )
    if pt.hmin is not None:
        b = entropy_bounds(pt.gt, pt.est, pt.hmin)
        st.caption(
            f"The map is the mean of I(i->j) <= H_i and I(j->i) <= H_j, so it can exceed min(H_i, H_j) "
            f"where the model is not a consistent joint: {100 * b['share_above_min_entropy']:.1f}% of these "
            f"pairs do, and they hold {100 * b['head_sq_error_share_above_min']:.0f}% of the head's squared "
            f"error ({'this head never passes' if b['head_above_min_entropy'] == 0 else 'this head can pass'} the min"
            f"; docs/mi.md, excess). Pearson without them: "
            f"{b['pearson_pairs_within_min']:.3f}."
        )
