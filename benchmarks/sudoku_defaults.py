"""Sudoku's sampler defaults, chosen on the validation sweep by the criterion fixed before it ran.

    python -m benchmarks.sudoku_defaults [--sweep results/sudoku/val_sweep/sweep.csv] [--out .../choice.json]

Criterion (release 0.3's, kept for every sampler with a budget): among a sampler's rows that
average at most 1/3.5 of sequential's passes on the 200 validation puzzles (training
distribution, never a test set), the highest solve rate; ties (within one puzzle) go to the
fewer passes. Rule-4 rows only for the mi rules (rule-3 rows are mi-pairs'). The domain's
sampler_defaults are then set to the choice (tests/test_sudoku.py checks they agree).
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.report import params_of, save, validation_sweep

SAMPLERS = ("mi", "mi-tc", "mi-zero", "mi-pairs", "eb", "threshold", "margin", "klass", "dilated", "dawn")


def choose(rows: list[dict], sampler: str, max_passes: float, n: int) -> dict | None:
    cand = [r for r in rows if r["sampler"] == sampler and float(r["avg_passes"]) <= max_passes]
    if sampler in ("mi", "mi-tc", "mi-zero"):
        cand = [r for r in cand if str(r.get("rule_version")) == "4"]
    if not cand:
        return None
    best = max(float(r["solved_frac"]) for r in cand)
    near = [r for r in cand if float(r["solved_frac"]) >= best - 0.5 / n]
    r = min(near, key=lambda r: float(r["avg_passes"]))
    return {
        **params_of(r),
        "avg_passes": float(r["avg_passes"]),
        "solved_frac": float(r["solved_frac"]),
    }


def main(argv=None):
    a, rows, seq = validation_sweep("sudoku", __doc__, argv)
    n = int(seq["n"])
    cap = float(seq["avg_passes"]) / 3.5
    res = {
        "sweep": Path(a.sweep).name,
        "sequential": {"avg_passes": float(seq["avg_passes"]), "solved_frac": float(seq["solved_frac"])},
        "max_passes": round(cap, 2),
        "criterion": "highest validation solve rate at <= 1/3.5 of sequential's passes; ties within one "
        "puzzle to the fewer passes",
        "chosen": {s: choose(rows, s, cap, n) for s in SAMPLERS},
    }
    save(res, a.out)


if __name__ == "__main__":
    main()
