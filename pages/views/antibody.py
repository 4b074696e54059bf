"""An antibody backbone (AntiBERTy, ProteinView.specialise): a V domain with a region masked, the
regions (IMGT, by riot-na) named on every map's axis and in the track's title."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import streamlit as st
import torch

from mi_viz.core.errors import UserError
from mi_viz.core.samplers import SamplerConfig, Trace
from mi_viz.domains.antibody import DATA, MASKS, Infill, infill
from mi_viz.domains.antibody.chains import read_chains, read_user_chains
from mi_viz.domains.protein.drawing import track_figure

from .base import Hint, Item
from .protein import ProteinView

UPLOAD_KB = 64
CHAIN_NAMES = {"igh": "heavy", "igk": "kappa", "igl": "lambda"}
MASK_HELP = (
    "cdr3: the third complementarity-determining region (IMGT 105-117); cdrs: all three CDRs (the frameworks "
    "kept: a new binder on a known scaffold); fwr1..fwr4, cdr1, cdr2: one region; or a 1-based span like 95-108."
)


@lru_cache(maxsize=1)
def test_chains() -> dict[str, tuple[str, str]]:
    """id -> (chain type, V domain) of the shipped test chains."""
    return {rid: (c.chain, c.sequence) for rid, c in read_chains(DATA / "test.tsv")}


def region_of(it: Infill, i: int) -> str:
    for name, (s, e) in it.regions.items():
        if s <= i < e:
            return name.upper()
    return ""


class AntibodyView(ProteinView):
    eb_presets = (2.0, 4.0)  # a CDR3 position carries about 2-2.8 nats under AntiBERTy

    def __init__(self, parent: ProteinView):
        super().__init__()
        self.keys = parent.keys
        self.map_scales = ("per step", 0.1, 0.3, 1.0)
        self.map_scale = 0.3  # pair MI inside a CDR3: 0.2-0.5 nats in its middle (docs/results-antibody.md)
        self.legend = "orange: the residues chosen at this step · grey: still masked (the region being infilled)"

    def _region(self, key: str) -> str:
        c = st.columns([2, 1])
        choice = c[0].selectbox("Region to infill", [*MASKS, "a span"], key=f"{key}_region", help=MASK_HELP)
        if choice != "a span":
            return choice
        return c[1].text_input("Span (1-based, e.g. 95-108)", "95-108", key=f"{key}_span")

    def _chain(self, key: str) -> tuple[str | None, str, str]:
        """(id, chain, where from), or (None, None, a message)."""
        mode = st.radio(
            "Chain", ["A test chain (natural-like, OLGA)", "Paste or upload your own V domain"], key=f"{key}_src"
        )
        if mode.startswith("A test chain"):
            chains = test_chains()
            rid = st.selectbox(
                "Test chain",
                list(chains),
                key=f"{key}_chain",
                format_func=lambda r: f"{r} ({CHAIN_NAMES.get('ig' + chains[r][0][0], chains[r][0])})",
            )
            return rid, chains[rid][1], "test chain"
        text = st.text_area("A heavy or light V domain (amino acids; FASTA works too)", key=f"{key}_text", height=90)
        up = st.file_uploader(
            f"... or a FASTA file (its first record; at most {UPLOAD_KB} KB)",
            type=["fasta", "fa", "txt"],
            key=f"{key}_file",
            max_upload_size=1,
        )
        if up is not None:
            if up.size > UPLOAD_KB * 1024:
                return None, "", f"{up.name} is larger than {UPLOAD_KB} KB: upload the one chain."
            text = up.getvalue().decode("utf-8", errors="replace")
        if not text or not text.strip():
            return None, "", Hint("Paste a heavy or light chain's V domain to start.")
        try:
            rid, seq = read_user_chains(text)[0]
        except UserError as e:
            return None, "", str(e)
        return rid, seq, "your chain"

    def _item(self, key: str) -> tuple[Item | None, str | None]:
        rid, seq, where = self._chain(key)
        if rid is None:
            return None, where
        mask = self._region(key)
        try:
            it = infill(rid, seq, mask)
        except UserError as e:
            return None, str(e)
        label = f"{rid}, {CHAIN_NAMES.get(it.locus, it.locus)} chain ({where}), {mask} masked ({int(it.masked.sum())})"
        return Item(f"{rid}:{seq}:{mask}", it, label, solution=seq), None

    def decode_input(self, key: str, dom) -> tuple[Item | None, str | None]:
        st.subheader("Input")
        return self._item(key)

    def compare_input(self, key: str, dom) -> tuple[Item | None, str | None, dict]:
        item, problem = self._item(key)
        c = st.columns(2)
        temperature = c[0].slider("temperature", 0.1, 2.0, 1.0, 0.1, key=f"{key}_temp")
        seed = c[1].number_input("seed", 0, 10_000, 0, key=f"{key}_seed")
        return item, problem, {"temperature": float(temperature), "seed": int(seed)}

    def labels(self, dom, item: Item, L: int) -> list[str]:
        it: Infill = item.value
        return [f"position {i + 1} {region_of(it, i)}".strip() for i in range(L)]

    def map_labels(self, dom, item: Item, trace: Trace, t: int) -> list[str]:
        """The maps' axis names: the position, its residue once decoded, and its IMGT region."""
        it: Infill = item.value
        before = dom.decode(torch.tensor([trace.steps[t].tokens]))[0]
        return [
            f"{i + 1}{before[i] if before[i] != '_' else ''} {region_of(it, i)}".strip() for i in range(len(before))
        ]

    def state_figure(self, dom, item: Item, trace: Trace, t: int, focus=None, title: str = "", small: bool = False):
        it: Infill = item.value
        seq = dom.decode(torch.tensor([trace.tokens_at(t)]))[0]
        sel = trace.steps[t - 1].selected if 0 < t <= len(trace.steps) else []
        regions = " · ".join(f"{n.upper()} {s + 1}-{e}" for n, (s, e) in it.regions.items())
        return track_figure(seq, selected=sel, focus=focus, title=(title + " " if title else "") + regions, width=900)

    def metrics(self, dom, item: Item, trace: Trace, t: int) -> list[tuple[str, object]]:
        it: Infill = item.value
        now = dom.decode(torch.tensor([trace.tokens_at(t + 1)]))[0]
        m = it.masked
        written = [(a, b) for a, b, k in zip(now, it.sequence, m) if k and a != "_"]
        same = np.mean([a == b for a, b in written]) if written else float("nan")
        return [
            *super().metrics(dom, item, trace, t),
            ("Same as the natural chain so far", "-" if not written else f"{100 * same:.0f} %"),
        ]

    def presets(self, dom, has_head: bool) -> tuple[dict, list[str]]:
        presets, start = super().presets(dom, has_head)
        presets = {k: v for k, v in presets.items() if not k.startswith("top-k k=8")}
        presets["top-k k=3"] = SamplerConfig("topk", k=3)
        return presets, start

    def mi_presets(self) -> dict:
        return {"MI gamma=4 lam=1": SamplerConfig("mi", gamma=4.0, lam=1.0)}
