"""The protein domain: prompts in (a length, or a partial sequence with '_' for masked
positions), amino-acid tokens out; ESM-C backbones; no known dependence structure.

    from mi_viz.domains import get_domain
    protein = get_domain("protein")
    model = protein.load_model()                      # checkpoints/protein_mdm (ESM-C architecture)
    x = protein.encode(["_" * 80, "MKV____LL"])       # tokens; one length per batch (groups)

Everything the core needs to know about proteins is on DOMAIN (mi_viz.core.protocol.Domain).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from ...core import samplers
from ...core.backbone import Backbone
from ...core.checkpoints import checkpoint_paths
from ...core.choice import Criterion
from ...core.errors import InputError
from ...lm.masked_lm import lm_weights, load_masked_lm
from .alphabet import AMINO_ACIDS, MASK, MAX_LENGTH, PAD, PROTEIN_ALPHABET, SequenceError, decode, encode
from .backbone import ESMC_300M, load_backbone
from .metrics import Reference, default_judge

REPO = Path(__file__).resolve().parents[3]
CHECKPOINTS = REPO / "checkpoints"
DATA = REPO / "data" / "protein"

# The paper's Table 2 (500 proteins of length 50-100, JSD to a UniRef50 reference, lower is better)
_MI = "mi gamma=2 lam=1"  # the paper's MI row: ours under the MI rule, and as a pure MI budget (mi-pairs)
PAPER_TABLE2: list[dict[str, Any]] = [
    {"method": "sequential", "avg_passes": 74.8, "jsd": 0.093, "ours": ["sequential"]},
    {"method": "topk k=4", "avg_passes": 19.1, "jsd": 0.185, "ours": ["topk k=4"]},
    {"method": _MI, "avg_passes": 15.3, "jsd": 0.136, "ours": [_MI, "mi-pairs gamma=2 lam=1"]},
]


class ProteinDomain:
    name = "protein"
    value_names = tuple(AMINO_ACIDS)
    mask_id = MASK
    default_model = CHECKPOINTS / "protein_mdm"
    backbones = ("protein_mdm", ESMC_300M)  # what --backbone / the app offer by name
    # budgets for ~2.8-nat protein entropies (Sudoku's 0.01 would unmask one residue a pass),
    # chosen on the validation reference by a criterion fixed before the sweep
    # (benchmarks/defaults.py (protein) -> results/protein/val_sweep/choice.json; the choice sits
    # inside that metric's noise: re-sampled with the float16 backbone it moved from gamma 32 to 16,
    # docs/results-protein.md). tests/test_protein.py checks they agree. The validation grid holds the
    # MI rule under rule 3 (mi-pairs); under rule 4 the same budget with lam 1 charges the same sums
    # but the first residue's entropy (docs/samplers.md).
    default_temperature = 1.0  # sampled: argmax makes repeats in proteins
    unsaved_columns: tuple[str, ...] = ()  # the generated sequences are what the JSD noise is measured on
    # how sampler_defaults were chosen on validation (core.choice; benchmarks/defaults.py reads them)
    criteria = {
        "protein": Criterion(
            5,
            "jsd",
            False,
            1e-3,
            ("mi-pairs", "eb", "mi-zero"),
            ("avg_passes", "jsd", "jsd_unirep"),
            2,
            "lowest validation JSD at <= 1/5 of sequential's passes; ties within 0.001 to the fewer passes",
            top_level=True,
        ),  # fmt: skip
    }
    sampler_defaults = {
        "eb": {"gamma": 16.0},
        "mi": {"gamma": 16.0, "lam": 1.0},
        "mi-gt": {"gamma": 16.0, "lam": 1.0},
        "mi-tc": {"gamma": 16.0, "lam": 1.0},
        "mi-zero": {"gamma": 32.0},
        "mi-pairs": {"gamma": 16.0, "lam": 1.0},
    }

    def backbone(self, name: str | None = None) -> Backbone:
        """The backbone a user named, resolved once (None: the shipped small ESM-C, 'protein_mdm'):
        'esmc_300m', a .pth of its weights, a checkpoint or a masked-LM folder by path; any other name
        refused with those it knows. Its model loads as load_model reads the same spec."""
        name = str(name or "protein_mdm")
        known = name in ("protein_mdm", ESMC_300M) or Path(name).exists() or checkpoint_paths(name)[1].exists()
        if not known:
            raise InputError(
                f"unknown protein backbone {name!r}: protein_mdm (the shipped one), esmc_300m, a .pth of its "
                "weights, a checkpoint or a masked-LM folder (by path)"
            )
        label = {"protein_mdm": "small ESM-C (shipped)", ESMC_300M: "ESM-C 300M"}.get(name, Path(name).name)
        return Backbone(self, name, label, (), None if name == "protein_mdm" else name)

    def load_model(self, spec=None, device: str = "cpu"):
        """'protein_mdm' or None (the shipped small backbone), 'esmc_300m' (the local Hugging Face
        cache; BackboneUnavailable if absent), a .pth of ESM-C 300M weights, a checkpoint path, or a
        Hugging Face masked LM folder on disk (an ESM-2 saved with save_pretrained: masked_lm.py)."""
        if spec in (None, "protein_mdm"):
            spec = self.default_model
        if Path(str(spec)).is_dir():  # a folder is a masked LM or nothing: MaskedLMError names what it lacks
            return load_masked_lm(spec, PROTEIN_ALPHABET, device)
        return load_backbone(spec, device=device)

    def weights(self, spec=None) -> Any:
        """The file a backbone's fingerprint reads: a masked LM folder's weights file, else the spec."""
        spec = self.default_model if spec in (None, "protein_mdm") else spec
        return lm_weights(spec) if Path(str(spec)).is_dir() else spec

    def default_head(self, spec=None):
        """The shipped MI head: it reads the shipped small backbone (spec None, 'protein_mdm' or its own
        path); None for any other (ESM-C 300M, a masked-LM folder: no head is shipped for them)."""
        if spec not in (None, "protein_mdm") and Path(str(spec)).resolve() != Path(str(self.default_model)).resolve():
            return None
        p = CHECKPOINTS / "protein_mi_head"
        return p if Path(str(p) + ".json").exists() else None

    def encode(self, prompts) -> torch.Tensor:
        """Prompts of one length -> (B, L) tokens ('_' = masked). SequenceError names a bad letter."""
        toks = [encode(p, allow_mask=True) for p in prompts]
        if len({len(t) for t in toks}) > 1:
            raise ValueError("prompts of different lengths: decode them in groups (ProteinDomain.groups)")
        return torch.stack(toks)

    def decode(self, tokens: torch.Tensor) -> list[str]:
        return [decode(row[row != PAD]) for row in tokens]

    def groups(self, prompts) -> list[list[int]]:
        """Indices of the prompts sharing a length, shortest first: one batch each, no padding."""
        by: dict[int, list[int]] = {}
        for i, p in enumerate(prompts):
            by.setdefault(len("".join(str(p).split())), []).append(i)
        return [by[k] for k in sorted(by)]

    def position_name(self, i: int, length: int = 0) -> str:
        return str(i + 1)

    def relations(self, length: int = 0):
        return None  # no known dependence structure (a contact map, when one is supplied, would go here)

    def score(self, prompts, final: torch.Tensor) -> list[dict]:
        rows = []
        for p, s in zip(prompts, self.decode(final)):
            p = "".join(str(p).split()).upper()
            rows.append(
                {
                    "prompt": "" if set(p) == {"_"} else p,
                    "length": len(s),
                    "sequence": s,
                    "keeps_prompt": int(all(a == "_" or a == b for a, b in zip(p, s))),
                    "standard_only": int(all(ch in AMINO_ACIDS for ch in s)),
                }
            )
        return rows

    def judge(self, model, reference=None, k: int = 15, unirep: bool = True, embedder=None):
        """The set's metrics against natural proteins (metrics.set_metrics: the paper's k-means JSD
        on `embedder`'s embeddings, the backbone's by default, and UniRep's when installed)."""
        ref = Reference(
            embedder or model, reference or DATA / "reference_test.fasta", k, judge=default_judge() if unirep else None
        )
        return lambda rows: ref([r["sequence"] for r in rows])

    def summarize(self, rows: list[dict]) -> dict:
        return {"mean_length": round(float(np.mean([r["length"] for r in rows])), 2) if rows else 0.0}

    def typical_states(self, model, n: int = 1, length: int = 100) -> torch.Tensor:
        """The state a step in the app meets (benchmarks/latency.py times it): an all-masked protein of
        `length` halfway through an EB decode (half its residues still masked): (1, length); one state."""
        eb = samplers.SamplerConfig("eb", gamma=1.0, temperature=1.0)
        res = samplers.decode(model, self.encode(["_" * length]), eb, keep_states=True)
        return next(s for s in res.states or [] if int((s == model.mask_id).sum()) <= length // 2)


def prompts_of_lengths(n: int, lengths: tuple[int, int], seed: int = 0) -> list[str]:
    """n all-masked prompts with lengths drawn uniformly from [lo, hi] (seeded), as the paper."""
    lo, hi = lengths
    if not 1 <= lo <= hi <= MAX_LENGTH:
        raise SequenceError(f"lengths must satisfy 1 <= lo <= hi <= {MAX_LENGTH}, got {lo}-{hi}")
    g = np.random.default_rng(seed)
    return ["_" * int(L) for L in g.integers(lo, hi + 1, size=n)]


DOMAIN = ProteinDomain()
