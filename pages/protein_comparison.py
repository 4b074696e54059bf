"""Protein comparison: one length and seed under several samplers; a small sweep against the reference
(proteins: the paper's k-means JSD; a family backbone: pair statistics against its held-out rows)."""

import io

import numpy as np
import pandas as pd
import streamlit as st
import torch

from mi_viz.core.bench import run_bench
from mi_viz.core.plots import sweep_figure, timeline_figure
from mi_viz.core.samplers import SamplerConfig, Trace, config_for
from mi_viz.domains.protein import DATA, PAPER_TABLE2, prompts_of_lengths
from mi_viz.domains.protein.drawing import track_figure
from mi_viz.domains.protein.metrics import Reference
from pages._protein import (
    PROTEIN_LENGTH_CAP,
    backbone_domain,
    family_alignment,
    protein_backbones,
    protein_model_or_error,
    protein_trace_json,
)
from pages._shared import RESULTS, through_app
from pages._widgets import grid_or_error, sampler_rows

through_app()
st.title("Protein comparison")
backbones = protein_backbones()
with st.sidebar:
    label = st.selectbox("Protein backbone", list(backbones), key="pcmp_backbone")
spec = backbones[label]
loaded = protein_model_or_error(spec)
if loaded is None:
    st.stop()
model, head = loaded
DOM = backbone_domain(spec)
is_family = DOM.name == "family"
head_path = str(DOM.default_head()) if head is not None else None
DEFAULTS = DOM.sampler_defaults  # the domain's budgets (proteins: results/protein/val_sweep/choice.json)
EB_PRESETS = (1.0, 4.0) if is_family else (8.0, 16.0)  # family columns carry 0.5-2.5 nats, proteins ~2.8
PRESETS = {
    "sequential": SamplerConfig("sequential"),
    "top-k k=4": SamplerConfig("topk", k=4),
    "top-k k=8": SamplerConfig("topk", k=8),
    **{f"EB gamma={g:g}": SamplerConfig("eb", gamma=g) for g in EB_PRESETS},
}
zero = config_for("mi-zero", DEFAULTS)  # the domain's choice where it has one, else the registry's
PRESETS[f"MI rule with MI=0 ({'default, ' if 'mi-zero' in DEFAULTS else ''}gamma={zero.gamma:g})"] = zero
if head is not None:
    if not is_family:
        PRESETS["MI gamma=2 lam=1 (paper)"] = SamplerConfig("mi", gamma=2.0, lam=1.0)
    else:
        PRESETS["MI gamma=4 lam=10"] = SamplerConfig("mi", gamma=4.0, lam=10.0)  # parallel, and pair-aware
    mi = config_for("mi", DEFAULTS)
    PRESETS[f"MI (default, gamma={mi.gamma:g} lam={mi.lam:g})"] = mi
COMMITTED = RESULTS / "family" / DOM.family / "sweep.csv" if is_family else RESULTS / "protein" / "table2" / "sweep.csv"


def decode(tokens) -> str:
    return DOM.decode(torch.tensor([list(tokens)]))[0]


tab1, tab2 = st.tabs(["Same length and seed, side by side", "Small sweep"])
with tab1:
    c = st.columns(3)
    if is_family:
        length = DOM.width
        c[0].metric("Columns (the alignment's width)", length)
    else:
        length = c[0].number_input(f"Length (1..{PROTEIN_LENGTH_CAP})", 1, PROTEIN_LENGTH_CAP, 60, key="pcmp_len")
    temperature = c[1].slider("temperature", 0.1, 2.0, 1.0, 0.1, key="pcmp_temp")
    seed = c[2].number_input("seed", 0, 10_000, 0, key="pcmp_seed")
    st.caption("Each row is one sampler with its own settings; a slider re-decodes that row only.")
    # families: budgets at a similar pass count side by side (the default mi is near-sequential)
    start = ["sequential", "top-k k=4"] + (["EB gamma=4", "MI gamma=4 lam=10"] if is_family else ["EB gamma=8"])
    configs = sampler_rows(
        "pcmp_f" if is_family else "pcmp",
        PRESETS,
        [k for k in start if k in PRESETS] + [k for k in PRESETS if k.startswith("MI (default")],
        head is not None,
        DEFAULTS,
    )
    if not configs:
        st.info("Choose at least one sampler, or type your own settings.")
    else:
        prompt = "_" * int(length)
        traces = {}
        for name, cfg in configs.items():
            cfg = cfg.replace(temperature=float(temperature), seed=int(seed))  # validated anew
            traces[name] = Trace.from_json(protein_trace_json(prompt, cfg.to_dict(), spec, head_path))
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


def family_sweep_tab():
    """The small sweep of a family backbone: N members per setting, scored by pair statistics against
    the held-out rows of its alignment (which the user brings: never shipped)."""
    from mi_viz.domains.family.alignment import AlignmentError, parse_alignment, read_alignment
    from mi_viz.domains.family.pairstats import FamilyReference
    from mi_viz.domains.family.train import data_for

    st.markdown(
        f"Generate N members of {DOM.family} (all masked at its {DOM.width} columns, temperature 1) under each "
        "setting of a grid and score each set by **pair statistics** against the held-out rows of its alignment: "
        "the Pearson of the connected correlations C_ij(a, b) (what parallel decoding breaks), of the column "
        "frequencies, and the identity to the nearest training row (docs/results-family.md)."
    )
    path = family_alignment(DOM)
    up = None
    if path is None:
        up = st.file_uploader(
            f"The alignment {DOM.family}'s backbone was trained on (its held-out rows are the reference; "
            "never shipped with mi-viz)",
            type=["fasta", "fa", "afa", "txt"],
            key="fsw_msa",
            max_upload_size=20,
        )
    else:
        st.caption(f"Alignment: `{path}`")
    c1, c2 = st.columns(2)
    n = c1.slider("N members", 20, 300, 100, 20, key="fsw_n")
    # mi-cap: the MI rule at most 8 columns a pass, the rule that keeps pair statistics best here
    # at matched passes (docs/results-family.md); it reads the head, when the family has one
    start = "sequential; topk:k=4,8; eb:gamma=4" + ("; mi-cap:k=8:gamma=32:lam=300" if head is not None else "")
    grid = c2.text_input("Grid", start, key="fsw_grid")
    if st.button("Run sweep", key="fsw_run"):
        cfgs = grid_or_error(grid, "Grid", head is not None, DEFAULTS)
        try:
            if path is None and up is None:
                raise AlignmentError("upload the alignment first")
            aln = read_alignment(path) if path is not None else parse_alignment(up.getvalue().decode(), up.name)
            data = data_for(DOM.meta, aln)
        except (AlignmentError, ValueError) as e:
            st.error(f"Cannot score against this alignment: {e}")
            cfgs = None
        if cfgs:
            ref = FamilyReference(data.heldout_rows, data.train_rows)
            bar = st.progress(0.0, text="sweep")
            out = []
            for k, cfg in enumerate(cfgs):
                cfg = cfg.replace(temperature=1.0)
                bar.progress(k / len(cfgs), text=f"{cfg.label()} ({k + 1}/{len(cfgs)})")
                res = run_bench(DOM, model, ["_" * DOM.width] * int(n), cfg, head if cfg.needs_head else None)
                rows = DOM.encode([r["sequence"] for r in res.rows])
                from mi_viz.domains.family.backbone import to_values

                out.append({**res.summary, **ref(to_values(rows).numpy(), bootstrap=50)})
            bar.empty()
            st.session_state.fsw_result = (DOM.family, int(n), out, ref.floor())
    result = st.session_state.get("fsw_result")
    curves = {}
    if result and result[0] == DOM.family:
        _, r_n, out, floor = result
        curves[f"this sweep, {r_n} members"] = out
        df = pd.DataFrame(out)
        st.dataframe(df, hide_index=True)
        st.caption(
            f"Natural vs natural (two halves of the held-out rows, {floor['n']} each): "
            f"pair-correlation Pearson {floor['pair_corr_pearson']:.3f}."
        )
    if COMMITTED.exists():
        curves["committed"] = pd.read_csv(COMMITTED).replace({np.nan: None}).to_dict("records")
    if curves:
        st.plotly_chart(
            sweep_figure(
                curves, "pair_corr_pearson", "Pearson of C_ij(a, b) vs held-out rows", "pair statistics vs passes"
            ),
            key="fsw_plot",
        )


with tab2:
    if is_family:
        family_sweep_tab()
        st.stop()
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
                cfg = cfg.replace(temperature=1.0)
                bar.progress(k / len(cfgs), text=f"{cfg.label()} ({k + 1}/{len(cfgs)})")
                res = run_bench(DOM, model, prompts, cfg, head if cfg.needs_head else None)
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
