"""The contact reading of any family backbone, a shipped one or the user's: every predictor by the
field's separation classes, the backbone's categorical Jacobian beside its conditional MI, the
anchors where installed, and which extraction stands as the backbone's contacts, chosen without
the structure. `python -m mi_viz contacts`, the families page and benchmarks/family_contact_classes.py
all call this module, so a user's family is read exactly as the shipped five are.

The Jacobian is the costly part (one pass per unmasked column and amino acid of every state):
jacobian_cost says what a budget costs before it runs, measured on this machine."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ...core import strict_json
from ...core.errors import UserError
from ...core.npz import save_npz
from ...core.reading import read_steps
from .anchors import (
    AnchorUnavailable,
    ArDCAFit,
    PottsFit,
    ardca_contacts,
    ardca_sample,
    coupling_contacts,
    fit_ardca,
    fit_bmdca,
    fit_plmdca,
    potts_sample,
)
from .coevolution import mip
from .jacobian import categorical_jacobian
from .pairstats import FamilyReference
from .predictors import ANCHORS, PREDICTORS
from .scoring import SEPARATION_CLASSES, apc, class_precisions
from .structure import ContactMap
from .train import FamilyData, profile_of

EXTRACTIONS = ("truth", "jacobian_rows")  # the backbone's two readouts of its couplings
JACOBIAN_FRAC = 0.5  # share of a state's columns masked (read); the rest are varied


class ReadingError(UserError, ValueError):
    """A contact reading that cannot run as asked (no held-out rows, a budget below one row)."""


@dataclass
class JacobianBudget:
    """How much of the backbone the Jacobian reads: held-out rows (each half-masked twice) and
    masks of the alignment's consensus row."""

    rows: int = 50
    consensus_masks: int = 40
    seed: int = 0

    def check(self, data: FamilyData) -> None:
        if self.rows < 1:
            raise ReadingError(f"a Jacobian budget of {self.rows} held-out rows: give at least 1")
        if self.consensus_masks < 0:
            raise ReadingError(f"{self.consensus_masks} consensus masks: give 0 or more")
        if len(data.heldout_rows) == 0:
            raise ReadingError("this backbone's split has no held-out rows: the Jacobian reads held-out rows only")


def _symbols(model) -> int:
    return int(model.value_tokens.numel()) - 1  # every value but the gap


def jacobian_cost(model, data: FamilyData, budget: JacobianBudget, seconds_per_pass: float | None = None) -> dict:
    """What jacobian_maps(model, data, budget) costs, before it runs: states, passes and seconds
    (from one timed batch of this machine's passes unless seconds_per_pass is given)."""
    budget.check(data)
    L = data.heldout_rows.shape[1]
    per_state = (L - max(1, min(L - 1, round(JACOBIAN_FRAC * L)))) * _symbols(model)
    rows = min(budget.rows, len(data.heldout_rows))
    states = 2 * rows + budget.consensus_masks
    if seconds_per_pass is None:
        x = model.value_tokens.cpu()[torch.as_tensor(data.heldout_rows[:1], dtype=torch.long)].repeat(
            min(per_state, 256), 1
        )  # (n, L)
        with torch.inference_mode():
            model.forward_tokens(x)  # warm
            t0 = time.perf_counter()
            model.forward_tokens(x)
        seconds_per_pass = (time.perf_counter() - t0) / len(x)
    passes = states * per_state
    return {
        "rows": rows,
        "states": states,
        "passes": passes,
        "seconds_per_pass": seconds_per_pass,
        "seconds": round(passes * seconds_per_pass, 1),
    }


def jacobian_maps(
    model, data: FamilyData, budget: JacobianBudget, progress: Callable[[int, int], None] | None = None
) -> dict:
    """The categorical Jacobian (APC'd) on `budget.rows` held-out rows (two half-masks each) and on
    the alignment's consensus row: {"jacobian_rows", "jacobian_consensus": (L, L) float32, "cost":
    JSON of each part's rows, states, passes and seconds}. progress(done, total) over all states."""
    budget.check(data)
    held = data.heldout_rows[np.random.default_rng(budget.seed).permutation(len(data.heldout_rows))[: budget.rows]]
    consensus = profile_of(data.train_rows, data.weights[~data.heldout]).argmax(1)[None]  # (1, L)
    parts = [("rows", held, 2), ("consensus", consensus, budget.consensus_masks)]
    total, done = sum(len(r) * m for _, r, m in parts), 0
    out: dict = {}
    cost: dict = {}
    for key, rows, masks in parts:
        if masks == 0:
            continue
        t0 = time.perf_counter()
        step = (lambda d, n, base=done: progress(base + d, total)) if progress else None
        jac = categorical_jacobian(
            model, rows, masks_per_row=masks, frac=JACOBIAN_FRAC, seed=budget.seed, progress=step
        )
        done += len(rows) * masks
        out[f"jacobian_{key}"] = apc(jac.score).astype(np.float32)
        cost[key] = {"rows": len(rows), "states": jac.states, "passes": jac.passes,
                     "seconds": round(time.perf_counter() - t0, 1)}  # fmt: skip
    out["cost"] = np.array(strict_json.dumps(cost))
    return out


def attention_map(model, data: FamilyData, rows: int, seed: int) -> np.ndarray:
    """The backbone's attention as a contact predictor: DAWN's dependency map (last block,
    head-averaged, sinks dropped, symmetrised) averaged over the Jacobian's held-out rows, each
    half-masked twice, then APC'd like every other map (L, L)."""
    held = data.heldout_rows[np.random.default_rng(seed).permutation(len(data.heldout_rows))[:rows]]
    g = np.random.default_rng(seed)
    vt = model.value_tokens.cpu()
    R, L = held.shape
    x = vt[torch.as_tensor(np.repeat(held, 2, axis=0), dtype=torch.long)]  # (2R, L) two masks a row
    for s in range(len(x)):
        x[s, torch.as_tensor(g.choice(L, max(1, round(0.5 * L)), replace=False))] = model.mask_id
    _, att = read_steps(model, x.tolist(), attention=True)  # the batched reading the viewer uses
    assert att is not None  # attention=True
    return apc(torch.stack(att).mean(0).double().numpy()).astype(np.float32)  # (L, L)


def structure_free_choice(maps: dict, data: FamilyData) -> dict:
    """Which of the backbone's extractions (those in maps) stands as its contacts, chosen without the
    structure: the held-out rows' own covariation (MIp of the held-out rows, which the backbone
    never trained on) averaged over each extraction's top W/5 column pairs at least 6 columns
    apart (W = the alignment's width: no structure, no column map); the larger wins. A criterion
    fixed after the contact classes of four families had been read (docs/results-family.md)."""
    val = mip(data.heldout_rows, data.weights[data.heldout])  # (W, W)
    W = len(val)
    i, j = np.triu_indices(W, 6)
    k = max(1, W // 5)
    score = {}
    for name in [e for e in EXTRACTIONS if e in maps]:
        top = np.argsort(-maps[name][i, j], kind="stable")[:k]
        score[name] = round(float(val[i[top], j[top]].mean()), 5)
    return {
        "criterion": "mean held-out MIp over the extraction's top W/5 pairs >= 6 apart",
        "scores": score,
        "chosen": max(score, key=lambda n: score[n]) if score else None,
    }


def agreement(a: np.ndarray, b: np.ndarray, cmap: ContactMap) -> dict:
    """Two contact maps over the scored pairs: Spearman of their scores and the shared share of their
    top-L/5 pairs (does our Potts agree with plmDCA's?)."""
    from scipy.stats import spearmanr

    i, j = np.nonzero(np.triu(cmap.scored(), 1))
    x, y = a[i, j], b[i, j]
    k = max(1, cmap.n_mapped // 5)
    top = lambda s: set(np.argsort(-s, kind="stable")[:k].tolist())  # noqa: E731
    return {"spearman": round(float(spearmanr(x, y).statistic), 4), "top_L5_shared": round(len(top(x) & top(y)) / k, 4)}


@dataclass
class AnchorSettings:
    seed: int = 0
    ardca_max_rows: int = 4000  # arDCA fits a random subsample of the training rows past this
    bmdca_chains: int = 1000  # bmDCA's persistent chains (its default 10,000)
    bmdca_steps: int = 2000  # bmDCA's gradient-step budget
    members: int = 200  # members drawn from each anchor for the pair statistics


def fit_anchor(name: str, data: FamilyData, s: AnchorSettings) -> tuple[np.ndarray, np.ndarray, dict]:
    """One of the field's anchors fitted on the training rows: (contact map (L, L) float32, members
    (n, L) int8, {"fit_seconds", "sample_seconds", "settings"}). AnchorUnavailable names its install."""
    fit: ArDCAFit | PottsFit
    if name == "ardca":
        fit = ard = fit_ardca(data.train_rows, data.weights[~data.heldout], seed=s.seed, max_rows=s.ardca_max_rows)
        score, draw = ardca_contacts(ard), lambda n: ardca_sample(ard, n, seed=s.seed)
    elif name in ("plmdca", "bmdca"):
        fit = pt = (
            fit_plmdca(data.train_rows)
            if name == "plmdca"
            else fit_bmdca(data.train_rows, chains=s.bmdca_chains, max_steps=s.bmdca_steps, seed=s.seed)
        )
        score, draw = coupling_contacts(pt.J), lambda n: potts_sample(pt, n, seed=s.seed)
    else:
        raise ReadingError(f"unknown anchor {name!r}: ardca, plmdca or bmdca")
    samples, sample_seconds = draw(s.members)
    about = {"fit_seconds": round(fit.seconds, 1), "sample_seconds": round(sample_seconds, 2), "settings": fit.settings}
    return score.astype(np.float32), samples.astype(np.int8), about


def contact_classes_report(
    family: str,
    cmap: ContactMap,
    maps: dict[str, np.ndarray],
    data: FamilyData,
    jacobian_cost_of_run: dict | None = None,
    anchors: dict[str, dict] | None = None,
    absent: dict[str, str] | None = None,
) -> dict:
    """contact_classes.json: every map's precision by separation class (in residues along the
    chain), the structure-free choice between the backbone's extractions, our Potts model against
    plmDCA where both are there, and each anchor's members through the pair statistics every
    sampler's rows get. anchors: {name: {"samples", "fit_seconds", ...}}; absent: {name: why}."""
    res: dict = {
        "family": family,
        "mapped_columns": cmap.n_mapped,
        "classes": {k: list(v) for k, v in SEPARATION_CLASSES.items()},
        "jacobian_cost": jacobian_cost_of_run,
        "predictors": {k: class_precisions(m, cmap) for k, m in maps.items()},
        "extraction": structure_free_choice(maps, data),
    }
    if "plmdca" in maps and "potts" in maps:
        res["potts_vs_plmdca"] = agreement(maps["potts"], maps["plmdca"], cmap)
    if anchors:
        ref = FamilyReference(data.heldout_rows, data.train_rows)
        for name, about in anchors.items():
            pairs = ref(about["samples"].astype(np.int64), bootstrap=100)
            res[name] = {
                **{k: v for k, v in about.items() if k != "samples"},
                "members": len(about["samples"]),
                **pairs,
            }
    if absent:
        res["anchors_absent"] = absent
    return res


def anchors_for(
    data: FamilyData, names: list[str], s: AnchorSettings, cached: Callable[[str], tuple | None] | None = None
) -> tuple[dict[str, np.ndarray], dict[str, dict], dict[str, str]]:
    """Fit each named anchor that is installed (or read it from `cached(name)`): ({name: map},
    {name: about with "samples"}, {name: why absent})."""
    maps, about, absent = {}, {}, {}
    for name in names:
        hit = cached(name) if cached else None
        try:
            score, samples, info = hit if hit is not None else fit_anchor(name, data, s)
        except AnchorUnavailable as e:
            absent[name] = str(e)
            continue
        maps[name], about[name] = score, {"samples": samples, **info}
    return maps, about, absent


def _kept(path: Path, make: Callable[[], dict]) -> dict:
    """Arrays computed once and kept in `path` (.npz): read back when there, else made and saved."""
    if path.exists():
        z = np.load(path)
        return {k: z[k] for k in z.files}
    out = make()
    path.parent.mkdir(parents=True, exist_ok=True)
    save_npz(path, **out)  # nothing half-written under the real name
    return out


def contact_reading(
    folder: str | Path,
    family: str,
    model,
    data: FamilyData,
    cmap: ContactMap,
    budget: JacobianBudget,
    anchors: tuple[str, ...] | list[str] = ("ardca", "plmdca"),
    s: AnchorSettings | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict:
    """A family's whole contact reading in `folder`, the layout of results/family/NAME: the maps of
    `mi_viz contacts` (contacts.npz, when there), the Jacobian (jacobian.npz), the attention
    (attention.npz) and each anchor (ANCHOR.npz, fitted where installed; named as absent where
    not), each computed only when its file is absent, then contact_classes.json written and
    returned. progress(what, done, total) follows the Jacobian."""
    folder, s = Path(folder), s or AnchorSettings(seed=budget.seed)
    budget.check(data)
    maps: dict[str, np.ndarray] = {}
    if (folder / "contacts.npz").exists():
        z = np.load(folder / "contacts.npz")
        maps = {k: z[a] for k, (_, f, a) in PREDICTORS.items() if f == "contacts.npz" and a in z.files}
    if "mip" not in maps:  # a family without `mi_viz contacts`' maps: MIp, which costs no pass
        maps["mip"] = mip(data.train_rows, data.weights[~data.heldout]).astype(np.float32)
    step = (lambda d, n: progress("Jacobian", d, n)) if progress else None
    jac = _kept(folder / "jacobian.npz", lambda: jacobian_maps(model, data, budget, step))
    maps.update({k: v for k, v in jac.items() if k != "cost"})
    maps["attention"] = _kept(
        folder / "attention.npz", lambda: {"attention": attention_map(model, data, budget.rows, budget.seed)}
    )["attention"]

    def cached(name: str):
        path = folder / f"{name}.npz"
        if not path.exists():
            return None
        z = np.load(path)
        return z[name], z["samples"], json.loads(str(z["about"]))

    # an anchor fitted before (its file) is always reported; `anchors` says what to fit anew
    wanted = [x for x in ANCHORS if x in anchors or (folder / f"{x}.npz").exists()]
    amaps, about, absent = anchors_for(data, wanted, s, cached=cached)
    for name, info in about.items():
        path = folder / f"{name}.npz"
        if not path.exists():  # kept for the next run (a fit can take an hour)
            keep = strict_json.dumps({k: v for k, v in info.items() if k != "samples"})
            arrays = {name: amaps[name], "samples": info["samples"], "about": np.array(keep)}
            save_npz(path, **arrays)
    maps.update(amaps)
    res = contact_classes_report(family, cmap, maps, data, json.loads(str(jac["cost"])), about, absent or None)
    (folder / "contact_classes.json").write_text(strict_json.dumps(res, indent=1) + "\n")
    return res
