"""The family sampler defaults, chosen on validation sweeps by a criterion fixed before they ran.

    python -m benchmarks.family_defaults [--families PF00595 ...] [--out results/family/choice.json]

Validation never touches the held-out rows: each family's validation sweep
(results/family/NAME/val_sweep/sweep.csv, `make family-val-sweep`) scores generated members
against the family's *training* rows, with another sample seed than the results.

Criterion (fixed before the sweeps ran): a setting qualifies when, on every family, its
pair-correlation Pearson is at most 0.02 below sequential's; among the qualifying settings of
a sampler, the one with the fewest passes relative to the alignment's width (averaged over the
families). The same criterion for every sampler with a budget (eb, mi, mi-zero, mi-tc, and
the samplers of the field), so the defaults compare like with like. A sampler with no
qualifying setting keeps its registry value and is reported as such.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

from benchmarks.report import params_of, save, setting
from mi_viz.domains.family import SHIPPED

ROOT = Path(__file__).resolve().parents[1]
MAX_DROP = 0.02


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--families", nargs="+", default=list(SHIPPED), help="default: every shipped family")
    ap.add_argument("--out", default=str(ROOT / "results" / "family" / "choice.json"))
    a = ap.parse_args(argv)
    per: dict[tuple, dict] = {}
    seq: dict[str, dict] = {}
    for fam in a.families:
        width = json.loads((ROOT / "checkpoints" / f"family_{fam}.json").read_text())["config"]["width"]
        for r in csv.DictReader(open(ROOT / "results" / "family" / fam / "val_sweep" / "sweep.csv")):
            r["rel_passes"] = float(r["avg_passes"]) / width
            if r["sampler"] == "sequential":
                seq[fam] = r
            per.setdefault(setting(r), {})[fam] = r
    crit = (
        f"pair-correlation Pearson within {MAX_DROP} of sequential's on every family (training-row reference); "
        "then the fewest passes relative to the width"
    )
    res = {"criterion": crit, "families": a.families, "chosen": {}}
    for sampler in sorted({k[0] for k in per} - {"sequential"}):
        ok = [
            (sum(v["rel_passes"] for v in fams.values()) / len(fams), k)
            for k, fams in per.items()
            if k[0] == sampler
            and len(fams) == len(a.families)
            and all(float(fams[f]["pair_corr_pearson"]) >= float(seq[f]["pair_corr_pearson"]) - MAX_DROP for f in fams)
        ]
        if not ok:
            res["chosen"][sampler] = None
            continue
        rel, k = min(ok)
        res["chosen"][sampler] = {**params_of(next(iter(per[k].values()))), "relative_passes": round(rel, 4)}
    save(res, a.out)


if __name__ == "__main__":
    main()
