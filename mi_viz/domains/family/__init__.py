"""The protein-family domain: rows of one family's alignment (the gap a symbol), a family
backbone per alignment, and the family member's structure as the known dependence structure.

    from mi_viz.domains.family import family_domain
    fam = family_domain("PF00595")                 # a shipped family, or a checkpoint path
    model = fam.load_model()                         # checkpoints/family_PF00595
    x = fam.encode(["_" * fam.width])                # all masked: an unconditional family member
    fam.relations(fam.width)                         # the structure's contacts, as relation codes

A family is a protein backbone trained on one alignment (ESM-C's network, esm's blocks), so
it lives beside the protein domain and shares its tokens; it is a domain of its own because
what the core needs differs: fixed length (the alignment's width), 21 values (gap included),
a contact map, and generation judged by pair statistics (pairstats.py) rather than by the
k-means JSD.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import torch

from ...core.backbone import Backbone
from ...core.checkpoints import CheckpointError, checkpoint_paths, read_meta
from ...core.choice import Fronts
from ..protein.alphabet import MASK
from .alignment import SYMBOLS, AlignmentError, parse_row, row_string
from .backbone import FAMILY_MDM_KIND, load_family_mdm, to_tokens, to_values
from .structure import ContactMap

REPO = Path(__file__).resolve().parents[3]
CHECKPOINTS = REPO / "checkpoints"
# checkpoints/family_NAME.* (+ .contacts.json.gz, _mi_head.*), in the order tables and pickers list them (the order
# they were shipped in: PDZ, RRM, the response regulator, then SH3 and thioredoxin)
SHIPPED = ("PF00595", "PF00076", "PF00072", "PF00018", "PF00085")
# families whose weights stay out of the tree (its size line: tests/test_house.py), their JSON halves kept (config,
# metrics, the shipped weights' sha256): `make family-NAME` builds backbone and head here from ../shared/data
BUILT_HERE = {"PF00018": "about 30 minutes on 2 cores"}
DEFAULT_FAMILY = "PF00595"
RELATION_NAMES = ("contact (C-beta < 8 A, |i - j| >= 6)",)


def checkpoint_of(spec: str | Path | None) -> Path:
    """A shipped family's name (PF00595), 'family_PF00595', or a checkpoint path -> the checkpoint path."""
    s = str(spec or DEFAULT_FAMILY)
    if s in SHIPPED or s.startswith("PF") and not Path(s).suffix and not Path(s).parent.name:
        return CHECKPOINTS / f"family_{s}"
    if s.startswith("family_") and "/" not in s:
        return CHECKPOINTS / s
    return Path(s)


class FamilyDomain:
    value_names = tuple(SYMBOLS)
    mask_id = MASK
    # generation samples values (temperature 1): argmax would write the consensus every time (the
    # CLI's and the app's starting temperature: Domain.default_temperature)
    default_temperature = 1.0

    name = "family"

    def __init__(self, checkpoint: str | Path):
        self.checkpoint = Path(checkpoint)
        meta = read_meta(self.checkpoint, FAMILY_MDM_KIND)
        self.meta = meta
        self.family = meta["config"].get("family") or self.checkpoint.name
        self.width = int(meta["config"]["width"])
        # the map beside the checkpoint: gzip-compressed as shipped, or as a training run writes it
        names = (self.checkpoint.name + ".contacts.json.gz", self.checkpoint.name + ".contacts.json")
        cpath = next((c for c in map(self.checkpoint.with_name, names) if c.exists()), None)
        self.contact_map = ContactMap.load(cpath) if cpath is not None else None
        if cpath is not None and self.contact_map is not None and self.contact_map.width != self.width:
            raise AlignmentError(
                f"{cpath.name} maps {self.contact_map.width} columns but the backbone's alignment has {self.width}"
            )

    # Chosen by benchmarks/defaults.py (family) on the validation sweeps of the three shipped
    # families (results/family/choice.json: pair statistics within 0.02 of sequential's on every
    # family, then the fewest passes). With PF00072 added no setting qualifies (on its 150
    # members even mi gamma 1 lambda 10, at 94 % of sequential's passes, is 0.06 below; the
    # bootstrap sd of one row is 0.02), so every sampler keeps the registry's value: mi at
    # gamma 1 (nats), which on columns of 0.5-2.5 nats decodes nearly one column a pass
    # (docs/results-family.md). tests/test_family.py checks they agree.
    sampler_defaults: dict[str, dict] = {}
    unsaved_columns: tuple[str, ...] = ()
    # how the families' sweeps are read at matched passes (python -m benchmarks.fronts family): the
    # pair-correlation Pearson against held-out members, each MI rule's lead over the best of its
    # rivals: the entropy budgets and top-k (mi-cap also its own ablation without MI, k=8 lam=0), then
    # the training-free rival that reads dependencies from attention (is the head worth training?)
    fronts = {
        "family": Fronts(
            "pair statistics",
            "pair statistics per protein family",
            sweep_dir="family",
            at=(12, 16, 24, 32),
            leads=(
                ("mi lam=10", "mi lam=10", ("topk", "eb", "mi-zero")),
                ("mi-cap k=8", "mi-cap k=8", ("topk", "eb", "mi-zero", "mi-cap k=8 lam=0")),
                ("mi lam=10 vs dawn", "mi lam=10", ("dawn",)),
                ("mi-cap k=8 vs dawn", "mi-cap k=8", ("dawn",)),
            ),
            members=SHIPPED,
            sweeps=("sweep.csv", "val_sweep/sweep.csv"),
            out="family/fronts.json",
        )
    }

    @property
    def default_model(self) -> Path:
        return self.checkpoint

    def backbone(self, name: str | Path | None = None) -> Backbone:
        """A family backbone by its name (PF00595) or checkpoint path (None: this domain's), resolved
        once (family_domain refuses an unknown name, or a family whose weights are not built, by name)."""
        dom = self if name is None else family_domain(name)
        label = f"family {dom.family}"
        return Backbone(dom, str(name or dom.family), label, (str(dom.checkpoint),), str(dom.checkpoint))

    def load_model(self, spec=None, device: str = "cpu"):
        return load_family_mdm(self.checkpoint if spec is None else checkpoint_of(spec), device)[0]

    def default_head(self):
        p = self.checkpoint.with_name(self.checkpoint.name + "_mi_head")
        return p if checkpoint_paths(p)[1].exists() else None

    def encode(self, rows) -> torch.Tensor:
        """Rows of the alignment's width ('_' = masked) -> (B, L) tokens. AlignmentError names the column."""
        out = []
        for k, r in enumerate(rows):
            try:
                out.append(to_tokens(parse_row(r, self.width, allow_mask=True)))
            except AlignmentError as e:
                raise AlignmentError(f"row {k + 1}: {e}") from None
        return torch.stack(out)

    def decode(self, tokens: torch.Tensor) -> list[str]:
        v = to_values(tokens)
        return ["".join("_" if int(a) < 0 else SYMBOLS[int(a)] for a in row) for row in v]

    def position_name(self, i: int, length: int = 0) -> str:
        if self.contact_map is not None and i in self.contact_map.columns:
            return f"{i + 1} ({self.contact_map.residues[self.contact_map.columns.index(i)]})"
        return str(i + 1)

    def relations(self, length: int = 0):
        if self.contact_map is None:
            return None
        return self.contact_map.contacts().astype(np.int64), RELATION_NAMES

    def score(self, rows, final: torch.Tensor) -> list[dict]:
        out = []
        for p, s in zip(rows, self.decode(final)):
            p = "".join(str(p).split())
            out.append(
                {
                    "prompt": "" if set(p) == {"_"} else p,
                    "sequence": s,
                    "keeps_prompt": int(all(a == "_" or a == b for a, b in zip(p, s))),
                    "gaps": s.count("-"),
                }
            )
        return out

    def groups(self, rows) -> list[list[int]]:
        """Every row has the alignment's width: one batch."""
        return [list(range(len(rows)))]

    def judge(self, model=None, reference=None, bootstrap: int = 100):
        """The members' pair statistics against natural rows: reference is a pairstats.FamilyReference
        (its held-out or training rows, and the Potts model whose energies it reports)."""
        if reference is None:
            raise ValueError("a family's set is judged against natural rows: pass a FamilyReference")
        return lambda rows: reference(np.stack([parse_row(r["sequence"]) for r in rows]).astype(np.int64), bootstrap)

    def summarize(self, rows: list[dict]) -> dict:
        return {"mean_gaps": round(float(np.mean([r["gaps"] for r in rows])), 2) if rows else 0.0}


@functools.lru_cache(maxsize=16)
def _cached(path: str) -> FamilyDomain:
    return FamilyDomain(path)


def family_domain(spec: str | Path | None = None) -> FamilyDomain:
    """The domain of a shipped family (by name) or of any family checkpoint (by path); an unknown
    name is a CheckpointError that lists the families this machine has."""
    path = checkpoint_of(spec)
    name = str(spec or DEFAULT_FAMILY).removeprefix("family_")
    if name in BUILT_HERE and not checkpoint_paths(path)[0].exists():
        raise CheckpointError(
            f"family {name}'s weights are not shipped (the tree's size line): `make family-{name}` builds its "
            f"backbone and MI head here from ../shared/data ({BUILT_HERE[name]})"
        )
    if not checkpoint_paths(path)[1].exists():
        have = ", ".join(shipped_families()) or "none"
        raise CheckpointError(
            f"unknown family backbone {str(spec)!r} (no {path}.json): the shipped ones here are {have}; "
            "or give the path of a family checkpoint (e.g. checkpoints/family_PF00595, or one train-family wrote)"
        )
    return _cached(str(path))


domain_for = family_domain  # get_domain("family", spec)


def forget_families() -> None:
    """Drop the cached domains (a family retrained under the same path is read afresh)."""
    _cached.cache_clear()


def shipped_families() -> list[str]:
    """The project's families whose weights are on this machine (shipped, or built here)."""
    return [f for f in SHIPPED if checkpoint_paths(checkpoint_of(f))[0].exists()]


def unbuilt_families() -> list[str]:
    """The families kept out of the tree and not built on this machine yet (`make family-NAME`)."""
    return [f for f in BUILT_HERE if f not in shipped_families()]


class _Default:
    """DOMAIN for the registry (mi_viz.domains.get_domain('family')): the default family, read
    on first use so that importing the package (or asking for the class-level settings, as the
    CLI does) never reads a checkpoint."""

    name = "family"
    value_names = FamilyDomain.value_names
    mask_id = FamilyDomain.mask_id
    sampler_defaults = FamilyDomain.sampler_defaults
    unsaved_columns = FamilyDomain.unsaved_columns

    def __getattr__(self, attr):
        return getattr(family_domain(DEFAULT_FAMILY), attr)


DOMAIN = _Default()
__all__ = ["DOMAIN", "FamilyDomain", "family_domain", "shipped_families", "unbuilt_families", "row_string"]
