"""The antibody fronts' leads with a paired bootstrap over chains (fronts.json treats the
two curves as independent, which is conservative: every setting infills the same 64 chains).

    python -m benchmarks.antibody_paired [--rows results/antibody/olga/cdr3/rows] \
        [--out results/antibody/olga/fronts_paired.json]

For each lead of results/antibody/olga/fronts.json (the best MI rule against the best rival at a pass
count), each curve's value there is the linear interpolation between its two settings around that
pass count (as fronts.json reads it): per chain, the same weights on that chain's pseudo-log-
likelihood under the two settings. The chains' PLLs are recomputed from the infilled sequences a
sweep saved (`mi_viz sweep antibody ... --save-rows`), and each setting's mean must reproduce its
committed row's `pll` (else the script stops: the rows are not the committed decodes). The lead's
90 % interval: 10,000 resamples of the chains, the same chains for both curves.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json

import numpy as np
import torch

from benchmarks.report import save
from benchmarks.tables.common import R, label, rows_of
from mi_viz.core.plots import sweep_family
from mi_viz.core.sweep import rows_path
from mi_viz.domains.antibody import DOMAIN as ANTIBODY
from mi_viz.domains.antibody import chains_of, infilled
from mi_viz.domains.antibody.judge import region_pll

DATA = R.parent / "data" / "antibody"


def bracket(points: list[tuple[float, dict]], x: float) -> tuple[dict, dict, float] | None:
    """The two settings of a curve around x passes and the weight of the second (fronts' interpolation)."""
    pts = sorted(points, key=lambda p: p[0])
    for (x0, r0), (x1, r1) in zip(pts, pts[1:]):
        if x0 <= x <= x1:
            return r0, r1, 0.0 if x1 == x0 else (x - x0) / (x1 - x0)
    return None


def chain_plls(model, row: dict, rows_dir, items) -> np.ndarray:
    """(N,) each chain's infill PLL under the setting of a committed row, from its saved infills (the
    whole chain where the rows kept it)."""
    path = rows_path(rows_dir, label(row))
    with gzip.open(path, "rt") as f:
        saved = sorted(csv.DictReader(f), key=lambda r: int(r["i"]))
    seqs = [r["sequence"] if r.get("sequence") else infilled(it, r["infill"]) for r, it in zip(saved, items)]
    per = np.array(region_pll(model, seqs, [it.masked for it in items]))
    if round(float(per.mean()), 4) != float(row["pll"]):
        raise SystemExit(f"{path.name}: mean PLL {per.mean():.4f} is not the committed row's {row['pll']}")
    return per


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mask", default="cdr3")
    ap.add_argument("--rows", default=None, help="a sweep's --save-rows folder (default: results/antibody/MASK/rows)")
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--out", default=str(R / "antibody" / "olga" / "fronts_paired.json"))
    a = ap.parse_args(argv)
    torch.set_num_threads(2)
    rows_dir = a.rows or R / "antibody" / "olga" / a.mask
    committed = rows_of(R / "antibody" / "olga" / a.mask / "sweep.csv")
    fronts = json.loads((R / "antibody" / "olga" / "fronts.json").read_text())["masks"][a.mask]
    items = chains_of(DATA / "test.tsv", a.mask, int(committed[0]["n"]))
    model = ANTIBODY.load_model()
    curves: dict[str, list] = {}
    for r in committed:
        if r["sampler"] != "sequential" and r.get("pll"):
            curves.setdefault(sweep_family(r), []).append((float(r["avg_passes"]), r))
    per_setting: dict[str, np.ndarray] = {}
    g = np.random.default_rng(0)
    out: dict = {"mask": a.mask, "chains": len(items), "resamples": a.resamples, "at": {}}
    for x, at in fronts["at"].items():
        lead = at.get("lead")
        if not lead:
            continue
        values = {}
        for curve in (lead["mi"], lead["vs"]):
            r0, r1, w = bracket(curves[curve], float(x))  # type: ignore[misc]
            for r in (r0, r1):
                if label(r) not in per_setting:
                    per_setting[label(r)] = chain_plls(model, r, rows_dir, items)
            values[curve] = (1 - w) * per_setting[label(r0)] + w * per_setting[label(r1)]  # (N,)
        d = values[lead["mi"]] - values[lead["vs"]]  # (N,) per chain, paired
        boot = d[g.integers(0, len(d), (a.resamples, len(d)))].mean(1)
        lo, hi = np.quantile(boot, [0.05, 0.95])
        out["at"][x] = {
            "mi": lead["mi"],
            "vs": lead["vs"],
            "diff": round(float(d.mean()), 4),
            "paired_lo": round(float(lo), 4),
            "paired_hi": round(float(hi), 4),
            "independent_lo": round(lead["lo"], 4),
            "independent_hi": round(lead["hi"], 4),
        }
        print(x, out["at"][x], flush=True)
    save(out, a.out, {"at": list(out["at"])})


if __name__ == "__main__":
    main()
