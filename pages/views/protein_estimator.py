"""The MI estimator page for the small ESM-C: its head against the exact ground truth on held-out
protein states (the committed report), and MI by sequence separation."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from mi_viz.core.mi_report import read_pairs

from ..kit.runtime import RESULTS
from ..kit.widgets import chart, report_metrics


def protein_report(key: str) -> None:
    """The committed report's figures, the scatter of head vs truth and the separation profile."""
    report, pairs = RESULTS / "protein" / "mi_report.json", RESULTS / "protein" / "mi_report_pairs.npz"
    if not (report.exists() and pairs.exists()):
        st.info(
            "No committed protein MI report yet: it comes with the protein MI head "
            "(`python -m mi_viz mi-report protein --states 100 --out results/protein/mi_report.json "
            "--pairs results/protein/mi_report_pairs.npz`)."
        )
        return
    rep = json.loads(report.read_text())
    pt, _ = read_pairs(pairs)
    report_metrics(rep, ("truth's two directions agree (Pearson)", f"{rep['gt_directional_pearson']:.3f}"))
    st.caption(
        f"{rep['n_pairs']:,} masked pairs of {rep['n_states']} held-out states (test split: masked natural "
        f"proteins and states of prompted decodes; {rep['avg_masked']:.1f} masked positions on average). "
        f"Ground truth: {rep['gt_passes_per_state']:.0f} passes and {rep['gt_seconds_per_state']:.1f} s per "
        f"state; head: {100 * rep['head_over_forward']:.1f} % of a pass."
    )
    prof = pd.DataFrame(rep["separation"])
    pair_plots(pt, prof, key)
    st.dataframe(prof, hide_index=True)


def pair_plots(pt, prof: pd.DataFrame, key: str, measure: str = "MI", unit: str = "nats") -> None:
    """The head against the truth over every masked pair (a sample of 6,000, coloured by sequence
    separation), and both means by separation |i - j| (prof: separation_profile's rows)."""
    left, right = st.columns(2)
    sep = np.abs(pt.i - pt.j)
    with left:
        idx = np.random.default_rng(0).choice(len(pt.gt), size=min(6000, len(pt.gt)), replace=False)
        marker = dict(
            size=4, opacity=0.5, color=np.log2(sep[idx]), colorscale="Viridis", colorbar=dict(title="log2 |i-j|")
        )
        fig = go.Figure(go.Scattergl(x=pt.gt[idx], y=pt.est[idx], mode="markers", marker=marker))
        top = float(max(pt.gt.max(), pt.est.max()))
        fig.add_trace(
            go.Scatter(x=[0, top], y=[0, top], mode="lines", line=dict(color="grey", dash="dash"), showlegend=False)
        )
        fig.update_layout(
            title=f"Estimated vs ground-truth {measure} (masked pairs)",
            xaxis_title=f"ground truth ({unit})",
            yaxis_title=f"head ({unit})",
            height=430,
            showlegend=False,
        )
        chart(fig, f"{key}_scatter")
    with right:
        fig = go.Figure()
        fig.add_trace(go.Bar(x=prof["separation"], y=prof["mean_gt"], name="ground truth"))
        fig.add_trace(go.Bar(x=prof["separation"], y=prof["mean_est"], name="head"))
        fig.update_layout(
            title=f"Mean {measure} by sequence separation |i - j|",
            xaxis=dict(title="|i - j|", type="category"),  # bins ("1", "5-8", ">=33"): every one a bar
            yaxis_title=f"mean {measure} ({unit})",
            barmode="group",
            height=430,
        )
        chart(fig, f"{key}_sep")
