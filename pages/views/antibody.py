"""An antibody backbone (AntiBERTy, ProteinView.specialise): a V domain with a region masked, the
regions (IMGT, by riot-na) named on every map's axis and in the track's title."""

from __future__ import annotations

import dataclasses
import json
import tempfile
from functools import lru_cache

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
import torch

from mi_viz.core.errors import InputError, UserError
from mi_viz.core.mi_report import read_pairs
from mi_viz.core.samplers import Batching, SamplerConfig, Trace, decode
from mi_viz.domains.antibody import DATA, MASKS, AntibodyDomain, Infill, chains_of, infill, read_infills
from mi_viz.domains.antibody import DOMAIN as ANTIBODY
from mi_viz.domains.antibody import SCOPE as ANTIBODY_SCOPE
from mi_viz.domains.antibody.chains import read_chains, read_user_chains
from mi_viz.domains.antibody.judge import SAPIENS_OF, chain_pll, residue_log_likelihoods
from mi_viz.domains.protein.alphabet import PROTEIN_ALPHABET
from mi_viz.domains.protein.drawing import CLUSTALX, track_figure
from mi_viz.domains.protein.report import separation_profile
from mi_viz.lm.masked_lm import load_masked_lm

from ..kit import caches
from ..kit.models import Backbone, backbone_model, head_model
from ..kit.runtime import RESULTS
from ..kit.sweeps import SweepPlan
from ..kit.widgets import carried, chart, plain, report_metrics, sampling_row, tv_measure, uploaded_text
from .base import Hint, Item, PagePlan, View
from .protein import ProteinView
from .protein_backbones import protein_backbones
from .protein_estimator import pair_plots

UPLOAD_KB = 64
AMINO_ORDER = "ACDEFGHIKLMNPQRSTVWY"
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


def runs(flags: list[bool]) -> list[tuple[int, int]]:
    """[(start, end exclusive)] of the runs of True."""
    out, start = [], None
    for i, f in enumerate([*flags, False]):
        if f and start is None:
            start = i
        elif not f and start is not None:
            out.append((start, i))
            start = None
    return out


def region_of(it: Infill, i: int) -> str:
    for name, (s, e) in it.regions.items():
        if s <= i < e:
            return name.upper()
    return ""


class AntibodyView(ProteinView[AntibodyDomain]):
    estimator_label = "AntiBERTy (antibody CDRs)"
    eb_presets = (2.0, 4.0)  # a CDR3 position carries about 2-2.8 nats under AntiBERTy

    def exports(self, dom, item: Item, trace, cfg, stem: str) -> list:
        """The decoded V domain as FASTA, its header saying what was trimmed from the chain as given (a
        constant region or leader is not decoded, so it is not in the file: said, not silently dropped)."""
        final = dom.decode(torch.tensor([trace.final]))[0]
        n = getattr(item.value, "numbered", None)
        cut = ""
        if n is not None and n.trimmed != (0, 0):
            cut = f" (the V domain, IMGT 1-128; trimmed from the chain as given: {n.note})"
        fasta = f">mi-viz {item.label} {cfg.label()} passes={trace.steps[-1].passes}{cut}\n{final}\n"
        return [("The decoded V domain (FASTA)", fasta, f"{stem}.fasta", "text/plain")]

    def __init__(self, parent: ProteinView, b: Backbone | None = None):
        super().__init__()
        self.spec = str(b.spec) if b is not None and b.spec else "antiberty"  # which masked LM reads the chains
        self.b = b  # the backbone whose PLL judges a compared row
        self.scope = ANTIBODY_SCOPE.get(self.spec)
        self.keys = {**parent.keys, "sweep": "asw"}  # its sweep's widgets have other ranges than the protein's

    def rows_key(self, key: str) -> str:
        """Each antibody backbone keeps its own comparison rows: its presets (EB budgets, a DEMASK row where
        a TV head is) are not the protein pages' and differ between AntiBERTy and Sapiens."""
        return f"{key}_{self.spec}"

    def _input(self, key: str, widget, label: str, name: str, default, options=None, **kw):
        """An input widget: on the antibody pages carried from one to the other (widgets.carried; key
        ab_NAME_PAGE), on the protein pages the page's own (key PAGE_NAME)."""
        if key in (PAGE_KEYS["decode"], PAGE_KEYS["compare"]):
            return carried(widget, label, f"{SHARED}_{name}", default, key, options, **kw)
        if options is not None:
            return widget(label, list(options), index=list(options).index(default), key=f"{key}_{name}", **kw)
        return widget(label, **({"value": default} if default != "" else {}), key=f"{key}_{name}", **kw)

    def _region(self, key: str) -> str:
        c = st.columns([2, 1])
        choices = [*MASKS, "a span"]
        choice = self._input(key, c[0].selectbox, "Region to infill", "region", choices[0], choices, help=MASK_HELP)
        if choice != "a span":
            return choice
        return self._input(key, c[1].text_input, "Span (1-based, e.g. 95-108)", "span", "95-108")

    def _chain(self, key: str) -> tuple[str | None, str, str]:
        """(id, chain, where from), or (None, None, a message)."""
        modes = ["A test chain (natural, SAbDab)", "Paste or upload your own V domain"]
        mode = self._input(key, st.radio, "Chain", "src", modes[0], modes)
        if mode.startswith("A test chain"):
            light = self.scope is not None and "igh" not in self.scope.loci
            chains = test_chains(light=light)
            name = lambda r: f"{r} ({CHAIN_NAMES.get('ig' + chains[r][0][0], chains[r][0])})"  # noqa: E731
            rid = self._input(key, st.selectbox, "Test chain", "chain_light" if light else "chain",
                              next(iter(chains)), list(chains), format_func=name)  # fmt: skip
            return rid, chains[rid][1], "test chain"
        text = self._input(key, st.text_area, "A heavy or light V domain (amino acids; FASTA works too)", "text", "",
                           height=90)  # fmt: skip
        got, name = uploaded_text(f"... or a FASTA file (its first record; at most {UPLOAD_KB} KB)", f"{key}_file",
                                  UPLOAD_KB)  # fmt: skip
        if got is None and name is not None:
            return None, "", name  # over the limit: said
        text = got if got is not None else text
        if not text or not text.strip():
            return None, "", Hint("Paste a heavy or light chain's V domain to start.")
        try:
            recs = read_user_chains(text, check=False)
        except UserError as e:
            return None, "", str(e)
        if len(recs) == 1:
            try:
                rid, seq = read_user_chains(text)[0]
            except UserError as e:
                return None, "", str(e)
            return rid, seq, "your chain"
        return self._pick_chain(key, recs)

    def _pick_chain(self, key: str, recs: list[tuple[str, str]]) -> tuple[str | None, str, str]:
        """Several chains pasted: those that can be numbered offered in a picker, the others named (the
        first one bad does not stop the rest); a heavy and a light chain are decoded one at a time."""
        ok, bad = numberable(tuple(recs))
        if bad:
            st.warning(plain(f"Not offered: {'; '.join(bad)}."))
        if not ok:
            return None, "", f"None of the {len(recs)} chains pasted can be numbered as an antibody V domain."
        names = [rid for rid, _ in ok]
        rid = self._input(
            key, st.selectbox, f"Chain to decode ({len(ok)} of {len(recs)} pasted)", "pick", names[0], names
        )
        st.caption(
            "One chain at a time: no shipped backbone reads a heavy and a light chain together (AntiBERTy and "
            "Sapiens were trained on single V domains), so a VH/VL pair is two decodes, not one paired infill."
        )
        return rid, dict(ok)[rid], "your chains"

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
            st.caption(f"{plain(it.numbered.describe())} (riot-na, IMGT); {len(it.sequence)} residues in the V domain")
        if it.note:
            st.info(plain(it.note[0].upper() + it.note[1:] + "."))
        if self.scope is not None and (outside := self.scope.warning(self.spec, it.numbered)):
            st.warning(
                plain(outside[0].upper() + outside[1:]) + ": its infill and maps are read outside its training data."
            )
        label = f"{rid}, {CHAIN_NAMES.get(it.locus, it.locus)} chain ({where}), {mask} masked ({int(it.masked.sum())})"
        return Item(f"{rid}:{it.sequence}:{mask}", it, label, solution=it.sequence), None

    def decode_input(self, key: str, dom: AntibodyDomain) -> tuple[Item | None, str | None]:
        st.subheader("Input")
        return self._item(key)

    def compare_input(self, key: str, dom: AntibodyDomain) -> tuple[Item | None, str | None, dict]:
        item, problem = self._item(key)
        return item, problem, sampling_row(st.columns(2), key)

    def edited(
        self, dom: AntibodyDomain, item: Item, tokens: list[int], pos: int, value: int | None, step: int
    ) -> Item:
        """The chain after `step` passes with one residue set (or masked again): the residues still
        masked become the region to infill; the chain keeps the native residue under each of them, so
        recovery and the native's PLL still read it."""
        it: Infill = item.value
        state = dom.decode(torch.tensor([tokens]))[0]  # '_' where masked
        masked = [c == "_" for c in state]
        masked[pos] = value is None
        letters = [it.sequence[i] if m else state[i] for i, m in enumerate(masked)]
        if value is not None:
            letters[pos] = dom.value_names[value]
        if not any(masked):
            raise InputError("after that edit no residue is masked: nothing would be infilled")
        spans = tuple(runs(masked))
        name = self.labels(dom, item, len(state))[pos]
        what = f"{name} = {letters[pos]}" if value is not None else f"{name} masked again"
        edited = dataclasses.replace(it, sequence="".join(letters), spans=spans, mask=f"{it.mask}, from step {step}")
        label = f"{item.label}, after step {step} with {what}"
        origin = item.origin if item.origin is not None else it  # a second edit is judged on the first input
        marked = tuple(p for p in item.marked if p != pos) + ((pos,) if value is not None else ())
        return Item(f"{item.key} | {label} | {''.join(letters)} | {spans}", edited, label, origin=origin, marked=marked)

    def compare_row(self, dom: AntibodyDomain, item: Item, trace: Trace, t: int) -> dict:
        """A compared row judged where it is shown: its infilled region (IMGT), recovery of the native, and
        the PLL of its final design under the backbone and under the judge that did not generate."""
        it: Infill = item.value
        final = dom.decode(torch.tensor([trace.final]))[0]
        pos = np.flatnonzero(it.masked)
        where = imgt_span(it, int(pos[0]), int(pos[-1]) + 1)
        row = {f"infilled ({where})": "".join(final[i] for i in pos),
               "max residues per pass": max(len(s.selected) for s in trace.steps)}  # fmt: skip
        if self.b is not None:
            sc = design_scores(it, final, self.b)
            row["recovery"] = f"{100 * sc['recovery']:.0f} %"
            for judge, (d, _) in sc["judges"].items():
                row[f"PLL · {judge.split(' · ')[0]}"] = round(d, 3)
        return row

    def labels(self, dom: AntibodyDomain, item: Item, L: int) -> list[str]:
        """Each residue by its IMGT number and region ("111A CDR3"); #n (its place in the chain) where
        the numbering left it unnumbered."""
        it: Infill = item.value
        imgt = it.numbered.imgt if it.numbered is not None else ()
        return [f"{imgt[i] if i < len(imgt) and imgt[i] else f'#{i + 1}'} {region_of(it, i)}".strip() for i in range(L)]

    def regions(self, dom: AntibodyDomain, item: Item) -> list[tuple[str, int, int]] | None:
        return [(name, s, e) for name, (s, e) in item.value.regions.items()] or None

    def state_figure(
        self, dom: AntibodyDomain, item: Item, trace: Trace, t: int, focus=None, title: str = "", small: bool = False
    ):
        it: Infill = item.value
        seq = dom.decode(torch.tensor([trace.tokens_at(t)]))[0]
        sel = trace.steps[t - 1].selected if 0 < t <= len(trace.steps) else []
        regions = " · ".join(f"{n.upper()} {imgt_span(it, s, e)}" for n, (s, e) in it.regions.items())
        return track_figure(seq, selected=sel, focus=focus, title=(title + " " if title else "") + regions, width=900)

    def presets(self, dom: AntibodyDomain, has_head: bool) -> tuple[dict, list[str]]:
        presets, start = super().presets(dom, has_head)
        presets = {k: v for k, v in presets.items() if not k.startswith("top-k k=8")}
        presets["top-k k=3"] = SamplerConfig("topk", k=3)
        return presets, start

    def mi_presets(self) -> dict:
        return {"MI gamma=4 lam=1": SamplerConfig("mi", gamma=4.0, lam=1.0)}

    def decode_extras(
        self, dom: AntibodyDomain, key: str, item=None, trace=None, b=None, cfg=None, twin=None, twin_trace=None
    ) -> None:
        """The design beside the native: the region as decoded under the natural chain's own residues,
        recovery and both pseudo-log-likelihoods under the backbone; then N sampled infills of the same
        chain (seeds 0..N-1) as a logo of the region."""
        if item is None or trace is None or b is None:
            return
        # after an edit the design is judged over the whole region of the input it was made from (the
        # residue the user set included, marked), not only over what the edited state left masked
        it: Infill = item.origin if item.origin is not None else item.value
        final = dom.decode(torch.tensor([trace.final]))[0]
        if twin is not None and twin_trace is not None:
            st.subheader("Each half's design beside the native chain")
            right = dom.decode(torch.tensor([twin_trace.final]))[0]
            halves_judged(it, (f"left: {cfg.label() if cfg else ''}", final), (f"right: {twin.label()}", right), b,
                          item.marked)  # fmt: skip
        else:
            st.subheader("The design beside the native chain")
            native_beside_design(it, final, b, key, item.marked)
        if twin is None:
            residue_track(it, final, b, key)
        if cfg is not None and cfg.temperature > 0:
            sample_logo(item.value, b, cfg, key)  # samples of the state decoded (an edited one as edited)

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

    def sweep_extras(self, key: str, dom: AntibodyDomain) -> None:
        """Nothing of the small protein model's (its Figure 3 is not AntiBERTy's): the antibody sweep
        stands with its committed validation rows."""

    def estimator(self, key: str) -> None:
        """Each antibody head against exact ground truth on held-out CDR3 states of natural test chains
        (the committed reports): AntiBERTy's or Sapiens VH's, the MI head or DEMASK's TV head."""
        c = st.columns(2)
        model = c[0].radio("Antibody model", list(HEAD_REPORTS), horizontal=True, key=f"{key}_abmodel")
        measure = c[1].radio("Head", list(HEAD_REPORTS[model]), horizontal=True, key=f"{key}_abmeasure")
        report, command, head = HEAD_REPORTS[model][measure]
        path = RESULTS / "antibody" / report
        if not path.exists():
            st.info(f"No committed report for {model}'s {measure} head yet (`{command}`).")
            return
        rep = json.loads(path.read_text())
        report_metrics(rep, ("head / one pass", f"{100 * rep['head_over_forward']:.1f} %"))
        what = tv_measure("residue") if rep.get("target") == "tv" else "pairwise conditional MI (nats)"
        st.caption(
            f"{model} with `checkpoints/{head}`, reading {what}: {rep['n_pairs']:,} masked pairs of "
            f"{rep['n_states']} held-out states of natural test chains ({rep.get('chains', 'test chains')}; CDR3 "
            f"masked, and states of EB infills; {rep['avg_masked']:.1f} masked on average). Ground truth: "
            f"{rep['gt_passes_per_state']:.0f} passes, {rep['gt_seconds_per_state']:.0f} s a state on "
            f"{rep['torch_threads']} thread{'s' * (rep['torch_threads'] > 1)}; the head: one pass. Beside it, maps "
            "anyone could draw: 1/|i-j| (Pearson "
            f"{rep.get('pearson_baseline_separation', float('nan')):.3f}) and sqrt(H_i H_j)/|i-j| "
            f"({rep.get('pearson_baseline_entropy_separation', float('nan')):.3f}); mean absolute error "
            f"{rep['mae']:.4f}. Any state's maps side by side: the Antibody decode page with this model "
            "(ground truth on demand)."
        )
        pairs = path.with_name(path.stem + "_pairs.npz")  # every masked pair, when the report kept them (--pairs)
        if not pairs.exists():
            st.caption(f"The pairs behind these figures are not committed (`{command}` with `--pairs {pairs.name}`).")
            return
        pt, _ = read_pairs(pairs)
        unit = "TV" if rep.get("target") == "tv" else "nats"
        pair_plots(pt, pd.DataFrame(separation_profile(pt)), key, "TV" if unit == "TV" else "MI", unit)


# model -> head -> (its committed report under results/antibody, the command that makes it, the shipped head)
HEAD_REPORTS = {
    "AntiBERTy": {
        "MI": ("mi_report.json", "make results/antibody/mi_report.json", "antibody_mi_head"),
        "TV influence (DEMASK)": ("tv_report.json", "make results/antibody/tv_report.json", "antibody_tv_head"),
    },
    "Sapiens VH": {
        "MI": ("sapiens/mi_report.json", "make results/antibody/sapiens/mi_report.json", "antibody_sapiens_vh_mi_head"),
        "TV influence (DEMASK)": (
            "sapiens/tv_report.json",
            "make results/antibody/sapiens/tv_report.json",
            "antibody_sapiens_vh_tv_head",
        ),
    },
}


def region_pll(b: Backbone, sequence: str, mask: tuple[bool, ...]) -> float:
    """The masked residues' pseudo-log-likelihood of a chain under this backbone, kept for the server's life."""
    return caches.cached(
        "antibody_pll",
        (b.key, sequence, mask),
        lambda: chain_pll(backbone_model(b), sequence, np.array(mask, dtype=bool)),
        max_entries=256,
    )


def imgt_span(it: Infill, s: int, e: int) -> str:
    """Residues s..e-1 of the V domain by their IMGT numbers ("IMGT 105-117"), as the decode page labels
    them; by their place in the chain where the numbering left them unnumbered."""
    imgt = it.numbered.imgt if it.numbered is not None and it.numbered.imgt else ()
    if imgt and imgt[s] and imgt[e - 1]:
        return f"IMGT {imgt[s]}-{imgt[e - 1]}"
    return f"residues {s + 1}-{e}"


JUDGE_NAMES = {"antiberty": "AntiBERTy", "sapiens-vh": "Sapiens VH", "sapiens-vl": "Sapiens VL"}


@lru_cache(maxsize=32)  # every rerun of the page asks again: each pasted set is numbered once
def numberable(recs: tuple[tuple[str, str], ...]) -> tuple[list[tuple[str, str]], list[str]]:
    """Pasted chains split into those that read as amino acids and number as a V domain (id, chain) and
    the others, each named with why."""
    ok, bad = [], []
    for rid, seq in recs:
        try:
            read_user_chains(f">{rid}\n{seq}")
            infill(rid, seq, "cdr3")
            ok.append((rid, seq))
        except UserError as e:
            bad.append(f"{rid} ({e})")
    return ok, bad


def other_judge(it: Infill, b: Backbone) -> str | None:
    """The pretrained antibody LM that did not generate, for this chain: Sapiens (its heavy or light model,
    by the chain's type) beside AntiBERTy, AntiBERTy beside Sapiens; None for another backbone."""
    if b.spec == "antiberty":
        return SAPIENS_OF.get(it.locus)
    return "antiberty" if str(b.spec).startswith("sapiens") else None


def judge_pll(spec: str, sequence: str, mask: tuple[bool, ...]) -> float | None:
    """The masked residues' PLL under a pretrained antibody LM by name (loaded once); None if it is not installed."""

    def run() -> float | None:
        try:
            model = caches.cached("antibody_judge", spec, lambda: load_masked_lm(spec, PROTEIN_ALPHABET), max_entries=4)
        except UserError:
            return None
        return chain_pll(model, sequence, np.array(mask, dtype=bool))

    return caches.cached("antibody_judge_pll", (spec, sequence, mask), run, max_entries=256)


def design_scores(it: Infill, final: str, b: Backbone) -> dict:
    """A design's recovery of the native and the PLL of design and native under the backbone and under the
    judge that did not generate (a pass a masked residue each, kept for the server's life)."""
    m = tuple(bool(v) for v in it.masked)
    pos = np.flatnonzero(it.masked)
    judges: dict[str, tuple[float, float]] = {b.label: (region_pll(b, final, m), region_pll(b, it.sequence, m))}
    out = {"recovery": float(np.mean([it.sequence[i] == final[i] for i in pos])), "judges": judges}
    other = other_judge(it, b)
    if other is not None:
        d, n = judge_pll(other, final, m), judge_pll(other, it.sequence, m)
        if d is not None and n is not None:
            judges[JUDGE_NAMES.get(other, other) + " (did not generate)"] = (d, n)
    return out


def _region_text(it: Infill, final: str, marked: tuple[int, ...] = ()) -> tuple[str, str]:
    pos = np.flatnonzero(it.masked)
    native = "".join(it.sequence[i] for i in pos)
    design = "".join(final[i] for i in pos)
    agree = "".join("·" if a == d else " " for a, d in zip(native, design))
    if any(p in marked for p in pos):  # an edit: the residues the user set, under the design
        design += "\nyours   " + "".join("^" if p in marked else " " for p in pos)
    imgt = it.numbered.imgt if it.numbered is not None and it.numbered.imgt else ()
    ends = (imgt[pos[0]], imgt[pos[-1]]) if imgt else ("", "")
    where = f"IMGT {ends[0]}-{ends[1]}" if all(ends) else f"residues {pos[0] + 1}-{pos[-1] + 1}"
    return f"native  {native}\n        {agree}\ndesign  {design}", where


def native_beside_design(it: Infill, final: str, b: Backbone, key: str, marked: tuple[int, ...] = ()) -> None:
    """The infilled region under the native's, position by position (a dot where they agree), with its
    IMGT numbers, recovery, and the PLL of both under the backbone and under the judge that did not
    generate (a pass a masked residue each); marked: residues the user set by an edit (^ under them:
    scored with the rest of the region)."""
    text, where = _region_text(it, final, marked)
    st.code(text, language="text")
    n = int(it.masked.sum())
    with st.spinner(f"Scoring both under {b.label} and the other antibody LM (about {4 * n} passes) ..."):
        sc = design_scores(it, final, b)
    how = "nats a residue, each residue masked alone (higher: more coherent)"
    c = st.columns(2 + 2 * len(sc["judges"]))
    c[0].metric("masked region", f"{n} residues", where, delta_color="off", delta_arrow="off")
    c[1].metric("recovery of the native", f"{100 * sc['recovery']:.0f} %")
    for k, (judge, (d, nat)) in enumerate(sc["judges"].items()):
        c[2 + 2 * k].metric(f"PLL of the design · {judge}", f"{d:.2f}", help=how)
        c[3 + 2 * k].metric(f"PLL of the native · {judge}", f"{nat:.2f}", help=how)


def halves_judged(
    it: Infill, left: tuple[str, str], right: tuple[str, str], b: Backbone, marked: tuple[int, ...] = ()
) -> None:
    """Side by side: each half's design (name, final chain) judged as the single view judges one, beside
    the native, in one table (rows: recovery and each judge's PLL; columns: left, right, native)."""
    c = st.columns(2)
    scores = {}
    for col, (name, final) in zip(c, (left, right)):
        text, _ = _region_text(it, final, marked)
        col.caption(name)
        col.code(text, language="text")
        with st.spinner(f"Scoring {name} ..."):
            scores[name] = design_scores(it, final, b)
    rows = [{"": "recovery of the native", **{k: f"{100 * v['recovery']:.0f} %" for k, v in scores.items()},
             "native": "100 %"}]  # fmt: skip
    first = next(iter(scores.values()))
    for judge in first["judges"]:
        rows.append({"": f"PLL · {judge}", **{k: f"{v['judges'][judge][0]:.3f}" for k, v in scores.items()},
                     "native": f"{first['judges'][judge][1]:.3f}"})  # fmt: skip
    st.dataframe(rows, hide_index=True)


def residue_track(it: Infill, final: str, b: Backbone, key: str) -> None:
    """The log-likelihood of every residue along the whole chain under the backbone, design and native
    side by side, the infilled region and the IMGT regions marked: on request, its cost said first
    (a pass a residue, twice)."""
    L = len(final)
    per = caches.seconds_per_pass(b, tuple(ANTIBODY.encode([final])[0].tolist()), 1e-2)
    cost = f"{2 * L} passes, about {2 * L * per:.0f} s" if per else f"{2 * L} passes"
    if not st.button(f"Per-residue log-likelihood along the whole chain ({cost})", key=f"{key}_track"):
        return
    model = backbone_model(b)
    with st.spinner(f"{2 * L} passes ..."):
        design = caches.cached("antibody_track", (b.key, final), lambda: residue_log_likelihoods(model, final))
        native = caches.cached("antibody_track", (b.key, it.sequence),
                               lambda: residue_log_likelihoods(model, it.sequence))  # fmt: skip
    imgt = it.numbered.imgt if it.numbered is not None and it.numbered.imgt else ()
    ticks = [f"{imgt[i] if i < len(imgt) and imgt[i] else i + 1}" for i in range(L)]
    fig = go.Figure()
    fig.add_bar(x=list(range(L)), y=native, name="native", marker_color="#9e9e9e", opacity=0.6)
    fig.add_bar(x=list(range(L)), y=design, name="design", marker_color="#1f77b4")
    for s_, e in [(int(a), int(b_)) for a, b_ in it.spans]:
        fig.add_vrect(x0=s_ - 0.5, x1=e - 0.5, fillcolor="#ff7f0e", opacity=0.12, line_width=0)
    for name, (s_, e) in it.regions.items():
        fig.add_annotation(x=(s_ + e - 1) / 2, y=0.02, yref="paper", text=name.upper(), showarrow=False)
    step = max(1, L // 25)
    fig.update_layout(barmode="overlay", height=300, margin=dict(l=60, r=10, t=30, b=40),
                      title=f"log p(residue | the rest of the chain) under {b.label} (orange band: infilled)",
                      yaxis_title="nats",
                      xaxis=dict(tickmode="array", tickvals=list(range(0, L, step)), ticktext=ticks[::step],
                                 title="IMGT position"))  # fmt: skip
    chart(fig, f"{key}_track_fig")
    st.caption(
        f"Mean over the chain: design {np.mean(design):.2f}, native {np.mean(native):.2f} nats a residue; "
        f"over the infilled region: design {np.mean(design[it.masked]):.2f}, native {np.mean(native[it.masked]):.2f}."
    )


def sample_logo(it: Infill, b: Backbone, cfg, key: str) -> None:
    """N infills of this chain under the chosen sampler (seeds 0..N-1): the region's amino-acid
    frequencies as a logo-like stacked chart, and each sample's recovery and passes."""
    c1, c2 = st.columns([2, 1])
    how = "decodes of the same chain under the same sampler, seeds 0..N-1 (at the temperature chosen)"
    n = int(c1.slider("Samples of this chain", 2, 32, 8, key=f"{key}_nsamples", help=how))
    if not c2.button(f"Sample {n} infills", key=f"{key}_sample"):
        return
    head = head_model(b.heads[0][1], f"{b.label} MI head") if cfg.needs_head and b.heads else None
    if cfg.needs_head and head is None:
        st.info(f"{cfg.label()} reads an MI head, and this backbone has none: pick another sampler.")
        return
    with st.spinner(f"{n} decodes ..."):
        res = decode(backbone_model(b), ANTIBODY.encode([it] * n), cfg, head=head, run=Batching(streams=list(range(n))))
    pos = np.flatnonzero(it.masked)
    regions = ["".join(s[i] for i in pos) for s in ANTIBODY.decode(res.tokens)]
    native = "".join(it.sequence[i] for i in pos)
    chart(logo_figure(regions, native), f"{key}_logo")
    fasta = "".join(f">{it.id} sample {k} {cfg.label()} seed {cfg.seed} stream {k}\n{s}\n"
                    for k, s in enumerate(ANTIBODY.decode(res.tokens)))  # fmt: skip
    st.download_button(f"The {n} sampled V domains (FASTA)", fasta, file_name=f"{it.id}_samples.fasta",
                       mime="text/plain", key=f"{key}_samples_fasta", on_click="ignore")  # fmt: skip
    rec = 100 * np.mean([[a == d for a, d in zip(r, native)] for r in regions])
    st.caption(
        f"{n} infills, passes {', '.join(map(str, res.passes.tolist()))}; recovery of the native {rec:.0f} % on "
        "average. Each column: the residues the samples put there (height: their share); the native's residue "
        "named under it."
    )


def logo_figure(regions: list[str], native: str):
    """A sequence logo of equal-length regions: at each position a bar per residue, its height the
    residues' share among the samples, the letter on it (the residue colours of the track)."""
    L = len(native)
    freq = {a: [sum(r[i] == a for r in regions) / len(regions) for i in range(L)] for a in AMINO_ORDER}
    fig = go.Figure()
    for a in AMINO_ORDER:
        if not any(freq[a]):
            continue
        letters = [a if f >= 0.12 else "" for f in freq[a]]
        fig.add_bar(x=list(range(L)), y=freq[a], name=a, text=letters, textposition="inside",
                    insidetextanchor="middle", textangle=0, marker_color=CLUSTALX.get(a, "#999"))  # fmt: skip
    axis = dict(tickmode="array", tickvals=list(range(L)), ticktext=list(native), title="native residue")
    fig.update_layout(barmode="stack", height=260, margin=dict(l=60, r=10, t=30, b=40), showlegend=False,
                      title=f"{len(regions)} sampled infills", yaxis_title="share of samples", xaxis=axis)  # fmt: skip
    return fig


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


PAGE_KEYS = {"decode": "adec", "compare": "acmp", "sweep": "asw", "estimator": "pmie"}
SHARED = "ab"  # the antibody pages' shared widgets (model, chain, region): kept from one page to the other


class AntibodyPages(ProteinView[AntibodyDomain]):
    """The antibody pages (Antibody decode, Antibody comparison): the pretrained antibody LMs on pages of
    their own, the picked model and the chain pasted kept from one page to the other. The same views and
    machinery as the protein pages' antibody backbones (AntibodyView), which stay there too."""

    def __init__(self):
        ProteinView.__init__(self)
        self.name = "Antibodies"
        self.keys = dict(PAGE_KEYS)
        self.pages = (
            PagePlan("pages/antibody_decode.py", "Antibody decode", ":material/vaccines:"),
            PagePlan("pages/antibody_comparison.py", "Antibody comparison", ":material/compare:"),
        )

    def backbones(self) -> list[Backbone]:
        return [b for b in protein_backbones().values() if b.domain == "antibody"]

    def backbone_picker(self, key: str) -> Backbone | None:
        opts = {b.label: b for b in self.backbones()}
        st.subheader("Antibody model")
        if not opts:
            st.error("No antibody model is installed here: `make setup` installs AntiBERTy's and Sapiens' wheels.")
            return None
        label = carried(
            st.selectbox,
            "Antibody model",
            f"{SHARED}_backbone",
            next(iter(opts)),
            key,
            list(opts),
            help="AntiBERTy: a BERT masked LM of 558 M natural antibody sequences (26 M parameters); Sapiens: "
            "BioPhi's human heavy (VH) and light (VL) models (0.57 M each). Each from its PyPI wheel.",
        )
        return opts[label]

    def specialise(self, b: Backbone) -> View:
        return AntibodyView(self, b)

    def estimator(self, key: str) -> None:
        """The antibody heads' committed reports (AntiBERTy's and Sapiens VH's, MI and TV), not the
        small ESM-C's that the protein pages' estimator opens with."""
        AntibodyView(self).estimator(key)


VIEW = AntibodyPages()
SPECIALISES = ("protein", AntibodyView)  # AntiBERTy and Sapiens sit in the protein pages too
