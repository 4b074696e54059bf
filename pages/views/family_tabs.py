"""The families page's three tabs (pages/families.py lays them out): a family backbone's MI against
a structure's contacts, generation judged by pair statistics, and a family model trained here on
your own alignment. A family trained here gets the shipped families' contact reading
(family/reading.py) from a button on the first tab."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st

from mi_viz.core.errors import UserError
from mi_viz.core.paths import portable
from mi_viz.core.plots import sweep_figure
from mi_viz.core.samplers import row_label
from mi_viz.domains.family import forget_families
from mi_viz.domains.family.alignment import AlignmentError, parse_alignment, read_alignment
from mi_viz.domains.family.backbone import FamilyMDMConfig
from mi_viz.domains.family.pipelines import read_family_inputs, train_from_inputs
from mi_viz.domains.family.predictors import ANCHORS, NAMES
from mi_viz.domains.family.reading import JacobianBudget, contact_reading, jacobian_cost
from mi_viz.domains.family.train import TrainFamilyConfig, data_for

from ..kit import caches
from ..kit.models import Backbone, backbone_model, forget_models
from ..kit.runtime import RESULTS
from ..kit.sweeps import committed_rows
from ..kit.widgets import chart
from .family import (
    MAX_COLS_APP,
    MAX_MB,
    MAX_ROWS_APP,
    averaged_map_view,
    family_alignment,
    reading_folder,
)
from .protein import APP_FAMILIES

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
    backbone would use without a structure marked; a class without pairs (a short family has no
    long-range pair) is a dash, not "None"."""
    chosen = r.get("extraction", {}).get("chosen")
    return pd.DataFrame(
        [
            {
                "predictor": NAMES.get(k, k),
                "chosen": "✓" if k == chosen else "",
                **{name: "—" if p.get(col) is None else f"{p[col]:.2f}" for col, name in CLASS_COLUMNS},
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
    if dom.contact_map is None:
        st.info("This backbone ships no structure: train it with a PDB file to see contacts.")
        return
    folder = reading_folder(dom)
    classes = folder / "contact_classes.json"
    if classes.exists():
        r = json.loads(classes.read_text())
        st.dataframe(contact_classes_table(r), hide_index=True)
        cls = r["classes"]
        absent = r.get("anchors_absent") or {}
        st.caption(
            f"Precision of each predictor's top-scored pairs; contacts: C-beta < 8 A. Separation classes, in "
            f"residues along the chain (columns the structure lacks do not count): short "
            f"{cls['short'][0]}-{cls['short'][1]}, medium {cls['medium'][0]}-{cls['medium'][1]}, long >= "
            f"{cls['long'][0]}, all >= {cls['all'][0]}; L = {r['mapped_columns']} mapped columns of "
            f"{dom.contact_map.source.get('structure')}. Chosen: the backbone's extraction (conditional MI or "
            f"Jacobian) by held-out covariation ({r['extraction']['criterion']}), never by the structure "
            f"(`{portable(classes)}`)." + (f" Not run: {'; '.join(absent.values())}." if absent else "")
        )
    if folder != RESULTS / "family" / dom.family:  # a family of the user's: its reading is made here
        reading_control(families[label], dom, folder, again=classes.exists())
    if not classes.exists():
        return
    averaged_map_view(dom, "fam_kind")


def reading_control(b: Backbone, dom, folder: Path, again: bool) -> None:
    """The contact reading of a family trained here: a budget (held-out rows), its cost stated
    before it starts, a progress bar while it runs (the page's stop button cancels; nothing is
    half-written: each map is saved whole, the report last)."""
    aln = family_alignment(dom)
    if aln is None:
        st.info(
            f"The alignment {dom.family} was trained on is not on this machine: its contact reading needs "
            "its held-out rows (train it here, or put it in MI_VIZ_FAMILY_DATA/NAME/NAME.align.80.fasta)."
        )
        return
    try:
        data = caches.cached("fam_data", (b.key, str(aln)), lambda: data_for(dom.meta, read_alignment(aln)))
    except (UserError, ValueError) as e:
        st.error(f"Cannot read the alignment of {dom.family}: {e}")
        return
    held = len(data.heldout_rows)
    if held == 0:
        st.info(f"{dom.family}'s split has no held-out rows: the Jacobian reads held-out rows only.")
        return
    model = backbone_model(b)
    st.markdown("**Contact reading** of this family: the categorical Jacobian, MIp and the separation classes")
    c1, c2 = st.columns(2)
    rows = int(
        c1.number_input(
            f"Jacobian budget: held-out rows (1..{held})", 1, held, min(50, held), key="fam_jac_rows",
            help="Each row is read twice, half its columns masked; the consensus row adds 40 masks.",
        )
    )  # fmt: skip
    anchors = c2.checkbox(
        "Fit the field's anchors too (arDCA, plmDCA)", key="fam_anchors",
        help="When installed (`make anchors`); minutes more on a large alignment. Absent packages are named.",
    )  # fmt: skip
    budget = JacobianBudget(rows)
    cost = caches.cached("jac_cost", (b.key, rows), lambda: jacobian_cost(model, data, budget))
    st.caption(
        f"{cost['passes']:,} passes ({cost['states']} states), about {cost['seconds']:.0f} s on this machine"
        + ("; the anchors' fits and 200 members each come on top" if anchors else "")
        + ". The conditional MI averaged over held-out rows (hours on a large family) is the CLI's: "
        f"`python -m mi_viz contacts --backbone {portable(dom.checkpoint)} --msa {portable(aln)} --out "
        f"{portable(folder)}/contacts.json`."
    )
    if not st.button("Compute the contact reading again" if again else "Compute the contact reading", key="fam_read"):
        return
    for stale in ("jacobian.npz", "attention.npz", "contact_classes.json"):  # a new budget: read anew
        (folder / stale).unlink(missing_ok=True)
    folder.mkdir(parents=True, exist_ok=True)
    bar = st.progress(0.0, text=f"Jacobian: 0 of {cost['states']} states")

    def progress(what: str, done: int, total: int) -> None:
        bar.progress(done / max(total, 1), text=f"{what}: {done} of {total} states")

    try:
        contact_reading(folder, dom.family, model, data, dom.contact_map, budget,
                        ["ardca", "plmdca"] if anchors else [], progress=progress)  # fmt: skip
    except (UserError, ValueError) as e:
        st.error(f"The contact reading failed: {e}")
        return
    bar.empty()
    st.rerun()


def generation_tab(families: dict[str, Backbone], label: str | None) -> None:
    if label is None:
        return
    try:
        fam = families[label].dom().family
    except (UserError, ValueError, OSError) as e:
        st.error(f"Cannot read this family backbone: {e}")
        return
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
    if "fam_trained" in st.session_state:  # the last training's outcome, kept across its rerun
        kind, text = st.session_state.pop("fam_trained")
        (st.success if kind == "success" else st.warning)(text)
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
        done = ("success", msg + f" Pick 'family {name}' above (its contacts) or on Protein decode.")
    else:
        done = ("warning", msg + " It does not yet predict held-out rows better than the alignment's own column "
                "frequencies: its MI maps will mean little. Train longer (the button resumes this run), or train on "
                "the command line with more minutes (`python -m mi_viz train-family`).")  # fmt: skip
    forget_families()
    forget_models()  # a family retrained under its old name is read afresh
    st.session_state["fam_trained"] = done  # said after the rerun that puts the new family in the picker
    st.rerun()
