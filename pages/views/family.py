"""A protein family's backbone (ProteinView.specialise): rows of the alignment's width, the
structure's contacts on the maps, generation judged by pair statistics; and the families page's
three tabs (contacts from MI, generation, training on your own alignment)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import streamlit as st

from mi_viz.core.samplers import SamplerConfig
from mi_viz.domains.family import BUILT_HERE, FamilyDomain, unbuilt_families
from mi_viz.domains.family.alignment import AlignmentError, parse_alignment, read_alignment
from mi_viz.domains.family.drawing import contact_map_figure
from mi_viz.domains.family.pairstats import FamilyReference
from mi_viz.domains.family.predictors import HOW, NAMES, committed_maps
from mi_viz.domains.family.scoring import state_precision
from mi_viz.domains.family.structure import ContactMap
from mi_viz.domains.family.train import data_for

from ..kit import caches
from ..kit.models import Backbone
from ..kit.runtime import RESULTS, ROOT
from ..kit.structure3d import structure_view
from ..kit.sweeps import SweepPlan
from ..kit.widgets import chart, pca_panel, sampling_row
from .base import Hint, Item
from .protein import ProteinView
from .protein_backbones import APP_FAMILIES, FAMILY_NAMES, protein_backbones

MAX_ROWS_APP, MAX_COLS_APP, MAX_MB = 5000, 200, 20
WHERE_ALIGNMENTS = (
    "An alignment comes from Pfam / InterPro (a family's page, 'Alignments': download the seed or the full "
    "alignment as FASTA) or from your own search (HHblits, jackhmmer, MMseqs2); the five families of "
    "`../shared/data/protein_families` (README there) are examples: `PF00595/PF00595.align.80.fasta` with "
    "its structure `2H3L_A.pdb` and column map."
)


def structure_of(dom: FamilyDomain) -> ContactMap:
    """The family's contact map; only asked for where the view offers a structure (a bug otherwise)."""
    if dom.contact_map is None:
        raise RuntimeError(f"family {dom.family}: a structure was asked for but the family has no contact map")
    return dom.contact_map


def family_alignment(dom: FamilyDomain) -> Path | None:
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


def unbuilt_notes() -> list[str]:
    """A line for each family kept out of the tree (its size) and not built on this machine yet."""
    return [
        f"{FAMILY_NAMES.get(fam, fam)} ({fam}) is not shipped: `make family-{fam}` builds its backbone and MI head "
        f"here ({BUILT_HERE[fam]}); its committed results are in docs/results-family.md."
        for fam in unbuilt_families()
    ]


class FamilyView(ProteinView[FamilyDomain]):
    def __init__(self, parent: ProteinView, b: Backbone | None = None):
        super().__init__()
        self.keys = {**parent.keys, "sweep": "fsw"}  # its sweep's widgets have other ranges than the protein's
        self.has_structure = True
        self.editable = False  # a row's gaps and columns are the alignment's: not offered (docs/app.md)

    def decode_input(self, key: str, dom: FamilyDomain) -> tuple[Item | None, str | None]:
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
            share = st.slider(
                "share masked", 0.05, 1.0, 0.3, 0.05, key=f"{key}_fshare",
                help="The share of the sequence's columns masked, at random, for the decode to fill.",
            )  # fmt: skip
            seed = st.number_input("mask seed", 0, 10_000, 0, key=f"{key}_fseed", help="Which columns are masked.")
            g = np.random.default_rng(int(seed))
            row = list(structure_of(dom).sequence)
            for i in g.choice(L, max(1, round(share * L)), replace=False):
                row[i] = "_"
            where = structure_of(dom).source.get("structure", "the structure")
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

    def compare_input(self, key: str, dom: FamilyDomain) -> tuple[Item | None, str | None, dict]:
        c = st.columns(3)
        c[0].metric("Columns (the alignment's width)", dom.width)
        prompt = "_" * dom.width
        return Item(prompt, prompt, f"{dom.width} columns"), None, sampling_row(c[1:], key)

    def labels(self, dom: FamilyDomain, item: Item, L: int) -> list[str]:
        return [dom.position_name(i, L) for i in range(L)]

    def contacts(self, dom: FamilyDomain) -> np.ndarray | None:
        return dom.contact_map.contacts() if dom.contact_map is not None else None

    def contact_caption(self, dom: FamilyDomain, masked, maps: dict) -> str:
        """This state's contact precision of each map among its masked columns."""
        parts = []
        for name, mp in maps.items():
            prec = state_precision(mp, masked, structure_of(dom)) if mp is not None else None
            if prec is not None:
                parts.append(f"{name} {prec[0]:.2f} (top {prec[1]} pairs)")
        return (
            "Red circles: residue contacts in " + structure_of(dom).source.get("structure", "the structure")
            + " (C-beta < 8 A, at least 6 residues apart along the chain). Contact precision of this state's "
            "map among its masked columns: " + ("; ".join(parts) if parts else "no scored pair is masked")
        )  # fmt: skip

    def state_extras(self, dom: FamilyDomain, key: str, masked, maps: dict, focus) -> None:
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

    def decode_extras(
        self, dom: FamilyDomain, key: str, item=None, trace=None, b=None, cfg=None, twin=None, twin_trace=None
    ) -> None:
        with st.expander("This family's MI averaged over natural rows, beside the structure's contacts"):
            averaged_map_view(dom, f"{key}_avg")

    def sweep_plan(self, key: str, b: Backbone, model, head, head_path, rows: dict) -> SweepPlan | None:
        """N members per setting, scored by pair statistics against the held-out rows of the
        family's alignment (which the user brings when this machine lacks it: never shipped)."""
        dom = b.dom()
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

        def judge(items: list):
            if path is not None:  # the split the contact reading made of the same file, when it did
                data = caches.cached("fam_data", (b.key, str(path)), lambda: data_for(dom.meta, read_alignment(path)))
            elif up is not None:
                data = data_for(dom.meta, parse_alignment(up.getvalue().decode(), up.name))
            else:
                raise AlignmentError("upload the alignment first")
            ref = FamilyReference(data.heldout_rows, data.train_rows)
            return dom.judge(model, ref, bootstrap=50), ref.floor()

        def floor(f: dict) -> None:
            st.caption(
                f"Natural vs natural (two halves of the held-out rows, {f['n']} each): "
                f"pair-correlation Pearson {f['pair_corr_pearson']:.3f}."
            )

        # mi-cap: the MI rule at most 8 columns a pass, the rule that keeps pair statistics best here
        # at matched passes (docs/results-family.md); it reads the head, when the family has one
        return SweepPlan(
            intro=f"Generate N members of {dom.family} (all masked at its {dom.width} columns, temperature 1) under "
            "each setting of a grid and score each set by **pair statistics** against the held-out rows of its "
            "alignment: the Pearson of the connected correlations C_ij(a, b) (what parallel decoding breaks), of "
            "the column frequencies, and the identity to the nearest training row (docs/results-family.md).",
            noun="members",
            n=(20, 300, 100, 20),
            grid="sequential; topk:k=4,8; eb:gamma=4" + ("; mi-cap:k=8:gamma=32:lam=300" if head is not None else ""),
            metric=("pair_corr_pearson", "Pearson of C_ij(a, b) vs held-out rows", "pair statistics vs passes"),
            inputs=lambda n: ["_" * dom.width] * n,
            passes=lambda n: (n * dom.width, 0),  # pair statistics need no pass
            probe=lambda: tuple(dom.encode(["_" * dom.width])[0].tolist()),
            file_name="family_sweep.csv",
            tag=dom.family,
            judge=judge,
            temperature=1.0,
            committed=(RESULTS / "family" / dom.family / "sweep.csv", "committed"),
            order=("track", [dom.position_name(i) for i in range(dom.width)]),
            after=floor,
        )

    def sweep_extras(self, key: str, dom: FamilyDomain) -> None:
        st.markdown(f"**Figure 3 for {dom.family}: generated members in the natural rows' principal components**")
        pca_panel(
            RESULTS / "family" / dom.family / "figure3.json.gz",
            f"{key}_{dom.family}",
            f"python -m benchmarks.family_figure3 --families {dom.family}",
            "the held-out natural rows",
        )


def reading_folder(dom: FamilyDomain) -> Path:
    """Where a family's contact reading lives: its committed results (results/family/NAME) when it
    has a contact report there, else the app's folder for it (runs/app_families/NAME.reading)."""
    committed = RESULTS / "family" / dom.family
    if (committed / "contact_classes.json").exists() or (committed / "contacts.npz").exists():
        return committed
    return APP_FAMILIES / f"{dom.family}.reading"


def averaged_map_view(dom: FamilyDomain, key: str) -> None:
    """A family's contact maps (every predictor's in its reading folder: predictors.committed_maps)
    above its structure's contacts, with a radio for which one, and the same top pairs on the
    structure in 3D; a message (and the command) when it has none yet."""
    cmap = dom.contact_map
    if cmap is None:
        st.info("This backbone ships no structure: train it with a PDB file to see contacts.")
        return
    maps = committed_maps(reading_folder(dom))
    if not maps:
        st.info(
            f"No contact reading for {dom.family} yet: the families page computes one (the Jacobian), and "
            f"`python -m mi_viz contacts --backbone {dom.checkpoint} --msa ALIGNMENT --out DIR/contacts.json` "
            "adds the conditional MI."
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


SPECIALISES = ("protein", FamilyView)  # a family backbone sits in the protein pages
