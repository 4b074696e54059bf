"""Sampler fronts at matched passes, one domain a run: every sampler family's curve (its settings,
each a point: average passes against the domain's measure) read at the same passes, linear
between the two settings around them and absent outside, and the MI rule's lead there with an
interval. The tables (benchmarks/tables/) only format what this writes.

    python -m benchmarks.fronts sudoku [--sweep-dir results/sudoku/test_hard] [--at 9,10,...] [--out FILE]
    python -m benchmarks.fronts family   [--out results/family/fronts.json]
    python -m benchmarks.fronts antibody [--out results/antibody/fronts.json]

- sudoku: the solve rate; the interval a paired bootstrap over the puzzles (the per-puzzle rows
  the sweep saved with --save-rows, resampled with replacement, the same draw for every setting;
  every setting's passes and solve rate recomputed, the fronts read again, "the MI front minus
  the other" taken: its 5-95 % quantiles over 1,000 draws). A sampler run at one setting only is
  compared where it stands, the MI front read at that setting's own passes ("points"); a front
  with no pass count in common by its settings and the MI front's best in at most as many passes
  as its cheapest ("outside").
- family: the pair-correlation Pearson against held-out members, per protein family and sweep;
  each MI rule's lead over the best of its rivals, the interval from the two rows' bootstrap sds
  (interpolated like the values; treated as independent, conservative: they share seeds).
- antibody: the infill's pseudo-log-likelihood under AntiBERTy on every test sweep (cdr3, cdrs) at
  a quarter, a third and half of sequential's passes and at the validated `mi` default's own row
  (where the all-CDR curves, which end well short of a quarter of sequential's passes, can be
  compared at all); the best MI rule's lead over the best rival, the interval from the two rows'
  standard errors over the chains (treated as independent: conservative).

Prints, last, a one-line JSON.
"""

from __future__ import annotations

import argparse
import csv
import gzip
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.report import save
from benchmarks.tables.common import ROOT, R, interpolate, label, rows_of
from mi_viz.core.plots import sweep_family
from mi_viz.core.samplers import config_for, row_label
from mi_viz.core.sweep import rows_path
from mi_viz.domains.antibody import DOMAIN as ANTIBODY
from mi_viz.domains.family import SHIPPED

# family: (label, MI rule, the samplers it must beat): the entropy budgets and top-k (mi-cap also its
# own ablation, the capped entropy budget without MI: mi-cap k=8 lam=0), then the training-free rival
# that reads dependencies from attention (issue 42: is the head worth its training?)
FAMILY_AT = (12, 16, 24, 32)
FAMILY_LEADS = (
    ("mi lam=10", "mi lam=10", ("topk", "eb", "mi-zero")),
    ("mi-cap k=8", "mi-cap k=8", ("topk", "eb", "mi-zero", "mi-cap k=8 lam=0")),
    ("mi lam=10 vs dawn", "mi lam=10", ("dawn",)),
    ("mi-cap k=8 vs dawn", "mi-cap k=8", ("dawn",)),
)
FAMILY_SWEEPS = ("sweep.csv", "val_sweep/sweep.csv")
ANTIBODY_MASKS = ("cdr3", "cdrs")
MI_RULES = ("mi", "mi-tc", "mi-cap", "mi-pairs")
ANTIBODY_RIVALS = ("topk", "eb", "mi-zero", "threshold", "dawn")


def curves(rows: list[dict], measure: str, spread: str) -> tuple[dict[str, list], dict[str, list]]:
    """Each sampler family's points [(average passes, measure)], and the same of its spread."""
    value: dict[str, list] = {}
    sd: dict[str, list] = {}
    for r in rows:
        x = float(r["avg_passes"])
        value.setdefault(sweep_family(r), []).append((x, float(r[measure])))
        sd.setdefault(sweep_family(r), []).append((x, float(r[spread])))
    return value, sd


def quantiles(diffs: list[float]) -> list[float]:
    lo, hi = np.quantile(diffs, [0.05, 0.95]) if diffs else (np.nan, np.nan)
    return [round(lo, 2), round(hi, 2)]


# --- sudoku: solve rate, a paired bootstrap over the puzzles ---------------------------------------
def sudoku(a) -> None:
    d = Path(a.sweep_dir).resolve()
    settings = []  # (front, solved (N,), passes (N,))
    for r in rows_of(d / "sweep.csv"):
        f = rows_path(d, row_label(r))
        if not f.exists():
            continue
        with gzip.open(f, "rt") as h:
            per = list(csv.DictReader(h))
        solved = np.array([int(p["solved"]) for p in per], dtype=float)
        settings.append((sweep_family(r), solved, np.array([int(p["passes"]) for p in per], dtype=float)))
    fronts = sorted({s[0] for s in settings})
    if a.method not in fronts:
        raise SystemExit(f"no saved rows for the front {a.method!r}; fronts with rows: {fronts}")
    N = len(settings[0][1])

    def points(idx):
        c: dict[str, list] = {}
        for fam, solved, passes in settings:
            c.setdefault(fam, []).append((passes[idx].mean(), 100 * solved[idx].mean()))
        return c

    full = points(np.arange(N))
    g = np.random.default_rng(0)
    draws = [points(g.integers(0, N, N)) for _ in range(a.boot)]
    out = {"sweep_dir": str(d.relative_to(ROOT)), "method": a.method, "n": N, "boot": a.boot, "at": {}}
    for x in (float(x) for x in a.at.split(",")):
        m = interpolate(full[a.method], x)
        cell: dict[str, Any] = {"method": None if m is None else round(m, 2), "vs": {}}
        for fam in fronts:
            o = interpolate(full[fam], x)
            if fam == a.method or m is None or o is None:
                continue
            diffs = [
                dm - do
                for c in draws
                if (dm := interpolate(c[a.method], x)) is not None and (do := interpolate(c[fam], x)) is not None
            ]
            cell["vs"][fam] = {"solved": round(o, 2), "diff": round(m - o, 2), "ci90": quantiles(diffs)}
        out["at"][f"{x:g}"] = cell
    out["points"] = {}
    for fam in fronts:
        if fam == a.method or len(full[fam]) != 1:
            continue
        x, o = full[fam][0]
        m = interpolate(full[a.method], x)
        if m is None:
            continue
        diffs = [dm - c[fam][0][1] for c in draws if (dm := interpolate(c[a.method], c[fam][0][0])) is not None]
        out["points"][fam] = {"passes": round(x, 2), "solved": round(o, 2), "method": round(m, 2),
                              "diff": round(m - o, 2), "ci90": quantiles(diffs)}  # fmt: skip
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


# --- family: pair statistics, the rows' bootstrap sds ----------------------------------------------
def family_fronts(rows: list[dict]) -> dict:
    """{x: {"curves": {family: value}, "leads": {label: {"diff", "sd_method", "sd_rival", "vs"}}}}"""
    value, spread = curves(rows, "pair_corr_pearson", "pair_corr_sd")
    out = {}
    for x in FAMILY_AT:
        at_x = {c: interpolate(v, x) for c, v in value.items()}  # every curve read once at x
        leads = {}
        for name, method, rivals in FAMILY_LEADS:
            m = at_x.get(method)
            best = max(((at_x[c], c) for c in rivals if at_x.get(c) is not None), default=None)
            if m is None or best is None:
                continue
            leads[name] = {"diff": m - best[0], "sd_method": interpolate(spread[method], x),
                           "sd_rival": interpolate(spread[best[1]], x), "vs": best[1]}  # fmt: skip
        out[str(x)] = {"curves": {c: v for c, v in at_x.items() if v is not None}, "leads": leads}
    return out


def family(a) -> None:
    res: dict = {"at": list(FAMILY_AT), "leads": [[n, m, list(r)] for n, m, r in FAMILY_LEADS], "families": {}}
    for fam in SHIPPED:
        for sweep in FAMILY_SWEEPS:
            path = R / "family" / fam / sweep
            if not path.exists():
                continue
            rows = rows_of(path)
            seq = next((r for r in rows if r["sampler"] == "sequential"), None)
            res["families"].setdefault(fam, {})[sweep] = {
                "sequential": None
                if seq is None
                else {"pair_corr_pearson": float(seq["pair_corr_pearson"]), "avg_passes": float(seq["avg_passes"])},
                "at": family_fronts(rows),
            }
    save(res, a.out, {"families": list(res["families"])})


# --- antibody: infill pseudo-log-likelihood, the rows' standard errors -----------------------------
def antibody_fronts(rows: list[dict], at: list[float]) -> dict:
    value, spread = curves([r for r in rows if r["sampler"] != "sequential" and r.get("pll_se")], "pll", "pll_se")
    out = {}
    for x in at:
        at_x = {c: interpolate(v, x) for c, v in value.items()}
        at_x = {c: v for c, v in at_x.items() if v is not None}
        mi = max(((v, c) for c, v in at_x.items() if c.split()[0] in MI_RULES), default=None)
        rival = max(((v, c) for c, v in at_x.items() if c.split()[0] in ANTIBODY_RIVALS), default=None)
        lead = None
        if mi and rival:
            sm, sr = interpolate(spread[mi[1]], x), interpolate(spread[rival[1]], x)
            half = 1.645 * (sm**2 + sr**2) ** 0.5
            lead = {"mi": mi[1], "vs": rival[1], "diff": mi[0] - rival[0], "lo": mi[0] - rival[0] - half,
                    "hi": mi[0] - rival[0] + half}  # fmt: skip
        out[f"{x:g}"] = {"curves": at_x, "lead": lead}
    return out


def antibody(a) -> None:
    res: dict = {"masks": {}}
    for mask in ANTIBODY_MASKS:
        path = R / "antibody" / mask / "sweep.csv"
        if not path.exists():
            continue
        rows = rows_of(path)
        seq = next(r for r in rows if r["sampler"] == "sequential")
        n = float(seq["avg_passes"])
        at = [round(n / k, 2) for k in (4, 3, 2)]  # a quarter, a third and half of sequential's passes
        default = config_for("mi", ANTIBODY.sampler_defaults).label()
        own = [round(float(r["avg_passes"]), 2) for r in rows if label(r) == default]  # the default's own row
        res["masks"][mask] = {
            "sequential": {k: float(seq[k]) for k in ("avg_passes", "pll", "pll_se", "pll_natural") if seq.get(k)},
            "at": antibody_fronts(rows, sorted(set(at + own))),
            "mi_default": {"label": default, "avg_passes": own[0] if own else None},
        }
    save(res, a.out, {"masks": list(res["masks"])})


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="domain", required=True)
    s = sub.add_parser("sudoku", help="solve rate, a paired bootstrap over the puzzles")
    s.add_argument("--sweep-dir", default=str(R / "sudoku" / "test_hard"))
    s.add_argument("--method", default="mi lam=10", help="the front compared against every other")
    s.add_argument("--at", default="9,10,11,12.5,14", help="pass counts (inside the MI front: 7-15 passes)")
    s.add_argument("--boot", type=int, default=1000)
    s.add_argument("--out", default=None)
    sub.add_parser("family", help="pair statistics per protein family").add_argument(
        "--out", default=str(R / "family" / "fronts.json")
    )
    sub.add_parser("antibody", help="infill pseudo-log-likelihood per region").add_argument(
        "--out", default=str(R / "antibody" / "fronts.json")
    )
    a = ap.parse_args(argv)
    {"sudoku": sudoku, "family": family, "antibody": antibody}[a.domain](a)


if __name__ == "__main__":
    main()
