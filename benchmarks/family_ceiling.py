"""One honest ceiling for the families' pair statistics: every set on the same terms.

    python -m benchmarks.family_ceiling [--families PF00595 ...] [--out results/family/ceiling.json]

The sweep's floor (two halves of the held-out rows, each against the other) is not a ceiling for
its rows, which are 200 members against *all* held-out rows: the Pearson of connected
correlations grows with both sets' sizes, so a sampler can sit above the floor (RRM's sequential
did). Here every set is scored on one set of terms (pairstats.FamilyReference.matched): exactly n
rows (n = the natural half's size, at most 200) against held-out half B, with the same bootstrap
over its rows. The natural set on those terms, half A, is the ceiling for another natural sample
of that size; beside it the n -> infinity bound, the training rows' own statistics against half B
(FamilyReference.training_bound): natural rows are related by descent and a generator's members
are independent draws, so only the second bounds a generator (docs/results-family.md).

Sets: the natural half; the MDM's sequential decode and five parallel settings of the sweep's grid
(decoded here as the sweep decodes them: 200 members, temperature 1, seed 0, run_bench); the
field's anchors fitted on the training rows (results/family/NAME/{ardca,plmdca,bmdca}.npz from
benchmarks/family_contact_classes.py, where present). A row's passes are MDM passes; an anchor's
are not (its cost is its wall time, in contact_classes.json).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

from benchmarks.report import save
from mi_viz.core.bench import run_bench
from mi_viz.core.models import load_models
from mi_viz.core.sweep import parse_grid
from mi_viz.domains.family import family_domain, shipped_families
from mi_viz.domains.family.alignment import parse_row, read_alignment
from mi_viz.domains.family.pairstats import FamilyReference
from mi_viz.domains.family.predictors import ANCHORS
from mi_viz.domains.family.train import data_for

ROOT = Path(__file__).resolve().parents[1]
# sequential and the parallel settings the tables discuss (FAMILY_GRID's, Makefile): fixed before running
GRID = "sequential; topk:k=8; eb:gamma=4; mi-zero:gamma=4; mi:gamma=4:lam=10; mi-cap:k=8:gamma=32:lam=300"
MEMBERS = 200


def family_rows(name: str, data_dir: Path, bootstrap: int) -> dict:
    dom = family_domain(name)
    model, head = load_models(dom, need_head=dom.default_head() is not None)
    data = data_for(dom.meta, read_alignment(data_dir / name / f"{name}.align.80.fasta"))
    ref = FamilyReference(data.heldout_rows, data.train_rows)
    n = min(len(ref.halves()[0]), MEMBERS)
    rows: dict[str, dict] = {}
    out = {
        "n": n,
        "heldout_rows": len(data.heldout_rows),
        "natural": ref.matched(None, n, bootstrap),
        "training_bound": ref.training_bound(),
        "rows": rows,
    }
    for cfg in parse_grid(GRID, dom.sampler_defaults):
        cfg = cfg.replace(temperature=1.0, seed=0)
        if cfg.needs_head and head is None:
            continue
        res = run_bench(dom, model, ["_" * dom.width] * MEMBERS, cfg, head if cfg.needs_head else None)
        members = np.stack([parse_row(r["sequence"]) for r in res.rows]).astype(np.int64)
        rows[cfg.label()] = {"avg_passes": res.summary["avg_passes"], **ref.matched(members, n, bootstrap)}
        print(name, cfg.label(), rows[cfg.label()]["pair_corr_pearson"], flush=True)
    for anchor in ANCHORS:
        path = ROOT / "results" / "family" / name / f"{anchor}.npz"
        if path.exists():
            samples = np.load(path)["samples"].astype(np.int64)
            rows[anchor] = {"avg_passes": None, **ref.matched(samples, n, bootstrap)}
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--families", nargs="*", default=None, help="default: every shipped family; given, only these are updated"
    )
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "protein_families"))
    ap.add_argument("--bootstrap", type=int, default=100)
    ap.add_argument("--out", default=str(ROOT / "results" / "family" / "ceiling.json"))
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    names = a.families or shipped_families()
    families = {name: family_rows(name, Path(a.data), a.bootstrap) for name in names}
    out = Path(a.out)
    if a.families and out.exists():  # --families updates those families; the file keeps the others'
        kept = json.loads(out.read_text())["families"]
        families = {f: families.get(f, kept.get(f)) for f in [*kept, *(f for f in names if f not in kept)]}
    res = {
        "terms": f"n rows (the natural half's size, at most {MEMBERS}) against held-out half B; 90 % interval "
        "+-1.645 bootstrap sd over the set's rows",
        "grid": GRID,
        "families": families,
    }
    save(res, a.out, {f: {k: v["pair_corr_pearson"] for k, v in r["rows"].items()} for f, r in res["families"].items()})


if __name__ == "__main__":
    main()
