"""Pair statistics of every sampler family at matched passes, per protein family: each curve read at
the same average passes (linear between its points; absent outside it) and each MI rule's lead
over the best of its rivals there, with a 90 % interval from the rows' bootstrap sd (interpolated
like the values; the two rows treated as independent, which is conservative: they share seeds).

    python -m benchmarks.family_fronts [--out results/family/fronts.json]

The tables (benchmarks/tables/family.py) only format this file.
"""

from __future__ import annotations

import argparse

from benchmarks.report import save
from benchmarks.tables.common import R, interpolate, rows_of
from mi_viz.core.plots import sweep_family
from mi_viz.domains.family import SHIPPED

AT = (12, 16, 24, 32)
# (label, MI rule, the samplers it must beat): the entropy budgets and top-k (mi-cap also its own
# ablation, the capped entropy budget without MI: mi-cap k=8 lam=0), then the training-free rival
# that reads dependencies from attention (issue 42: is the head worth its training?)
LEADS = (
    ("mi lam=10", "mi lam=10", ("topk", "eb", "mi-zero")),
    ("mi-cap k=8", "mi-cap k=8", ("topk", "eb", "mi-zero", "mi-cap k=8 lam=0")),
    ("mi lam=10 vs dawn", "mi lam=10", ("dawn",)),
    ("mi-cap k=8 vs dawn", "mi-cap k=8", ("dawn",)),
)
SWEEPS = ("sweep.csv", "val_sweep/sweep.csv")


def fronts(rows: list[dict]) -> dict:
    """{x: {"curves": {family: value}, "leads": {label: {"diff", "sd_method", "sd_rival", "vs"}}}}"""
    value: dict[str, list] = {}
    spread: dict[str, list] = {}
    for r in rows:
        x = float(r["avg_passes"])
        value.setdefault(sweep_family(r), []).append((x, float(r["pair_corr_pearson"])))
        spread.setdefault(sweep_family(r), []).append((x, float(r["pair_corr_sd"])))
    out = {}
    for x in AT:
        at_x = {c: interpolate(v, x) for c, v in value.items()}  # every curve read once at x
        leads = {}
        for label, method, rivals in LEADS:
            m = at_x.get(method)
            best = max(((at_x[c], c) for c in rivals if at_x.get(c) is not None), default=None)
            if m is None or best is None:
                continue
            leads[label] = {
                "diff": m - best[0],
                "sd_method": interpolate(spread[method], x),
                "sd_rival": interpolate(spread[best[1]], x),
                "vs": best[1],
            }
        out[str(x)] = {"curves": {c: v for c, v in at_x.items() if v is not None}, "leads": leads}
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(R / "family" / "fronts.json"))
    a = ap.parse_args(argv)
    res: dict = {"at": list(AT), "leads": [[label, m, list(r)] for label, m, r in LEADS], "families": {}}
    for fam in SHIPPED:
        for sweep in SWEEPS:
            path = R / "family" / fam / sweep
            if not path.exists():
                continue
            rows = rows_of(path)
            seq = next((r for r in rows if r["sampler"] == "sequential"), None)
            res["families"].setdefault(fam, {})[sweep] = {
                "sequential": None
                if seq is None
                else {"pair_corr_pearson": float(seq["pair_corr_pearson"]), "avg_passes": float(seq["avg_passes"])},
                "at": fronts(rows),
            }
    save(res, a.out, {"families": list(res["families"])})


if __name__ == "__main__":
    main()
