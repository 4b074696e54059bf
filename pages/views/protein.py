"""The protein view: the backbones (the small ESM-C, ESM-C 300M when on the machine, every
family backbone), an input from a length or a prompt, the sequence as a coloured track, and
the k-means JSD to natural proteins as the sweeps' measure. A family backbone specialises it
(views/family.py)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st
import torch

from mi_viz.core.errors import InputError, UserError
from mi_viz.core.samplers import SamplerConfig, Trace, config_for
from mi_viz.domains.protein import PAPER_TABLE2, prompts_of_lengths
from mi_viz.domains.protein.alphabet import SequenceError, clean, encode
from mi_viz.domains.protein.drawing import track_figure
from mi_viz.domains.protein.fasta import parse_fasta
from mi_viz.lm.masked_lm import directory_files

from ..kit import caches
from ..kit.models import Backbone, load_note
from ..kit.runtime import RESULTS
from ..kit.sweeps import SweepPlan
from ..kit.widgets import pca_panel, sampling_row, uploaded_text
from .base import D, Hint, Item, PagePlan, View
from .protein_backbones import protein_backbones
from .protein_estimator import protein_report

LENGTH_CAP = 300  # the longest protein the app decodes (a decode is L passes)
UPLOAD_MB = 1  # a prompt is at most LENGTH_CAP residues: a megabyte is plenty


LM_FOLDER = "A masked LM folder on this machine ..."


def masked_lm_folder(key: str) -> Backbone | None:
    """A Hugging Face masked protein LM saved on this machine (config.json, weights, tokenizer): its
    files checked before anything loads, what it weighs and what its first load took here said; None
    after a message (nothing typed yet, or a folder that is not a masked LM: what it lacks, named)."""
    text = st.text_input(
        "Folder (config.json, model.safetensors or pytorch_model.bin, tokenizer files)",
        key=f"{key}_lmdir",
        placeholder="/models/esm2_t6_8M_UR50D",
        help="A folder written by save_pretrained (transformers). Its residues are read in the 20 amino acids; "
        "it has no MI head: the estimated maps and the MI samplers are off, the exact maps on demand.",
    )
    if not text.strip():
        st.info("Type the path of a masked LM folder to load it.")
        return None
    try:
        files = directory_files(Path(text.strip()).expanduser())
    except UserError as e:
        st.error(str(e))
        return None
    b = Backbone(f"masked LM · {files.name}", "protein", spec=str(files.config_dir.resolve()),
                 help=f"{files.config_dir} ({files.weights.stat().st_size / 2**20:.0f} MiB of weights)")  # fmt: skip
    st.caption(
        f"{files.weights.name}: {files.weights.stat().st_size / 2**20:.0f} MiB; " + load_note(b).removesuffix(" ...")
    )
    return b


class ProteinView(View[D]):
    estimator_label = "the small ESM-C (Swiss-Prot)"  # the estimator page's name for this view's report

    def __init__(self):
        super().__init__(
            name="Proteins",  # a track of positions (View's defaults)
            keys={"decode": "pdec", "compare": "pcmp", "sweep": "psw", "estimator": "pmie"},
            pages=(
                PagePlan("pages/protein_decode.py", "Protein decode", ":material/biotech:"),
                PagePlan("pages/protein_comparison.py", "Protein comparison", ":material/stacked_line_chart:"),
                PagePlan("pages/protein_families.py", "Protein families", ":material/hub:"),
            ),
            timeline=("Residues decoded vs passes", "residues"),
        )

    # --- the backbone -----------------------------------------------------------------------------
    def backbones(self) -> list[Backbone]:
        return list(protein_backbones().values())

    def backbone_picker(self, key: str) -> Backbone | None:
        opts = protein_backbones()
        st.subheader("Backbone")
        label = st.selectbox(
            "Protein backbone",
            [*opts, LM_FOLDER],
            key=f"{key}_backbone",
            help="small ESM-C: trained here on Swiss-Prot; ESM-C 300M: EvolutionaryScale's, when its weights are "
            "on this machine; AntiBERTy, Sapiens: pretrained antibody masked LMs (CDR infilling); family: a backbone "
            "trained on one Pfam family's alignment (Protein families page); a masked LM folder: any Hugging Face "
            "masked protein LM saved on this machine (an ESM-2), read from disk, never downloaded.",
        )
        if label == LM_FOLDER:
            return masked_lm_folder(key)
        if "ESM-C 300M" not in opts and opts[label].domain == "protein":
            st.caption(
                "ESM-C 300M is not on this machine: `python -m mi_viz fetch-esmc` downloads its weights "
                "(or set MI_VIZ_ESMC_300M to the .pth file)."
            )
        return opts[label]

    def specialise(self, b: Backbone) -> View:
        """A backbone of another domain than plain proteins (a family's) gets that domain's view
        (views/__init__.py hands them in: this module imports none)."""
        make = self.specialised.get(b.domain)
        return make(self, b) if make is not None else self

    # --- inputs -------------------------------------------------------------------------------------
    def decode_input(self, key: str, dom: D) -> tuple[Item | None, str | None]:
        """All masked at a length, or a prompt ('_' generated), pasted or from a FASTA file."""
        st.subheader("Input")
        mode = st.radio(
            "Start from", ["All masked, a length", "A prompt (residues kept, '_' generated)"], key=f"{key}_mode"
        )
        if mode.startswith("All masked"):
            n = st.number_input(f"Length (1..{LENGTH_CAP})", 1, LENGTH_CAP, 80, key=f"{key}_len")
            return Item("_" * int(n), "_" * int(n), f"unconditional, length {int(n)}"), None
        text = st.text_area(
            "Prompt: a sequence with '_' where residues are to be generated (FASTA works too)",
            key=f"{key}_prompt",
            height=110,
            placeholder="MKT__LVA___GLL__________RS",
        )
        got, name = uploaded_text(f"... or a FASTA file (its first record; at most {UPLOAD_MB} MB)", f"{key}_file",
                                  UPLOAD_MB * 1024)  # fmt: skip
        if got is None and name is not None:
            return None, name  # over the limit: said
        text, source = (got, f"{name}, first record") if got is not None else (text, "pasted prompt")
        prompt, problem = validate_prompt(text)
        return (Item(prompt, prompt, source), None) if prompt else (None, problem)

    def compare_input(self, key: str, dom: D) -> tuple[Item | None, str | None, dict]:
        c = st.columns(3)
        length = c[0].number_input(f"Length (1..{LENGTH_CAP})", 1, LENGTH_CAP, 60, key=f"{key}_len")
        prompt = "_" * int(length)
        return Item(prompt, prompt, f"length {int(length)}"), None, sampling_row(c[1:], key)

    editable = True

    def edited(self, dom: D, item: Item, tokens: list[int], pos: int, value: int | None, step: int) -> Item:
        """The sequence after `step` passes with one residue set (or masked again), as a prompt; a
        prompt with no masked position left is refused (nothing would be decoded)."""
        prompt = list(dom.decode(torch.tensor([tokens]))[0])  # '_' where masked
        prompt[pos] = "_" if value is None else dom.value_names[value]
        text, problem = validate_prompt("".join(prompt))
        if text is None:
            raise InputError(str(problem))
        what = f"{pos + 1} = {prompt[pos]}" if value is not None else f"{pos + 1} masked again"
        label = f"{item.label}, after step {step} with {what}"
        return Item(text, text, label)

    # --- drawings ---------------------------------------------------------------------------------------
    def labels(self, dom: D, item: Item, L: int) -> list[str]:
        return [f"position {i + 1}" for i in range(L)]

    def state_figure(self, dom: D, item: Item, trace: Trace, t: int, focus=None, title: str = "", small: bool = False):
        seq = dom.decode(torch.tensor([trace.tokens_at(t)]))[0]
        sel = trace.steps[t - 1].selected if 0 < t <= len(trace.steps) else []
        return track_figure(seq, selected=sel, focus=focus, title=title, width=900)

    eb_presets = (8.0, 16.0)  # proteins' positions carry about 2.8 nats each

    def presets(self, dom: D, has_head: bool) -> tuple[dict, list[str]]:
        defaults = dom.sampler_defaults
        presets = {
            "sequential": SamplerConfig("sequential"),
            "top-k k=4": SamplerConfig("topk", k=4),
            "top-k k=8": SamplerConfig("topk", k=8),
            **{f"EB gamma={g:g}": SamplerConfig("eb", gamma=g) for g in self.eb_presets},
        }
        zero = config_for("mi-zero", defaults)  # the domain's choice where it has one, else the registry's
        presets[f"MI rule with MI=0 ({'default, ' if 'mi-zero' in defaults else ''}gamma={zero.gamma:g})"] = zero
        start = ["sequential", "top-k k=4", f"EB gamma={self.eb_presets[0]:g}"]
        if has_head:
            presets.update(self.mi_presets())
            start += [k for k in self.mi_presets() if k in self.start_mi]
            mi = config_for("mi", defaults)
            presets[f"MI (default, gamma={mi.gamma:g} lam={mi.lam:g})"] = mi
            start.append(f"MI (default, gamma={mi.gamma:g} lam={mi.lam:g})")
        return presets, start

    start_mi: tuple[str, ...] = ()

    def mi_presets(self) -> dict:
        return {"MI gamma=2 lam=1 (paper)": SamplerConfig("mi", gamma=2.0, lam=1.0)}

    def compare_row(self, dom: D, item: Item, trace: Trace, t: int) -> dict:
        return {
            "final sequence": dom.decode(torch.tensor([trace.final]))[0],
            "max residues per pass": max(len(s.selected) for s in trace.steps),
        }

    def exports(self, dom: D, item: Item, trace: Trace, cfg, stem: str) -> list:
        final = dom.decode(torch.tensor([trace.final]))[0]
        fasta = f">mi-viz {item.label} {cfg.label()} passes={trace.steps[-1].passes}\n{final}\n"
        return [("The decoded sequence (FASTA)", fasta, f"{stem}.fasta", "text/plain")]

    # --- sweeps ------------------------------------------------------------------------------------------------
    def sweep_plan(self, key: str, b: Backbone, model, head, head_path, rows: dict) -> SweepPlan | None:
        """N proteins of lengths 50-100 per setting, scored by the paper's k-means JSD against the
        natural test reference, beside the committed Table 2."""
        dom = b.dom()
        return SweepPlan(
            intro="Generate N proteins (lengths drawn from 50-100, seeded) under each setting of a grid and score "
            "each set against the natural test reference (`data/protein/reference_test.fasta`, 500 proteins): "
            "the paper's k-means JSD (k = 15, in bits; lower is closer) and the rest of `metrics.set_metrics`.",
            noun="proteins",
            n=(5, 100, 20, 1),
            grid="sequential; topk:k=4,8; eb:gamma=8,16",
            metric=("jsd", "k-means JSD to the reference (bits)", "JSD vs average passes"),
            inputs=lambda n: prompts_of_lengths(n, (50, 100), seed=0),
            passes=lambda n: (sum(map(len, prompts_of_lengths(n, (50, 100), seed=0))), n),  # judge: an embedding each
            probe=lambda: tuple(dom.encode(prompts_of_lengths(1, (50, 100), seed=0))[0].tolist()),
            file_name="protein_sweep.csv",
            judge=lambda items: (caches.cached("reference", b.key, lambda: dom.judge(model), 2), {}),
            temperature=1.0,
            committed=(RESULTS / "protein" / "table2" / "sweep.csv", "committed, 500 proteins"),
            paper=PAPER_TABLE2,
            caption="Crosses: the paper's Table 2 (ESM-C 300M, UniRef50 reference; its JSD's log base is not stated). "
            "A small sweep's JSD is noisier than the committed 500-protein rows: with few proteins the "
            "cluster histogram itself is coarse (README, the natural-vs-natural floor).",
        )

    def sweep_extras(self, key: str, dom: D) -> None:
        figure3(key)

    # --- the estimator ------------------------------------------------------------------------------------------
    def estimator(self, key: str) -> None:
        """Head vs truth on held-out protein states (the committed report), and MI against sequence
        separation: how local the dependence the backbone believes in is."""
        others = {v.estimator_label: v for v in self.specialised.values() if v.estimator is not ProteinView.estimator}
        if others:  # a specialised backbone with a report of its own (AntiBERTy's; a family's is its page)
            pick = st.radio("Backbone", [self.estimator_label, *others], horizontal=True, key=f"{key}_backbone")
            if pick in others:
                return others[pick](self).estimator(key)
        protein_report(key)


def figure3(key: str) -> None:
    """The paper's Figure 3 from the committed run (benchmarks/protein_figure3.py): each setting's
    Table 2 proteins in the natural proteins' own principal components."""
    st.markdown("**The paper's Figure 3: generated proteins in the natural proteins' principal components**")
    pca_panel(
        RESULTS / "protein" / "figure3.json.gz",
        key,
        "python -m benchmarks.protein_figure3",
        "the natural test reference",
    )


def validate_prompt(text: str | None) -> tuple[str | None, str | None]:
    """text -> (a clean prompt, None), or (None, a message naming the problem)."""
    if not text or not text.strip():
        return None, Hint("Type a prompt: residues to keep, with '_' for the positions to generate (or pick a length).")
    try:
        if text.lstrip().startswith(">"):
            text = parse_fasta(text)[0][1]
        p = clean(text)
        if len(p) > LENGTH_CAP:
            return None, f"The prompt has {len(p)} positions; this page decodes up to {LENGTH_CAP}."
        encode(p, allow_mask=True)
    except SequenceError as e:
        return None, f"Invalid prompt: {e}."
    if "_" not in p:
        return None, "The prompt has no masked position: put '_' where residues are to be generated."
    return p, None


VIEW: View = ProteinView()
