"""Every sampler's front on a Sudoku test set, the MI rule's against each other's at matched passes,
with paired bootstrap intervals.

    python -m benchmarks.sudoku_fronts [--sweep-dir results/sudoku/test_hard] [--out .../fronts.json]

A front is a sampler family's settings (sweep_family: sampler, lambda), each a point
(average passes, solve rate). At a pass count x a front's solve rate is read by linear
interpolation between its two settings around x (none outside its range). Paired bootstrap:
the puzzles are resampled with replacement (the same draw for every setting, from the
per-puzzle rows the sweep saved with --save-rows), every setting's passes and solve rate are
recomputed, the fronts interpolated again, and the difference "MI front minus the other" taken;
its 5-95 % quantiles over 1,000 draws are the interval. A sampler run at one setting only is
compared where it stands: the MI front at that setting's own passes ("points"). Prints, last,
a one-line JSON.
"""

from __future__ import annotations

import argparse
import csv
import gzip
from pathlib import Path

import numpy as np

from benchmarks.report import save
from benchmarks.tables.common import interpolate  # the README's matched-pass tables read curves the same way
from mi_viz.core.plots import sweep_family
from mi_viz.core.samplers import row_label
from mi_viz.core.sweep import rows_path

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sweep-dir", default=str(ROOT / "results" / "sudoku" / "test_hard"))
    ap.add_argument("--method", default="mi lam=10", help="the front compared against every other")
    ap.add_argument(
        "--at", default="9,10,11,12.5,14", help="pass counts (inside the MI front: its settings span 7-15 passes)"
    )
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    d = Path(a.sweep_dir).resolve()
    rows = list(csv.DictReader(open(d / "sweep.csv")))
    settings = []  # (front, solved (N,), passes (N,))
    for r in rows:
        f = rows_path(d, row_label(r))
        if not f.exists():
            continue
        with gzip.open(f, "rt") as h:
            per = list(csv.DictReader(h))
        settings.append(
            (
                sweep_family(r),
                np.array([int(p["solved"]) for p in per], dtype=float),
                np.array([int(p["passes"]) for p in per], dtype=float),
            )
        )
    fronts = sorted({s[0] for s in settings})
    if a.method not in fronts:
        raise SystemExit(f"no saved rows for the front {a.method!r}; fronts with rows: {fronts}")
    N = len(settings[0][1])
    xs = [float(x) for x in a.at.split(",")]

    def curves(idx):
        c: dict[str, list] = {}
        for fam, solved, passes in settings:
            c.setdefault(fam, []).append((passes[idx].mean(), 100 * solved[idx].mean()))
        return c

    full = curves(np.arange(N))
    g = np.random.default_rng(0)
    draws = [curves(g.integers(0, N, N)) for _ in range(a.boot)]
    out = {"sweep_dir": str(d.relative_to(ROOT)), "method": a.method, "n": N, "boot": a.boot, "at": {}}
    for x in xs:
        m = interpolate(full[a.method], x)
        cell = {"method": None if m is None else round(m, 2), "vs": {}}
        for fam in fronts:
            if fam == a.method:
                continue
            o = interpolate(full[fam], x)
            if m is None or o is None:
                continue
            diffs = [
                dm - do
                for c in draws
                if (dm := interpolate(c[a.method], x)) is not None and (do := interpolate(c[fam], x)) is not None
            ]
            lo, hi = np.quantile(diffs, [0.05, 0.95]) if diffs else (np.nan, np.nan)
            cell["vs"][fam] = {"solved": round(o, 2), "diff": round(m - o, 2), "ci90": [round(lo, 2), round(hi, 2)]}
        out["at"][f"{x:g}"] = cell
    # a sampler run at one setting only has no front to interpolate: it is compared where it
    # stands, the MI front read at that setting's own passes (paired over the same draws)
    out["points"] = {}
    for fam in fronts:
        if fam == a.method or len(full[fam]) != 1:
            continue
        x, o = full[fam][0]
        m = interpolate(full[a.method], x)
        if m is None:
            continue
        diffs = [dm - c[fam][0][1] for c in draws if (dm := interpolate(c[a.method], c[fam][0][0])) is not None]
        lo, hi = np.quantile(diffs, [0.05, 0.95]) if diffs else (np.nan, np.nan)
        out["points"][fam] = {
            "passes": round(x, 2),
            "solved": round(o, 2),
            "method": round(m, 2),
            "diff": round(m - o, 2),
            "ci90": [round(lo, 2), round(hi, 2)],
        }
    # a front with no pass count in common with the MI front: its settings, and the MI front's
    # best solve rate in at most as many passes as its cheapest setting (None: MI needs more)
    compared = {fam for cell in out["at"].values() for fam in cell["vs"]} | set(out["points"])
    out["outside"] = {}
    for fam in fronts:
        if fam == a.method or fam in compared:
            continue
        pts = sorted(full[fam])
        below = [s for p, s in full[a.method] if p <= pts[0][0]]
        out["outside"][fam] = {
            "points": [[round(p, 2), round(s, 2)] for p, s in pts],
            "method_best_at_fewer_passes": round(max(below), 2) if below else None,
        }
    save(out, a.out)


if __name__ == "__main__":
    main()
