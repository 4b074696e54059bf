"""Protein comparison: one length and seed under several samplers; a small sweep against the reference."""

import io
from dataclasses import asdict

import numpy as np
import pandas as pd
import streamlit as st

from mi_viz.core.bench import run_bench
from mi_viz.core.plots import sweep_figure, timeline_figure
from mi_viz.core.samplers import SamplerConfig, Trace, config_for
from mi_viz.domains import get_domain
from mi_viz.domains.protein import DATA, PAPER_TABLE2, prompts_of_lengths
from mi_viz.domains.protein.alphabet import decode
from mi_viz.domains.protein.drawing import track_figure
from mi_viz.domains.protein.metrics import Reference
from pages._shared import (
    PROTEIN_LENGTH_CAP,
    RESULTS,
    grid_or_error,
    protein_backbones,
    protein_model_or_error,
    protein_trace_json,
    through_app,
)

through_app()
st.title("Protein comparison")
PROTEIN = get_domain("protein")
backbones = protein_backbones()
with st.sidebar:
    label = st.selectbox("Protein backbone", list(backbones), key="pcmp_backbone")
spec = backbones[label]
loaded = protein_model_or_error(spec)
if loaded is None:
    st.stop()
model, head = loaded
head_path = str(PROTEIN.default_head()) if head is not None else None
DEFAULTS = PROTEIN.sampler_defaults  # protein budgets (results/protein/val_sweep/choice.json)
PRESETS = {
    "sequential": SamplerConfig("sequential"),
    "top-k k=4": SamplerConfig("topk", k=4),
    "top-k k=8": SamplerConfig("topk", k=8),
    "EB gamma=8": SamplerConfig("eb", gamma=8.0),
    "EB gamma=16": SamplerConfig("eb", gamma=16.0),
    f"MI rule with MI=0 (default, gamma={DEFAULTS['mi-zero']['gamma']:g})": config_for("mi-zero", DEFAULTS),
}
if head is not None:
    PRESETS["MI gamma=2 lam=1 (paper)"] = SamplerConfig("mi", gamma=2.0, lam=1.0)
    mi = config_for("mi", DEFAULTS)
    PRESETS[f"MI (default, gamma={mi.gamma:g} lam={mi.lam:g})"] = mi
COMMITTED = RESULTS / "protein" / "table2" / "sweep.csv"


tab1, tab2 = st.tabs(["Same length and seed, side by side", "Small sweep"])
with tab1:
    c = st.columns(3)
    length = c[0].number_input(f"Length (1..{PROTEIN_LENGTH_CAP})", 1, PROTEIN_LENGTH_CAP, 60, key="pcmp_len")
    temperature = c[1].slider("temperature", 0.1, 2.0, 1.0, 0.1, key="pcmp_temp")
    seed = c[2].number_input("seed", 0, 10_000, 0, key="pcmp_seed")
    chosen = st.multiselect(
        "Samplers",
        list(PRESETS),
        default=["sequential", "top-k k=4", "EB gamma=8"] + [k for k in PRESETS if k.startswith("MI (default")],
        key="pcmp_samplers",
    )
    custom = st.text_input(
        "Your own settings, added to the chosen ones (grid syntax)",
        "",
        key="pcmp_custom",
        placeholder="eb:gamma=2; topk:k=12",
    )
    configs = {name: PRESETS[name] for name in chosen}
    if custom.strip():
        for cfg in grid_or_error(custom, "Your own settings", head is not None, DEFAULTS) or []:
            configs[cfg.label()] = cfg
    if not configs:
        st.info("Choose at least one sampler, or type your own settings.")
    else:
        prompt = "_" * int(length)
        traces = {}
        for name, cfg in configs.items():
            cfg.temperature, cfg.seed = float(temperature), int(seed)
            traces[name] = Trace.from_json(protein_trace_json(prompt, asdict(cfg), spec, head_path))
        longest = max(len(tr.steps) for tr in traces.values())
        t = st.slider(
            "Shared pass (the sequences after this many passes)", 0, longest, min(10, longest), key="pcmp_step"
        )
        rows = []
        for k, (name, tr) in enumerate(traces.items()):
            tt = min(t, len(tr.steps))
            seq = decode(tr.tokens_at(tt))
            sel = tr.steps[tt - 1].selected if tt else []
            st.plotly_chart(
                track_figure(seq, selected=sel, title=f"{name}: pass {tt} / {len(tr.steps)}", width=900),
                key=f"pcmp_track_{k}",
                config={"displayModeBar": False},
            )
            rows.append(
                {
                    "sampler": name,
                    "passes": len(tr.steps),
                    "final sequence": decode(tr.final),
                    "max residues per pass": max(len(s.selected) for s in tr.steps),
                }
            )
        st.dataframe(pd.DataFrame(rows), hide_index=True)
        fig = timeline_figure(traces, {n: c.name for n, c in configs.items()}, "Residues decoded vs passes", "residues")
        st.plotly_chart(fig, key="pcmp_timeline")

with tab2:
    st.markdown(
        "Generate N proteins (lengths drawn from 50-100, seeded) under each setting of a grid and score "
        "each set against the natural test reference (`data/protein/reference_test.fasta`, 500 proteins): "
        "the paper's k-means JSD (k = 15, in bits; lower is closer) and the rest of `metrics.set_metrics`."
    )
    c1, c2 = st.columns(2)
    n = c1.slider("N proteins", 5, 100, 20, key="psw_n")
    grid = c2.text_input("Grid", "sequential; topk:k=4,8; eb:gamma=8,16", key="psw_grid")
    if st.button("Run sweep", key="psw_run"):
        cfgs = grid_or_error(grid, "Grid", head is not None, DEFAULTS)
        if cfgs:
            prompts = prompts_of_lengths(int(n), (50, 100), seed=0)
            with st.spinner("Embedding the reference ..."):
                ref = Reference(model, DATA / "reference_test.fasta")
            bar = st.progress(0.0, text="sweep")
            out = []
            for k, cfg in enumerate(cfgs):
                cfg.temperature = 1.0
                bar.progress(k / len(cfgs), text=f"{cfg.label()} ({k + 1}/{len(cfgs)})")
                res = run_bench(PROTEIN, model, prompts, cfg, head if cfg.needs == "mi" else None)
                out.append({**res.summary, **ref([r["sequence"] for r in res.rows])})
            bar.empty()
            st.session_state.psw_result = (int(n), out)
    result = st.session_state.get("psw_result")
    curves = {}
    if result:
        r_n, out = result
        curves[f"this sweep, {r_n} proteins"] = out
        df = pd.DataFrame(out)
        st.dataframe(df, hide_index=True)
        buf = io.StringIO()
        df.to_csv(buf, index=False)
        st.download_button("Download CSV", buf.getvalue(), file_name="protein_sweep.csv", mime="text/csv")
    if COMMITTED.exists():
        curves["committed, 500 proteins"] = pd.read_csv(COMMITTED).replace({np.nan: None}).to_dict("records")
    else:
        st.caption("No committed Table 2 sweep yet (results/protein/table2/sweep.csv).")
    st.plotly_chart(
        sweep_figure(curves, "jsd", "k-means JSD to the reference (bits)", "JSD vs average passes", paper=PAPER_TABLE2),
        key="psw_plot",
    )
    st.caption(
        "Crosses: the paper's Table 2 (ESM-C 300M, UniRef50 reference; its JSD's log base is not stated). "
        "A small sweep's JSD is noisier than the committed 500-protein rows: with few proteins the "
        "cluster histogram itself is coarse (README, the natural-vs-natural floor)."
    )
