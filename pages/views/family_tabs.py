"""The families page's first two tabs (pages/families.py lays them out): a family backbone's MI
against a structure's contacts, and generation judged by pair statistics (the third, training a
family on your own alignment, is family_train.py). A family trained here gets the shipped
families' contact reading (family/reading.py) from a button on the first tab."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import streamlit as st

from mi_viz.core.errors import UserError
from mi_viz.core.paths import portable
from mi_viz.core.plots import SweepStyle, sweep_figure
from mi_viz.core.samplers import row_label
from mi_viz.domains.family import FamilyDomain
from mi_viz.domains.family.alignment import read_alignment
from mi_viz.domains.family.predictors import ANCHORS, NAMES
from mi_viz.domains.family.reading import JacobianBudget, contact_reading, jacobian_cost
from mi_viz.domains.family.train import data_for

from ..kit import caches
from ..kit.models import Backbone, backbone_model
from ..kit.runtime import RESULTS
from ..kit.sweeps import committed_rows
from ..kit.widgets import cancel_button, cancelled, chart
from .family import averaged_map_view, family_alignment, reading_folder, structure_of

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
    except UserError as e:
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


def reading_control(b: Backbone, dom: FamilyDomain, folder: Path, again: bool) -> None:
    """The contact reading of a family trained here: a budget (held-out rows), its cost stated
    before it starts, a progress bar and a Cancel button while it runs (nothing is half-written:
    each map is saved whole, the report last)."""
    aln = family_alignment(dom)
    if aln is None:
        st.info(
            f"The alignment {dom.family} was trained on is not on this machine: its contact reading needs "
            "its held-out rows (train it here, or put it in MI_VIZ_FAMILY_DATA/NAME/NAME.align.80.fasta)."
        )
        return
    try:
        data = caches.cached("fam_data", (b.key, str(aln)), lambda: data_for(dom.meta, read_alignment(aln)))
    except UserError as e:
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
    keeps = "no report was written (a report is written whole, at the end)"
    cancelled("Contact reading", "fam_read_cancel", keeps=keeps)  # the rerun a Cancel click made
    if not st.button("Compute the contact reading again" if again else "Compute the contact reading", key="fam_read"):
        return
    cancel_button("reading", "fam_read_cancel", keeps=keeps)
    for stale in ("jacobian.npz", "attention.npz", "contact_classes.json"):  # a new budget: read anew
        (folder / stale).unlink(missing_ok=True)
    folder.mkdir(parents=True, exist_ok=True)
    bar = st.progress(0.0, text=f"Jacobian: 0 of {cost['states']} states")

    def progress(what: str, done: int, total: int) -> None:
        bar.progress(done / max(total, 1), text=f"{what}: {done} of {total} states")

    try:
        contact_reading(folder, dom.family, model, data, structure_of(dom), budget,
                        ["ardca", "plmdca"] if anchors else [], progress=progress)  # fmt: skip
    except UserError as e:
        st.error(f"The contact reading failed: {e}")
        return
    bar.empty()
    st.rerun()


def generation_tab(families: dict[str, Backbone], label: str | None) -> None:
    if label is None:
        return
    try:
        fam = families[label].dom().family
    except UserError as e:
        st.error(f"Cannot read this family backbone: {e}")
        return
    sweep = RESULTS / "family" / fam / "sweep.csv"
    if not sweep.exists():
        st.info(f"No committed pair-statistics sweep for {fam} (`make family-results` makes them).")
        return
    rows = committed_rows(sweep)
    ylabel = "Pearson of C_ij(a, b), generated vs held-out rows"
    style = SweepStyle(metric="pair_corr_pearson", scale=1.0, ylabel=ylabel)
    chart(sweep_figure({"": rows}, style, f"{fam}: pair correlations against passes"), "fam_sweep")
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
