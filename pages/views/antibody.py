"""An antibody backbone (AntiBERTy, ProteinView.specialise): a V domain with a region masked, the
regions (IMGT, by riot-na) named on every map's axis and in the track's title."""

from __future__ import annotations

import json
import tempfile
from functools import lru_cache

import streamlit as st
import torch

from mi_viz.core.errors import UserError
from mi_viz.core.samplers import SamplerConfig, Trace
from mi_viz.domains.antibody import DATA, MASKS, Infill, chains_of, infill, read_infills
from mi_viz.domains.antibody import DOMAIN as ANTIBODY
from mi_viz.domains.antibody import SCOPE as ANTIBODY_SCOPE
from mi_viz.domains.antibody.chains import read_chains, read_user_chains
from mi_viz.domains.protein.drawing import track_figure

from ..kit.models import Backbone
from ..kit.runtime import RESULTS
from ..kit.sweeps import SweepPlan
from ..kit.widgets import report_metrics
from .base import Hint, Item
from .protein import ProteinView

UPLOAD_KB = 64
CHAIN_NAMES = {"igh": "heavy", "igk": "kappa", "igl": "lambda"}
MASK_HELP = (
    "cdr3: the third complementarity-determining region (IMGT 105-117); cdrs: all three CDRs (the frameworks "
    "kept: a new binder on a known scaffold); fwr1..fwr4, cdr1, cdr2: one region; or a 1-based span like 95-108."
)


NATURAL = DATA / "natural"
TEST_SET = NATURAL / "sabdab_test.tsv.gz"  # natural heavy chains (SAbDab's CDR-H3 cluster split, its test fold)
LIGHT_TEST_SET = NATURAL / "light_test.tsv.gz"  # CoV-AbDab's light chains, for a light-chain model (Sapiens VL)
SWEEP_SET = NATURAL / "sabdab_val.tsv.gz"  # the app's sweeps run on validation chains, as the committed one did


@lru_cache(maxsize=2)
def test_chains(light: bool = False) -> dict[str, tuple[str, str]]:
    """id -> (chain type, V domain) of the shipped natural test chains (heavy, or light)."""
    return {rid: (c.chain, c.sequence) for rid, c in read_chains(LIGHT_TEST_SET if light else TEST_SET)}


def region_of(it: Infill, i: int) -> str:
    for name, (s, e) in it.regions.items():
        if s <= i < e:
            return name.upper()
    return ""


class AntibodyView(ProteinView):
    estimator_label = "AntiBERTy (antibody CDRs)"
    eb_presets = (2.0, 4.0)  # a CDR3 position carries about 2-2.8 nats under AntiBERTy

    def __init__(self, parent: ProteinView, b: Backbone | None = None):
        super().__init__()
        self.spec = str(b.spec) if b is not None and b.spec else "antiberty"  # which masked LM reads the chains
        self.scope = ANTIBODY_SCOPE.get(self.spec)
        self.keys = {**parent.keys, "sweep": "asw"}  # its sweep's widgets have other ranges than the protein's

    def _region(self, key: str) -> str:
        c = st.columns([2, 1])
        choice = c[0].selectbox("Region to infill", [*MASKS, "a span"], key=f"{key}_region", help=MASK_HELP)
        if choice != "a span":
            return choice
        return c[1].text_input("Span (1-based, e.g. 95-108)", "95-108", key=f"{key}_span")

    def _chain(self, key: str) -> tuple[str | None, str, str]:
        """(id, chain, where from), or (None, None, a message)."""
        mode = st.radio(
            "Chain", ["A test chain (natural, SAbDab)", "Paste or upload your own V domain"], key=f"{key}_src"
        )
        if mode.startswith("A test chain"):
            chains = test_chains(light=self.scope is not None and "igh" not in self.scope.loci)
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
        if it.numbered is not None:  # what the numbering called it, and what it trimmed or could only guess
            st.caption(f"{it.numbered.describe()} (riot-na, IMGT); {len(it.sequence)} residues in the V domain")
        if it.note:
            st.info(it.note[0].upper() + it.note[1:] + ".")
        if self.scope is not None and (outside := self.scope.warning(self.spec, it.numbered)):
            st.warning(outside[0].upper() + outside[1:] + ": its infill and maps are read outside its training data.")
        label = f"{rid}, {CHAIN_NAMES.get(it.locus, it.locus)} chain ({where}), {mask} masked ({int(it.masked.sum())})"
        return Item(f"{rid}:{it.sequence}:{mask}", it, label, solution=it.sequence), None

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

    def state_figure(self, dom, item: Item, trace: Trace, t: int, focus=None, title: str = "", small: bool = False):
        it: Infill = item.value
        seq = dom.decode(torch.tensor([trace.tokens_at(t)]))[0]
        sel = trace.steps[t - 1].selected if 0 < t <= len(trace.steps) else []
        regions = " · ".join(f"{n.upper()} {s + 1}-{e}" for n, (s, e) in it.regions.items())
        return track_figure(seq, selected=sel, focus=focus, title=(title + " " if title else "") + regions, width=900)

    def presets(self, dom, has_head: bool) -> tuple[dict, list[str]]:
        presets, start = super().presets(dom, has_head)
        presets = {k: v for k, v in presets.items() if not k.startswith("top-k k=8")}
        presets["top-k k=3"] = SamplerConfig("topk", k=3)
        return presets, start

    def mi_presets(self) -> dict:
        return {"MI gamma=4 lam=1": SamplerConfig("mi", gamma=4.0, lam=1.0)}

    # --- sweeps and the estimator -------------------------------------------------------------------------------
    def sweep_plan(self, key: str, b: Backbone, model, head, head_path, rows: dict) -> SweepPlan | None:
        """N natural validation heavy chains with a region infilled at temperature 1 under each setting,
        judged by the infill's pseudo-log-likelihood under AntiBERTy and Sapiens, beside the committed
        128-chain validation sweep."""
        dom = b.dom()
        mask = st.selectbox("Region", ["cdr3", "cdrs"], key=f"{key}_mask")
        masked = (
            14 if mask == "cdr3" else 37
        )  # residues infilled a chain, on average (data/antibody/natural/natural.json)
        return SweepPlan(
            intro="Infill a region of the first N natural validation heavy chains (SAbDab, "
            "`data/antibody/natural/sabdab_val.tsv.gz`) at temperature 1 under each setting of a grid; judged by "
            "the infill's pseudo-log-likelihood under AntiBERTy (nats a residue, higher is more coherent) and "
            "under Sapiens (a judge that did not generate), OLGA's log10 Pgen of human heavy CDR3s when OLGA is "
            "installed, and recovery of the natural residues.",
            noun="chains",
            n=(2, 32, 8, 1),
            grid="sequential; topk:k=3; eb:gamma=4; mi:gamma=4,8:lam=1",
            metric=("pll", "infill pseudo-log-likelihood (nats / residue)", "PLL vs average passes"),
            inputs=lambda n: chains_of(SWEEP_SET, mask, n),
            upload=lambda text: own_chains(text, mask),
            file_name=f"antibody_{mask}_sweep.csv",
            tag=mask,
            judge=lambda items: (dom.judge(model, items=items, unirep=False, jsd=False), {}),
            temperature=1.0,
            committed=(RESULTS / "antibody" / "val_sweep" / "sweep.csv", "committed, 128 validation chains")
            if mask == "cdr3"
            else None,
            passes=lambda n: (n * masked, n * masked),  # the judge's PLL: a pass a residue
            probe=lambda: first_state(mask),
            caption="Higher is better. Sequential infill scores above the natural chains' own CDR3s (the model's "
            "likeliest residues first); what a parallel rule loses shows as a drop at fewer passes.",
        )

    def sweep_extras(self, key: str, dom) -> None:
        """Nothing of the small protein model's (its Figure 3 is not AntiBERTy's): the antibody sweep
        stands with its committed validation rows."""

    def estimator(self, key: str) -> None:
        """The antibody head against exact ground truth on held-out CDR3 states (the committed report)."""
        report = RESULTS / "antibody" / "mi_report.json"  # natural test chains (make antibody-results)
        if not report.exists():
            st.info("No committed antibody MI report yet (`make antibody-results`).")
            return
        rep = json.loads(report.read_text())
        report_metrics(rep, ("head / one pass", f"{100 * rep['head_over_forward']:.1f} %"))
        st.caption(
            f"AntiBERTy with `checkpoints/antibody_mi_head`: {rep['n_pairs']:,} masked pairs of {rep['n_states']} "
            f"held-out states of natural test chains ({rep.get('chains', 'test chains')}; CDR3 masked, and states "
            f"of EB infills; {rep['avg_masked']:.1f} masked on average). Ground truth: "
            f"{rep['gt_passes_per_state']:.0f} passes, {rep['gt_seconds_per_state']:.0f} s a state on "
            f"{rep['torch_threads']} thread{'s' * (rep['torch_threads'] > 1)}; the head: one pass. Beside it, maps "
            "anyone could draw: 1/|i-j| (Pearson "
            f"{rep.get('pearson_baseline_separation', float('nan')):.3f}) and sqrt(H_i H_j)/|i-j| "
            f"({rep.get('pearson_baseline_entropy_separation', float('nan')):.3f}). Any state's maps side by side: "
            "the protein decode page with the AntiBERTy backbone (ground truth on demand)."
        )


def own_chains(text: str, mask: str) -> tuple[list[Infill], list[str]]:
    """A user's FASTA of V domains for a sweep: each numbered, trimmed and masked; what the numbering
    refuses set aside by name (a TCR, not an antibody, ...), at most 32 chains."""
    with tempfile.NamedTemporaryFile("w", suffix=".fasta") as f:
        f.write(text)
        f.flush()
        got = read_infills(f.name, mask)
    notes = [f"Set aside {rid}: {why}" for rid, why in got.skipped]
    trimmed = sum(1 for it in got.items if it.numbered is not None and it.numbered.trimmed != (0, 0))
    if trimmed:
        notes.append(f"{trimmed} chains trimmed to their V domain (a constant region or leader cut).")
    if len(got.items) > 32:
        notes.append(f"The first 32 of {len(got.items)} chains are swept (a sweep here is for a few dozen).")
    return got.items[:32], notes


@lru_cache(maxsize=4)
def first_state(mask: str) -> tuple:
    """The first test chain with `mask` masked, as tokens: the state a sweep's cost is timed on."""
    return tuple(ANTIBODY.encode(chains_of(SWEEP_SET, mask, 1))[0].tolist())
