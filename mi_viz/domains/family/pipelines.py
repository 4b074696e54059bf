"""The family pipelines the CLI (`train-family`, `contacts`) and the app's families page both
call: train a family backbone from an alignment (and a member's structure), and score a
backbone's conditional MI against the structure's contacts beside MIp and a Potts model.

Nothing is half-written: every input is read and checked (the alignment, the structure and its
column map) before a file is written or a minute is spent training."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...core.mi_head import check_head_fits, load_head
from ...core.paths import portable
from .alignment import Alignment, read_alignment
from .backbone import FamilyMDMConfig
from .coevolution import Potts, fit_potts, mip
from .contacts import averaged_mi
from .scoring import apc, contact_scores
from .structure import ContactMap, contact_map
from .train import MAX_ROWS, FamilyData, TrainFamilyConfig, prepare, profile_of, train_family


@dataclass
class FamilyInputs:
    """An alignment read and split, and the contact map of a member's structure (if one was given)."""

    alignment: Alignment
    data: FamilyData
    contacts: ContactMap | None


def read_family_inputs(
    msa: str | Path, structure=None, indices=None, chain: str | None = None, seed: int = 0, max_rows: int = MAX_ROWS
) -> FamilyInputs:
    """Read and check everything a training needs; AlignmentError / StructureError name the problem."""
    aln = read_alignment(msa)
    data = prepare(aln, seed=seed, max_rows=max_rows)
    cmap = None
    if structure is not None:  # before training: a structure that does not fit is refused first
        prof = profile_of(data.train_rows, data.weights[~data.heldout])
        cmap = contact_map(structure, aln.width, fi=prof, indices=indices, chain=chain)
    return FamilyInputs(aln, data, cmap)


def train_from_inputs(
    inputs: FamilyInputs,
    out: str | Path,
    family: str,
    tc: TrainFamilyConfig | None = None,
    mc: FamilyMDMConfig | None = None,
    progress: Callable[[int, int, dict], None] | None = None,
) -> dict:
    """Train (or resume) OUT's family backbone on checked inputs; the contact map goes beside it.
    Returns train_family's summary with the family, the split, and whether the backbone beats
    the alignment's own column profile on the held-out rows (`beats_profile`)."""
    t0 = time.time()
    mc = mc or FamilyMDMConfig()
    mc = FamilyMDMConfig(**{**mc.to_dict(), "family": family})
    res = train_family(inputs.data, out, tc, mc, family, progress=progress)
    if inputs.contacts is not None:
        inputs.contacts.save(Path(out).with_name(Path(out).name + ".contacts.json"))
        res["contacts"] = {
            "mapped_columns": inputs.contacts.n_mapped,
            "contacts": int(np.triu(inputs.contacts.contacts()).sum()),
        }
    ppl, prof = res.get("heldout_pseudo_ppl_15"), res.get("profile_pseudo_ppl_15")
    res.update(
        {
            "family": family,
            "out": portable(out),
            "split": inputs.data.split,
            "seconds_this_run": round(time.time() - t0),
            "beats_profile": bool(ppl is not None and prof is not None and ppl < prof),
        }
    )
    return res


def potts_for(data: FamilyData, cache: str | Path, iters: int, progress=None) -> Potts:
    """The Potts model of the training rows, fitted once and kept under cache (keyed by the rows' sha256)."""
    key = Alignment([], data.train_rows).sha256()
    path = Path(cache) / f"potts_{key}_{iters}.safetensors"
    if path.exists():
        return Potts.load(path)
    pt = fit_potts(data.train_rows, data.weights[~data.heldout], max_iter=iters, progress=progress)
    pt.save(path)
    return pt


@dataclass
class ContactsSettings:
    rows: int = 200  # held-out rows averaged over
    masks_per_row: int = 4
    frac: float = 0.1  # share of a row's columns masked per state
    eps: float = 1e-3  # pruning tolerance of the ground truth
    potts_iter: int = 100  # L-BFGS iterations of the Potts fit
    seed: int = 0


def contacts_report(
    dom, model, data: FamilyData, cmap: ContactMap, head_path, cache, s: ContactsSettings, progress=None
) -> tuple[dict, dict[str, np.ndarray]]:
    """The backbone's conditional MI averaged over held-out rows (and its head's, when it has one)
    against the structure's contacts, beside MIp and the Potts couplings: (summary, maps)."""
    t0 = time.time()
    head = None
    if head_path is not None:
        head, _ = load_head(head_path)
        check_head_fits(head, model)
    held = data.heldout_rows
    rows = held[np.random.default_rng(s.seed).permutation(len(held))[: s.rows]]
    avg = averaged_mi(model, rows, head, s.masks_per_row, s.frac, s.eps, s.seed, progress=progress)
    m = mip(data.train_rows, data.weights[~data.heldout])
    ps = potts_for(data, cache, s.potts_iter).contact_score()
    maps = {"truth": avg.truth, "truth_apc": apc(avg.truth), "mip": m, "potts": ps, "count": avg.count}
    if avg.head is not None:
        maps["head"], maps["head_apc"] = avg.head, apc(avg.head)
    iu = np.triu_indices(dom.width, 1)
    res = {
        "family": dom.family,
        "backbone": portable(dom.checkpoint),
        "head": portable(head_path),
        "rows": int(len(rows)),
        "states": avg.states,
        "masks_per_row": s.masks_per_row,
        "frac": s.frac,
        "pairs_unseen": int((avg.count[iu] == 0).sum()),
        "truth_passes": avg.passes,
        **contact_fields(maps, cmap),
        "seconds": round(time.time() - t0, 1),
    }
    return res, maps


SCORED_MAPS = {"truth": "truth_apc", "truth_raw": "truth", "mip": "mip", "potts": "potts", "head": "head_apc"}


def contact_fields(maps: dict[str, np.ndarray], cmap: ContactMap) -> dict:
    """A contact report's scores of its maps (the truth and the head APC'd; contacts.npz holds
    them): mapped columns, base rate, precision at L/5 and L/2 and AUROC of each predictor. One
    function for `mi_viz contacts` and the re-scoring of committed maps (experiments/runs/family_rescore.py)."""
    scores = {k: contact_scores(maps[m], cmap) for k, m in SCORED_MAPS.items() if m in maps}
    return {
        "mapped_columns": cmap.n_mapped,
        "base_rate": scores["truth"]["base_rate"],
        **{f"precision_L5_{k}": v["precision_L5"] for k, v in scores.items()},
        **{f"precision_L2_{k}": v["precision_L2"] for k, v in scores.items()},
        **{f"auroc_{k}": v["auroc"] for k, v in scores.items()},
    }
