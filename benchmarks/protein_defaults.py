"""The protein MI defaults, chosen on the validation sweep by a criterion fixed before looking.

    python -m benchmarks.protein_defaults [--sweep results/protein/val_sweep/sweep.csv] [--out ...choice.json]

Criterion: among the MI rule's rows that average at most 1/5 of sequential's passes (the paper's
operating point: MI-guided near sequential's JSD at about a fifth of its passes), the lowest
k-means JSD to the validation reference; ties (within 0.001) go to the fewer passes. The same
criterion picks EB's and mi-zero's rows, for the matched comparison. Never the test reference.
The validation grid holds the MI rule as release 0.3 wrote it (`mi-pairs`, rule 3); every MI
sampler of the registry takes its (gamma, lambda) (ProteinDomain.sampler_defaults).
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.report import best_row, params_of, save, validation_sweep


def main(argv=None):
    a, rows, seq = validation_sweep("protein", __doc__, argv)
    cap = float(seq["avg_passes"]) / 5
    res = {
        "sweep": Path(a.sweep).name,
        "sequential": {"avg_passes": float(seq["avg_passes"]), "jsd": float(seq["jsd"])},
        "max_passes": round(cap, 2),
        "criterion": "lowest validation JSD at <= 1/5 of sequential's passes; ties within 0.001 to the fewer passes",
    }
    for s in ("mi-pairs", "eb", "mi-zero"):
        r = best_row(rows, s, cap, "jsd", 1e-3)
        figures = ("avg_passes", "jsd", "jsd_unirep")
        res[s] = None if r is None else {**params_of(r), **{k: float(r[k]) for k in figures if r.get(k)}}
    save(res, a.out)


if __name__ == "__main__":
    main()
