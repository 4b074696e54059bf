"""The antibody sampler defaults, chosen on the validation chains by a criterion fixed before the sweep.

    python -m benchmarks.antibody_defaults [--sweep results/antibody/val_sweep/sweep.csv] [--out .../choice.json]

Validation: 64 chains of data/antibody/val.tsv (32 heavy, 16 kappa, 16 lambda; never the test
chains), CDR3 infilled at temperature 1, judged against reference_val. Criterion (the issue's
target, fixed before the sweep ran): among a sampler's rows that average at most 1/3 of
sequential's passes, the highest infill pseudo-log-likelihood under AntiBERTy (nats a residue);
ties within 0.01 nats go to the fewer passes. The domain's sampler_defaults are then set to the
choice (tests/test_choices.py checks the choice names its row).
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.report import best_row, params_of, save, validation_sweep

TIE = 0.01


def choose(rows: list[dict], sampler: str, max_passes: float) -> dict | None:
    r = best_row(rows, sampler, max_passes, "pll", TIE, higher=True)
    return None if r is None else {**params_of(r), "avg_passes": float(r["avg_passes"]), "pll": float(r["pll"])}


def main(argv=None):
    a, rows, seq = validation_sweep("antibody", __doc__, argv)
    cap = float(seq["avg_passes"]) / 3
    res = {
        "sweep": Path(a.sweep).name,
        "sequential": {"avg_passes": float(seq["avg_passes"]), "pll": float(seq["pll"])},
        "max_passes": round(cap, 3),
        "criterion": f"highest validation infill PLL at <= 1/3 of sequential's passes; ties within {TIE} nats "
        "to the fewer passes",
        "chosen": {s: choose(rows, s, cap) for s in sorted({r["sampler"] for r in rows} - {"sequential"})},
    }
    save(res, a.out)


if __name__ == "__main__":
    main()
