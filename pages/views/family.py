"""A protein family's backbone (ProteinView.specialise): rows of the alignment's width, the
structure's contacts on the maps, generation judged by pair statistics; and the families page's
three tabs (contacts from MI, generation, training on your own alignment)."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from mi_viz.core.errors import UserError
from mi_viz.core.plots import sweep_figure
from mi_viz.core.samplers import SamplerConfig, row_label
from mi_viz.domains.family import forget_families
from mi_viz.domains.family.alignment import AlignmentError, parse_alignment, read_alignment
from mi_viz.domains.family.backbone import FamilyMDMConfig
from mi_viz.domains.family.drawing import contact_map_figure
from mi_viz.domains.family.pairstats import FamilyReference
from mi_viz.domains.family.pipelines import read_family_inputs, train_from_inputs
from mi_viz.domains.family.predictors import ANCHORS, HOW, NAMES, committed_maps
from mi_viz.domains.family.structure import state_precision
from mi_viz.domains.family.train import TrainFamilyConfig, data_for

from ..kit.models import Backbone, forget_models
from ..kit.runtime import RESULTS, ROOT
from ..kit.structure3d import structure_view
from ..kit.sweeps import committed_rows, decode_order_view, kept_sweep, run_sweep_now, sweep_table
from ..kit.widgets import chart, grid_or_error, pca_panel
from .base import Hint, Item
from .protein import APP_FAMILIES, ProteinView, protein_backbones

MAX_ROWS_APP, MAX_COLS_APP, MAX_MB = 5000, 200, 20
WHERE_ALIGNMENTS = (
    "An alignment comes from Pfam / InterPro (a family's page, 'Alignments': download the seed or the full "
    "alignment as FASTA) or from your own search (HHblits, jackhmmer, MMseqs2); the five families of "
    "`../shared/data/protein_families` (README there) are examples: `PF00595/PF00595.align.80.fasta` with "
    "its structure `2H3L_A.pdb` and column map."
)


def family_alignment(dom) -> Path | None:
    """The alignment a family backbone was trained on, where this machine has it: MI_VIZ_FAMILY_DATA/
    NAME/NAME.align.80.fasta, the project's shared data beside the checkout, or the file the app kept
    when it trained the family; None when absent (the page then asks for an upload)."""
    name = f"{dom.family}/{dom.family}.align.80.fasta"
    roots = [Path(os.environ["MI_VIZ_FAMILY_DATA"])] if os.environ.get("MI_VIZ_FAMILY_DATA") else []
    roots.append(ROOT.parent / "shared" / "data" / "protein_families")
    for r in roots:
        if (r / name).exists():
            return r / name
    kept = APP_FAMILIES / f"{dom.family}.fasta"
    return kept if kept.exists() else None


def family_backbones() -> dict[str, Backbone]:
    return {k: b for k, b in protein_backbones().items() if b.domain == "family"}


class FamilyView(ProteinView):
    def __init__(self, parent: ProteinView):
        super().__init__()
        self.keys = parent.keys
        self.has_contacts = True

    def decode_input(self, key: str, dom) -> tuple[Item | None, str | None]:
        """All masked at the alignment's width, the structure's own sequence with a share of its
        columns masked, or a row of the user's ('_' = masked)."""
        st.subheader("Input")
        L = dom.width
        modes = ["All masked: a new family member"]
        if dom.contact_map is not None:
            modes.append("The structure's sequence, a share of its columns masked")
        modes.append("A row of your own ('_' = masked)")
        mode = st.radio("Start from", modes, key=f"{key}_fmode")
        if mode.startswith("All masked"):
            return Item("_" * L, "_" * L, f"unconditional, {L} columns"), None
        if mode.startswith("The structure"):
            share = st.slider("share masked", 0.05, 1.0, 0.3, 0.05, key=f"{key}_fshare")
            seed = st.number_input("mask seed", 0, 10_000, 0, key=f"{key}_fseed")
            g = np.random.default_rng(int(seed))
            row = list(dom.contact_map.sequence)
            for i in g.choice(L, max(1, round(share * L)), replace=False):
                row[i] = "_"
            where = dom.contact_map.source.get("structure", "the structure")
            return Item("".join(row), "".join(row), f"{where}, {share:.0%} masked"), None
        text = st.text_area(
            f"A row of {L} columns: the 20 amino acids, '-' for a gap, '_' where a symbol is to be generated",
            key=f"{key}_frow",
            height=110,
        )
        if not text or not text.strip():
            return None, Hint(f"Type a row of {L} columns, '_' where symbols are to be generated.")
        p = "".join(text.split())
        try:
            dom.encode([p])
        except AlignmentError as e:
            return None, f"Invalid row: {e}."
        if "_" not in p:
            return None, "The row has no masked column: put '_' where symbols are to be generated."
        return Item(p, p, "pasted row"), None

    eb_presets = (1.0, 4.0)  # family columns carry 0.5-2.5 nats
    start_mi = (
        "MI gamma=4 lam=10",
    )  # budgets at a similar pass count side by side (the default mi is near-sequential)

    def mi_presets(self) -> dict:
        return {"MI gamma=4 lam=10": SamplerConfig("mi", gamma=4.0, lam=10.0)}  # parallel, and pair-aware

    def rows_key(self, key: str) -> str:
        return f"{key}_f"

    def compare_input(self, key: str, dom) -> tuple[Item | None, str | None, dict]:
        c = st.columns(3)
        c[0].metric("Columns (the alignment's width)", dom.width)
        temperature = c[1].slider("temperature", 0.1, 2.0, 1.0, 0.1, key=f"{key}_temp")
        seed = c[2].number_input("seed", 0, 10_000, 0, key=f"{key}_seed")
        prompt = "_" * dom.width
        return (
            Item(prompt, prompt, f"{dom.width} columns"),
            None,
            {"temperature": float(temperature), "seed": int(seed)},
        )

    def labels(self, dom, item: Item, L: int) -> list[str]:
        return [dom.position_name(i, L) for i in range(L)]

    def contacts(self, dom) -> np.ndarray | None:
        return dom.contact_map.contacts() if dom.contact_map is not None else None

    def contact_caption(self, dom, masked, maps: dict) -> str:
        """This state's contact precision of each map among its masked columns."""
        parts = []
        for name, mp in maps.items():
            prec = state_precision(mp, masked, dom.contact_map) if mp is not None else None
            if prec is not None:
                parts.append(f"{name} {prec[0]:.2f} (top {prec[1]} pairs)")
        return (
            "Red circles: residue contacts in " + dom.contact_map.source.get("structure", "the structure")
            + " (C-beta < 8 A, at least 6 residues apart along the chain). Contact precision of this state's "
            "map among its masked columns: " + ("; ".join(parts) if parts else "no scored pair is masked")
        )  # fmt: skip

    def state_extras(self, dom, key: str, masked, maps: dict, focus) -> None:
        """The state's top MI pairs among its masked columns on the structure, the focus in gold."""
        name, mp = next(((n, m) for n, m in maps.items() if m is not None), (None, None))
        if mp is None or dom.contact_map is None:
            return
        k = max(1, int(np.asarray(masked, bool)[dom.contact_map.columns].sum()) // 5)
        drawn = structure_view(dom.contact_map, mp, k, f"{key}_3d", focus=focus, among=masked)
        if drawn:
            st.caption(
                f"This state's top {drawn} {name} MI pairs among its masked columns on the structure (green: in "
                "contact, red: not; width by MI; gold: the focus column)."
            )

    def decode_extras(self, dom, key: str) -> None:
        with st.expander("This family's MI averaged over natural rows, beside the structure's contacts"):
            averaged_map_view(dom, f"{key}_avg")

    def sweep_tab(self, key: str, b: Backbone, model, head, head_path, rows: dict) -> None:
        """N members per setting, scored by pair statistics against the held-out rows of the
        family's alignment (which the user brings when this machine lacks it: never shipped)."""
        dom = b.dom()
        key = "fsw"
        st.markdown(
            f"Generate N members of {dom.family} (all masked at its {dom.width} columns, temperature 1) under each "
            "setting of a grid and score each set by **pair statistics** against the held-out rows of its alignment: "
            "the Pearson of the connected correlations C_ij(a, b) (what parallel decoding breaks), of the column "
            "frequencies, and the identity to the nearest training row (docs/results-family.md)."
        )
        path = family_alignment(dom)
        up = None
        if path is None:
            up = st.file_uploader(
                f"The alignment {dom.family}'s backbone was trained on (its held-out rows are the reference; "
                "never shipped with mi-viz)",
                type=["fasta", "fa", "afa", "txt"],
                key=f"{key}_msa",
                max_upload_size=MAX_MB,
            )
        else:
            st.caption(f"Alignment: `{path}`")
        c1, c2 = st.columns(2)
        n = c1.slider("N members", 20, 300, 100, 20, key=f"{key}_n")
        # mi-cap: the MI rule at most 8 columns a pass, the rule that keeps pair statistics best here
        # at matched passes (docs/results-family.md); it reads the head, when the family has one
        start = "sequential; topk:k=4,8; eb:gamma=4" + ("; mi-cap:k=8:gamma=32:lam=300" if head is not None else "")
        grid = c2.text_input("Grid", start, key=f"{key}_grid")
        if st.button("Run sweep", key=f"{key}_run"):
            cfgs = grid_or_error(grid, "Grid", head is not None, dom.sampler_defaults)
            try:
                if path is not None:
                    aln = read_alignment(path)
                elif up is not None:
                    aln = parse_alignment(up.getvalue().decode(), up.name)
                else:
                    raise AlignmentError("upload the alignment first")
                data = data_for(dom.meta, aln)
            except (AlignmentError, ValueError) as e:
                st.error(f"Cannot score against this alignment: {e}")
                cfgs = None
            if cfgs:
                ref = FamilyReference(data.heldout_rows, data.train_rows)
                cfgs = [c.replace(temperature=1.0) for c in cfgs]
                scorer = dom.judge(model, ref, bootstrap=50)
                out = run_sweep_now(dom, model, head, cfgs, ["_" * dom.width] * int(n), lambda r: scorer(r.rows))
                kept_sweep(key, b.key, (dom.family, int(n), out, ref.floor()))
        result = kept_sweep(key, b.key)
        curves = {}
        if result and result[0] == dom.family:
            _, r_n, out, floor = result
            curves[f"this sweep, {r_n} members"] = out
            sweep_table(out, "family_sweep.csv")
            decode_order_view(out, "track", [dom.position_name(i) for i in range(dom.width)], key)
            st.caption(
                f"Natural vs natural (two halves of the held-out rows, {floor['n']} each): "
                f"pair-correlation Pearson {floor['pair_corr_pearson']:.3f}."
            )
        committed = RESULTS / "family" / dom.family / "sweep.csv"
        if committed.exists():
            curves["committed"] = committed_rows(committed)
        if curves:
            chart(
                sweep_figure(
                    curves, "pair_corr_pearson", "Pearson of C_ij(a, b) vs held-out rows", "pair statistics vs passes"
                ),
                f"{key}_plot",
            )
        st.markdown(f"**Figure 3 for {dom.family}: generated members in the natural rows' principal components**")
        pca_panel(
            RESULTS / "family" / dom.family / "figure3.json",
            f"{key}_{dom.family}",
            f"python -m benchmarks.family_figure3 --families {dom.family}",
            "the held-out natural rows",
        )


def averaged_map_view(dom, key: str) -> None:
    """A family's committed contact maps (every predictor's: predictors.committed_maps) above its
    structure's contacts, with a radio for which one, and the same top pairs on the structure in
    3D; a message (and the command) when none is committed."""
    cmap = dom.contact_map
    if cmap is None:
        st.info("This backbone ships no structure: train it with a PDB file to see contacts.")
        return
    maps = committed_maps(RESULTS / "family" / dom.family)
    if not maps:
        st.info(
            f"No committed contact report for {dom.family}: `python -m mi_viz contacts --backbone "
            f"{dom.checkpoint} --msa ALIGNMENT --out results/family/{dom.family}/contacts.json` makes one."
        )
        return
    kind = st.radio("Score", list(maps), format_func=NAMES.get, horizontal=True, key=key)
    top = cmap.n_mapped // 5
    chart(
        contact_map_figure(maps[kind], cmap, f"{dom.family}: {NAMES[kind]} (above) vs contacts (below)", top=top),
        f"{key}_map",
    )
    st.caption(f"{NAMES[kind]}: {HOW[kind]}. Circles: the top L/5 = {top} scored pairs (green: a contact, red: not).")
    drawn = structure_view(cmap, maps[kind], top, f"{key}_3d")
    if drawn:
        st.caption(
            f"The same top {drawn} pairs on {cmap.source.get('structure', 'the structure')} (C-beta atoms; drag to "
            "turn, scroll to zoom): green cylinders join residues in contact, red ones pairs that are not; the "
            "thicker, the higher the score."
        )


# --------------------------------------------------------------------------- the families page

CLASS_COLUMNS = (  # contact_classes.json's precisions, by what the table calls them
    ("precision_all_L5", "top-L/5 (all >= 6)"),
    ("precision_all_L2", "top-L/2"),
    ("precision_all_L", "top-L"),
    ("precision_long_L", "long top-L"),
    ("precision_long_L5", "long top-L/5"),
    ("precision_medium_L5", "medium top-L/5"),
    ("precision_short_L5", "short top-L/5"),
)


def contact_classes_table(r: dict) -> pd.DataFrame:
    """Every predictor of contact_classes.json by the field's separation classes, the extraction the
    backbone would use without a structure marked."""
    chosen = r.get("extraction", {}).get("chosen")
    return pd.DataFrame(
        [
            {
                "predictor": NAMES.get(k, k),
                "chosen": "✓" if k == chosen else "",
                **{name: p.get(col) for col, name in CLASS_COLUMNS},
            }
            for k, p in r["predictors"].items()
        ]
    )


def contacts_tab(families: dict[str, Backbone], label: str | None) -> None:
    if label is None:
        st.info("No family backbone on this machine yet: train one in the last tab, or `make families`.")
        return
    try:
        dom = families[label].dom()
    except (UserError, ValueError, OSError) as e:
        st.error(f"Cannot read this family backbone: {e}")
        return
    folder = RESULTS / "family" / dom.family
    report, classes = folder / "contacts.json", folder / "contact_classes.json"
    if dom.contact_map is None:
        st.info("This backbone ships no structure: train it with a PDB file to see contacts.")
        return
    if classes.exists():
        r = json.loads(classes.read_text())
        fmt = {name: st.column_config.NumberColumn(format="%.2f") for _, name in CLASS_COLUMNS}
        st.dataframe(contact_classes_table(r), hide_index=True, column_config=fmt)
        cls = r["classes"]
        st.caption(
            f"Precision of each predictor's top-scored pairs; contacts: C-beta < 8 A. Separation classes, in "
            f"residues along the chain (columns the structure lacks do not count): short "
            f"{cls['short'][0]}-{cls['short'][1]}, medium {cls['medium'][0]}-{cls['medium'][1]}, long >= "
            f"{cls['long'][0]}, all >= {cls['all'][0]}; L = {r['mapped_columns']} mapped columns of "
            f"{dom.contact_map.source.get('structure')}. Chosen: the backbone's extraction (conditional MI or "
            f"Jacobian) by held-out covariation ({r['extraction']['criterion']}), never by the structure "
            f"(`{classes.relative_to(RESULTS.parent)}`)."
        )
    elif report.exists():
        r = json.loads(report.read_text())
        rows = [
            {
                "predictor": NAMES[key],
                "top-L/5 precision": r.get(f"precision_L5_{key}"),
                "top-L/2": r.get(f"precision_L2_{key}"),
                "AUROC": r.get(f"auroc_{key}"),
            }
            for key in ("truth", "head", "mip", "potts")
            if r.get(f"precision_L5_{key}") is not None
        ]
        st.dataframe(pd.DataFrame(rows), hide_index=True)
        st.caption(
            f"{r['rows']} held-out rows x {r['masks_per_row']} random masks of {r['frac']:.0%} of the columns; "
            f"L = {dom.contact_map.n_mapped} mapped columns; base rate {r['base_rate']:.3f}; contacts: C-beta "
            f"< 8 A, at least 6 residues apart along the chain (`{report.relative_to(RESULTS.parent)}`; by "
            "separation class: `python -m benchmarks.family_contact_classes`)."
        )
    else:
        st.info(
            "No contact report for this backbone yet: `python -m mi_viz contacts --backbone "
            f"{dom.checkpoint} --msa ALIGNMENT --out {report}` makes one (minutes)."
        )
        return
    averaged_map_view(dom, "fam_kind")


def generation_tab(families: dict[str, Backbone], label: str | None) -> None:
    if label is None:
        return
    fam = families[label].dom().family
    sweep = RESULTS / "family" / fam / "sweep.csv"
    if not sweep.exists():
        st.info(f"No committed pair-statistics sweep for {fam} (`make family-results` makes them).")
        return
    rows = committed_rows(sweep)
    chart(sweep_figure(
            {"": rows}, "pair_corr_pearson", "Pearson of C_ij(a, b), generated vs held-out rows",
            f"{fam}: pair correlations against passes",
        ), "fam_sweep")  # fmt: skip
    ceiling_view(fam)
    cols = [
        c
        for c in ("avg_passes", "pair_corr_pearson", "pair_corr_sd", "single_freq_pearson", "mean_energy",
                  "energy_w1", "nearest_identity_mean")
        if c in rows[0]
    ]  # fmt: skip
    st.dataframe(pd.DataFrame([{"setting": row_label(r), **{c: r[c] for c in cols}} for r in rows]), hide_index=True)


def ceiling_view(fam: str) -> None:
    """The family's one set of terms (results/family/ceiling.json: every set, natural or generated, at
    the natural half's n against the other half) and the field's anchors, scored like every sampler."""
    path = RESULTS / "family" / "ceiling.json"
    c = json.loads(path.read_text())["families"].get(fam) if path.exists() else None
    if c is None:
        st.caption("The sweep's sets are scored against every held-out row (no ceiling for this family yet).")
        return
    rows = [{"set": "natural (held-out half A)", **c["natural"]}]
    rows += [{"set": f"{NAMES[name]} (its package)" if name in ANCHORS else name, **v} for name, v in c["rows"].items()]
    table = pd.DataFrame(rows)
    table["pair_corr_ci90"] = [" .. ".join(f"{x:.3f}" for x in ci) for ci in table["pair_corr_ci90"]]
    cols = [k for k in ("set", "n", "avg_passes", "pair_corr_pearson", "pair_corr_ci90") if k in table]
    st.markdown("**One set of terms**: every set at the same size against the same rows")
    st.dataframe(table[cols], hide_index=True)
    st.caption(
        f"Every set has n = {c['n']} members and is scored against held-out half B, so the natural half A is "
        f"a true ceiling; the training rows' own statistics (n -> infinity) reach {c['training_bound']:.3f}. "
        "The plot above scores 200 members against all held-out rows (larger n: higher Pearson) "
        f"(`{path.relative_to(RESULTS.parent)}`, `python -m benchmarks.family_ceiling`)."
    )


def train_tab() -> None:
    """Train a family backbone on an uploaded alignment (and structure) in the foreground, with a
    progress bar; every file is checked before anything is written to runs/app_families/."""
    st.markdown(
        f"Upload an alignment (aligned FASTA: every row the same width, '-' for gaps, upper case) of at most "
        f"**{MAX_ROWS_APP:,} rows x {MAX_COLS_APP} columns** ({MAX_MB} MB), and optionally a structure of one "
        "member (PDB) with its column map (an indices file: column, residue, index, 'number chain'; without "
        "it the structure's sequence is aligned to the alignment's profile here). Training runs on this "
        "machine's CPU in the foreground; leaving the page pauses it, and the same button resumes it. "
        "Larger alignments: `python -m mi_viz train-family` (README)."
    )
    c1, c2, c3 = st.columns(3)
    up_msa = c1.file_uploader(
        "Alignment (FASTA)", type=["fasta", "fa", "afa", "txt", "aln"], key="fam_up_msa", max_upload_size=MAX_MB
    )
    up_pdb = c2.file_uploader(
        "Structure (PDB, optional)", type=["pdb", "ent"], key="fam_up_pdb", max_upload_size=MAX_MB
    )
    up_map = c3.file_uploader(
        "Column map (optional)", type=["indices", "tsv", "txt"], key="fam_up_map", max_upload_size=MAX_MB
    )
    name = st.text_input("Name", "my_family", key="fam_name", help="letters, digits, '-' and '_' (up to 40)")
    minutes = st.slider("Training minutes (the default run is 28)", 1, 30, 5, key="fam_minutes")
    if not st.button("Train", key="fam_train", type="primary"):
        return
    problem = None
    if up_msa is None:
        st.error("Upload an alignment first.")
        return
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,40}", name or ""):
        problem = "The name may hold letters, digits, '-' and '_' only (up to 40)."
    elif any(f is not None and f.size > MAX_MB * 2**20 for f in (up_msa, up_pdb, up_map)):
        problem = f"A file is larger than {MAX_MB} MB."
    if problem:
        st.error(problem)
        return
    with tempfile.TemporaryDirectory() as tmp:  # the uploads are checked here; nothing is kept if they fail
        msa = Path(tmp) / f"{name}.fasta"
        msa.write_bytes(up_msa.getvalue())
        pdb = idx = None
        if up_pdb is not None:
            pdb = Path(tmp) / f"{name}.pdb"
            pdb.write_bytes(up_pdb.getvalue())
        if up_map is not None:
            idx = Path(tmp) / f"{name}.indices"
            idx.write_bytes(up_map.getvalue())
        try:
            aln = parse_alignment(up_msa.getvalue().decode("utf-8", errors="replace"), up_msa.name)
            if len(aln) > MAX_ROWS_APP or aln.width > MAX_COLS_APP:
                raise AlignmentError(
                    f"it has {len(aln):,} rows x {aln.width} columns; the app trains on at most "
                    f"{MAX_ROWS_APP:,} x {MAX_COLS_APP} (use `python -m mi_viz train-family` for more)"
                )
            inputs = read_family_inputs(msa, pdb, idx)
        except AlignmentError as e:
            st.error(f"Invalid alignment: {e}")
            return
        except (UserError, ValueError) as e:
            st.error(f"The structure cannot be used: {e}")
            return
        APP_FAMILIES.mkdir(parents=True, exist_ok=True)
        shutil.copy(
            msa, APP_FAMILIES / msa.name
        )  # the user's alignment, kept beside the model (its sweeps score on it)
    bar = st.progress(0.0, text="training: the first steps ...")
    eval_every = TrainFamilyConfig().eval_every

    def cb(step, total, info):
        held = (
            f" · held-out pseudo-perplexity {info['heldout_pseudo_ppl_15']:.2f} (the column profile: "
            f"{info['profile_pseudo_ppl_15']:.2f})"
            if "heldout_pseudo_ppl_15" in info
            else f" · first held-out evaluation at step {eval_every}"
        )
        bar.progress(
            min(1.0, info["fraction"]),
            text=f"training: step {step} · {info['wall_seconds']:.0f} s of {minutes} min" + held,
        )

    out = APP_FAMILIES / f"family_{name}"
    try:
        res = train_from_inputs(inputs, out, name, TrainFamilyConfig(max_minutes=float(minutes)), FamilyMDMConfig(), cb)
    except (UserError, ValueError, OSError) as e:  # a paused run of another alignment, a full disk
        st.error(f"Training failed: {e}")
        return
    bar.empty()
    ppl, prof = res.get("heldout_pseudo_ppl_15", float("nan")), res.get("profile_pseudo_ppl_15", float("nan"))
    msg = (
        f"Trained {name}: {res['step']} steps, held-out pseudo-perplexity {ppl:.2f} against the column "
        f"profile's {prof:.2f}."
    )
    if res["beats_profile"]:
        st.success(msg + f" Pick 'family {name}' on Protein decode.")
    else:
        st.warning(
            msg + " It does not yet predict held-out rows better than the alignment's own column frequencies: "
            "its MI maps will mean little. Train longer (the button resumes this run), or train on the command "
            "line with more minutes (`python -m mi_viz train-family`)."
        )
    forget_families()
    forget_models()  # a family retrained under its old name is read afresh
