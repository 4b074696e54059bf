"""Every contact predictor of a family by the field's conventions: precision at top L, L/2 and L/5
in each separation class (short 6-11, medium 12-23, long >= 24, all >= 6), and the backbone's
categorical Jacobian as a second extraction beside its conditional MI.

    python -m benchmarks.family_contact_classes [--families PF00595 ...] [--rows 50]

Reads each family's committed maps (results/family/NAME/contacts.npz: the backbone's conditional
MI and its head's, MIp, the Potts model's, all APC'd), computes the categorical Jacobian of its
backbone (jacobian.categorical_jacobian) on --rows held-out rows (2 random half-masks each) and on
the alignment's consensus row (--consensus-masks masks), caches those maps beside (jacobian.npz),
reads the backbone's attention on the same rows as DAWN reads it (attention.npz),
fits the field's anchors on the training rows from their packages (anchors.py: arDCA, plmDCA;
cached as ardca.npz, plmdca.npz with their 200 members), and writes
results/family/NAME/contact_classes.json. The alignment is the user's
(../shared/data/protein_families here, --data elsewhere); nothing of it is written.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from mi_viz.core import strict_json
from mi_viz.core.reading import read_steps
from mi_viz.domains.family import family_domain, shipped_families
from mi_viz.domains.family.alignment import read_alignment
from mi_viz.domains.family.anchors import (
    ardca_contacts,
    ardca_sample,
    coupling_contacts,
    fit_ardca,
    fit_bmdca,
    fit_plmdca,
    potts_sample,
)
from mi_viz.domains.family.coevolution import mip
from mi_viz.domains.family.jacobian import categorical_jacobian
from mi_viz.domains.family.pairstats import FamilyReference
from mi_viz.domains.family.predictors import PREDICTORS
from mi_viz.domains.family.structure import apc, class_precisions
from mi_viz.domains.family.train import data_for, profile_of

ROOT = Path(__file__).resolve().parents[1]
MAPS = {k: array for k, (_, file, array) in PREDICTORS.items() if file == "contacts.npz"}  # `mi_viz contacts`' maps


def jacobian_maps(name: str, dom, model, data, rows: int, consensus_masks: int, seed: int) -> dict:
    """The Jacobian on held-out rows and on the consensus row (cached: recomputed only when absent)."""
    cache = ROOT / "results" / "family" / name / "jacobian.npz"
    if cache.exists():
        z = np.load(cache)
        return {k: z[k] for k in z.files}
    held = data.heldout_rows[np.random.default_rng(seed).permutation(len(data.heldout_rows))[:rows]]
    consensus = profile_of(data.train_rows, data.weights[~data.heldout]).argmax(1)[None]  # (1, L)
    out: dict = {}
    cost: dict = {}
    for key, r, m in (("rows", held, 2), ("consensus", consensus, consensus_masks)):
        t0 = time.perf_counter()
        jac = categorical_jacobian(model, r, masks_per_row=m, frac=0.5, seed=seed)
        out[f"jacobian_{key}"] = apc(jac.score).astype(np.float32)
        cost[key] = {
            "rows": len(r),
            "states": jac.states,
            "passes": jac.passes,
            "seconds": round(time.perf_counter() - t0, 1),
        }
    out["cost"] = np.array(strict_json.dumps(cost))
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(cache, **out)
    return out


def attention_map(name: str, model, data, rows: int, seed: int) -> np.ndarray:
    """The backbone's attention as a contact predictor (issue 42: is attention as good a proxy as
    the MI?): DAWN's dependency map (core.attention.dependency_map: last block, head-averaged, sinks
    dropped, symmetrised) averaged over the Jacobian's held-out rows, each half-masked twice, then
    APC'd like every other map; cached as attention.npz."""
    cache = ROOT / "results" / "family" / name / "attention.npz"
    if cache.exists():
        return np.load(cache)["attention"]
    held = data.heldout_rows[np.random.default_rng(seed).permutation(len(data.heldout_rows))[:rows]]
    g = np.random.default_rng(seed)
    vt = model.value_tokens.cpu()
    R, L = held.shape
    x = vt[torch.as_tensor(np.repeat(held, 2, axis=0), dtype=torch.long)]  # (2R, L) two masks a row
    for s in range(len(x)):
        x[s, torch.as_tensor(g.choice(L, max(1, round(0.5 * L)), replace=False))] = model.mask_id
    _, att = read_steps(model, x.tolist(), attention=True)  # the batched reading the viewer uses
    assert att is not None  # attention=True
    avg = apc(torch.stack(att).mean(0).double().numpy()).astype(np.float32)  # (L, L)
    np.savez_compressed(cache, attention=avg)
    return avg


EXTRACTIONS = ("truth", "jacobian_rows")  # the backbone's two readouts of its couplings


def structure_free_choice(maps: dict, data) -> dict:
    """Which of the backbone's extractions stands as its contacts, chosen without the structure: the
    held-out rows' own covariation (MIp of the held-out rows, which the backbone never trained on)
    averaged over each extraction's top W/5 column pairs at least 6 apart (W = the alignment's
    width: no structure, no column map); the larger wins. A criterion fixed after the contact
    classes of four families had been read (docs/results-family.md says so)."""
    val = mip(data.heldout_rows, data.weights[data.heldout])  # (W, W)
    W = len(val)
    i, j = np.triu_indices(W, 6)
    k = max(1, W // 5)
    score = {}
    for name in EXTRACTIONS:
        top = np.argsort(-maps[name][i, j], kind="stable")[:k]
        score[name] = round(float(val[i[top], j[top]].mean()), 5)
    return {
        "criterion": "mean held-out MIp over the extraction's top W/5 pairs >= 6 apart",
        "scores": score,
        "chosen": max(score, key=lambda n: score[n]),
    }


def agreement(a: np.ndarray, b: np.ndarray, cmap) -> dict:
    """Two contact maps over the scored pairs (mapped, >= 6 apart): Spearman of their scores and the
    shared share of their top-L/5 pairs (issue 41: does our Potts agree with plmDCA's?)."""
    from scipy.stats import spearmanr

    i, j = np.nonzero(np.triu(cmap.scored(), 1))
    x, y = a[i, j], b[i, j]
    k = max(1, cmap.n_mapped // 5)
    top = lambda s: set(np.argsort(-s, kind="stable")[:k].tolist())  # noqa: E731
    return {"spearman": round(float(spearmanr(x, y).statistic), 4), "top_L5_shared": round(len(top(x) & top(y)) / k, 4)}


def _fit_ardca(data, a):
    fit = fit_ardca(data.train_rows, data.weights[~data.heldout], seed=a.seed, max_rows=a.ardca_max_rows)
    return fit, ardca_contacts(fit), lambda n: ardca_sample(fit, n, seed=a.seed)


def _fit_plmdca(data, a):
    fit = fit_plmdca(data.train_rows)
    return fit, coupling_contacts(fit.J), lambda n: potts_sample(fit, n, seed=a.seed)


def _fit_bmdca(data, a):
    fit = fit_bmdca(data.train_rows, chains=a.bmdca_chains, max_steps=a.bmdca_steps, seed=a.seed)
    return fit, coupling_contacts(fit.J), lambda n: potts_sample(fit, n, seed=a.seed)


ANCHORS = {  # name -> fit on the training rows: (fit, contact map, draw n members)
    "ardca": _fit_ardca,
    "plmdca": _fit_plmdca,
    "bmdca": _fit_bmdca,
}


def anchor_maps(name: str, anchor: str, data, n_samples: int, a) -> tuple[dict, dict]:
    """An anchor fitted on the training rows (cached in results/family/NAME/ANCHOR.npz): its contact
    map, and n_samples members drawn from it, as {map}, {"samples": (n, L), "fit_seconds", ...}."""
    cache = ROOT / "results" / "family" / name / f"{anchor}.npz"
    if cache.exists():
        z = np.load(cache)
        return {anchor: z[anchor]}, {"samples": z["samples"], **json.loads(str(z["about"]))}
    fit, score, draw = ANCHORS[anchor](data, a)
    samples, sample_seconds = draw(n_samples)
    about = {"fit_seconds": round(fit.seconds, 1), "sample_seconds": round(sample_seconds, 2), "settings": fit.settings}
    score = score.astype(np.float32)
    np.savez_compressed(
        cache, **{anchor: score}, samples=samples.astype(np.int8), about=np.array(strict_json.dumps(about))
    )
    return {anchor: score}, {"samples": samples, **about}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--families", nargs="*", default=None, help="default: every shipped family with a contact report")
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "protein_families"))
    ap.add_argument("--rows", type=int, default=50, help="held-out rows the Jacobian averages over")
    ap.add_argument("--consensus-masks", type=int, default=40, help="masks of the consensus row")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-anchors", action="store_true", help="skip the anchors (optional installs)")
    ap.add_argument(
        "--anchors",
        nargs="*",
        default=["ardca", "plmdca"],
        choices=list(ANCHORS),
        help="the anchors to fit where no fit is committed (one that is, is reported anyway); bmDCA only on "
        "request: the same Potts model's contacts as plmDCA's at many times the cost",
    )
    ap.add_argument(
        "--ardca-max-rows", type=int, default=4000, help="arDCA fits a random subsample of the training rows past this"
    )
    ap.add_argument("--bmdca-chains", type=int, default=1000, help="bmDCA's persistent chains (its default 10,000)")
    ap.add_argument("--bmdca-steps", type=int, default=2000, help="bmDCA's gradient-step budget")
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    for name in a.families or shipped_families():
        folder = ROOT / "results" / "family" / name
        if not (folder / "contacts.npz").exists():
            continue
        dom = family_domain(name)
        model = dom.load_model()
        data = data_for(dom.meta, read_alignment(Path(a.data) / name / f"{name}.align.80.fasta"))
        z = np.load(folder / "contacts.npz")
        maps = {k: z[v] for k, v in MAPS.items() if v in z.files}
        jac = jacobian_maps(name, dom, model, data, a.rows, a.consensus_masks, a.seed)
        maps.update({k: v for k, v in jac.items() if k != "cost"})
        maps["attention"] = attention_map(name, model, data, a.rows, a.seed)
        anchors = {}
        # an anchor fitted before (its committed cache) is always reported; --anchors says what to fit anew
        wanted = [x for x in ANCHORS if x in a.anchors or (folder / f"{x}.npz").exists()]
        for anchor in [] if a.no_anchors else wanted:
            amap, anchors[anchor] = anchor_maps(name, anchor, data, 200, a)
            maps.update(amap)
        res = {
            "family": name,
            "mapped_columns": dom.contact_map.n_mapped,
            "classes": {"short": [6, 11], "medium": [12, 23], "long": [24, None], "all": [6, None]},
            "jacobian_cost": json.loads(str(jac["cost"])),
            "predictors": {k: class_precisions(m, dom.contact_map) for k, m in maps.items()},
            "extraction": structure_free_choice(maps, data),
        }
        if "plmdca" in maps:
            res["potts_vs_plmdca"] = agreement(maps["potts"], maps["plmdca"], dom.contact_map)
        ref = FamilyReference(data.heldout_rows, data.train_rows)
        for anchor, about in anchors.items():
            # its 200 members through the pair statistics every sampler's rows get (sweep.csv: the same
            # held-out rows, the same 200)
            pairs = ref(about["samples"].astype(np.int64), bootstrap=100)
            res[anchor] = {**{k: v for k, v in about.items() if k != "samples"}, "members": 200, **pairs}
        (folder / "contact_classes.json").write_text(strict_json.dumps(res, indent=1) + "\n")
        print(strict_json.dumps({"family": name, **{k: v["precision_long_L"] for k, v in res["predictors"].items()}}))


if __name__ == "__main__":
    main()
