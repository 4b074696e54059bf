"""Antibody infill at matched passes: each sampler curve's pseudo-log-likelihood read at the same
average passes (linear between its points; absent outside it), and the best MI rule's lead over
the best of the entropy rules and top-k there, with a 90 % interval from the two rows' standard
errors over the chains (treated as independent: conservative, the samplers share chains and seeds).

    python -m benchmarks.antibody_fronts [--out results/antibody/fronts.json]

Reads every test sweep results/antibody/MASK/sweep.csv (cdr3, cdrs); the tables only format it.
Matched at a quarter, a third and half of sequential's passes, and at the passes of the validated
`mi` default's own row (AntibodyDomain.sampler_defaults): where the all-CDR curves, which end well
short of a quarter of sequential's 32 passes, can be compared at all.
"""

from __future__ import annotations

import argparse

from benchmarks.report import save
from benchmarks.tables.common import R, interpolate, label, rows_of
from mi_viz.core.plots import sweep_family
from mi_viz.core.samplers import config_for
from mi_viz.domains.antibody import DOMAIN as ANTIBODY

MASKS = ("cdr3", "cdrs")
MI_RULES = ("mi", "mi-tc", "mi-cap", "mi-pairs")
RIVALS = ("topk", "eb", "mi-zero", "threshold", "dawn")


def fronts(rows: list[dict], at: list[float]) -> dict:
    value: dict[str, list] = {}
    spread: dict[str, list] = {}
    for r in rows:
        if r["sampler"] == "sequential" or not r.get("pll_se"):
            continue
        x = float(r["avg_passes"])
        value.setdefault(sweep_family(r), []).append((x, float(r["pll"])))
        spread.setdefault(sweep_family(r), []).append((x, float(r["pll_se"])))
    out = {}
    for x in at:
        at_x = {c: interpolate(v, x) for c, v in value.items()}
        at_x = {c: v for c, v in at_x.items() if v is not None}
        mi = max(((v, c) for c, v in at_x.items() if c.split()[0] in MI_RULES), default=None)
        rival = max(((v, c) for c, v in at_x.items() if c.split()[0] in RIVALS), default=None)
        lead = None
        if mi and rival:
            sm, sr = interpolate(spread[mi[1]], x), interpolate(spread[rival[1]], x)
            half = 1.645 * (sm**2 + sr**2) ** 0.5
            lead = {"mi": mi[1], "vs": rival[1], "diff": mi[0] - rival[0], "lo": mi[0] - rival[0] - half,
                    "hi": mi[0] - rival[0] + half}  # fmt: skip
        out[f"{x:g}"] = {"curves": at_x, "lead": lead}
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(R / "antibody" / "fronts.json"))
    a = ap.parse_args(argv)
    res: dict = {"masks": {}}
    for mask in MASKS:
        path = R / "antibody" / mask / "sweep.csv"
        if not path.exists():
            continue
        rows = rows_of(path)
        seq = next(r for r in rows if r["sampler"] == "sequential")
        n = float(seq["avg_passes"])
        at = [round(n / k, 2) for k in (4, 3, 2)]  # a quarter, a third and half of sequential's passes
        default = config_for("mi", ANTIBODY.sampler_defaults).label()
        own = [round(float(r["avg_passes"]), 2) for r in rows if label(r) == default]  # the default's own row
        at = sorted(set(at + own))
        res["masks"][mask] = {
            "sequential": {k: float(seq[k]) for k in ("avg_passes", "pll", "pll_se", "pll_natural") if seq.get(k)},
            "at": fronts(rows, at),
            "mi_default": {"label": default, "avg_passes": own[0] if own else None},
        }
    save(res, a.out, {"masks": list(res["masks"])})


if __name__ == "__main__":
    main()
