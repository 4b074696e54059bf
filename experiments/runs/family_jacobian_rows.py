"""Does the Jacobian read a family's contacts better from more held-out rows? (issue 49's PDZ lever)

    python -m experiments.runs.family_jacobian_rows --family PF00595 --rows 134 [--data DIR]

The categorical Jacobian (family/reading.py, the held-out rows' part only) on --rows held-out rows
instead of the committed 50, scored like every predictor (class_precisions, separation in
residues) beside the committed 50-row Jacobian and MIp; writes
results/family/NAME/jacobian_rows_N.json with its cost. The budget is stated before it runs.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from mi_viz.core import strict_json
from mi_viz.domains.family import family_domain
from mi_viz.domains.family.alignment import read_alignment
from mi_viz.domains.family.predictors import committed_maps
from mi_viz.domains.family.reading import JacobianBudget, jacobian_cost, jacobian_maps
from mi_viz.domains.family.scoring import class_precisions
from mi_viz.domains.family.train import data_for

ROOT = Path(__file__).resolve().parents[1]
KEYS = ("precision_all_L5", "precision_all_L2", "precision_long_L", "precision_long_L5")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--family", default="PF00595")
    ap.add_argument("--rows", type=int, default=134, help="held-out rows (every one of PDZ's 134 by default)")
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "protein_families"))
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    dom = family_domain(a.family)
    model = dom.load_model()
    data = data_for(dom.meta, read_alignment(Path(a.data) / a.family / f"{a.family}.align.80.fasta"))
    budget = JacobianBudget(a.rows, consensus_masks=0, seed=a.seed)
    cost = jacobian_cost(model, data, budget)
    print(f"budget: {cost['passes']:,} passes, about {cost['seconds'] / 60:.0f} min on one core", flush=True)
    t0 = time.perf_counter()
    jac = jacobian_maps(model, data, budget)
    folder = ROOT / "results" / "family" / a.family
    maps = committed_maps(folder)
    assert dom.contact_map is not None
    score = {
        f"jacobian_rows_{cost['rows']}": class_precisions(jac["jacobian_rows"], dom.contact_map),
        "jacobian_rows_50 (committed)": class_precisions(maps["jacobian_rows"], dom.contact_map),
        "mip": class_precisions(maps["mip"], dom.contact_map),
    }
    res = {
        "family": a.family,
        "rows": cost["rows"],
        "cost": {**json.loads(str(jac["cost"])), "estimated_seconds": cost["seconds"]},
        "wall_seconds": round(time.perf_counter() - t0, 1),
        "scores": {k: {m: v[m] for m in KEYS} for k, v in score.items()},
    }
    out = folder / f"jacobian_rows_{cost['rows']}.json"
    out.write_text(strict_json.dumps(res, indent=1) + "\n")
    print(strict_json.dumps(res["scores"]))


if __name__ == "__main__":
    main()
