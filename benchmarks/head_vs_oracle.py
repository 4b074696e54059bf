"""How much of a rule's loss is its head: each head rule beside its oracle at the same setting
(`mi` gamma 8 lambda 10 beside `mi-gt` gamma 8 lambda 10; `demask` tau 0.2 beside `demask-gt` tau
0.2), on the same inputs, paired input by input.

    python -m benchmarks.head_vs_oracle --oracles results/antibody/sapiens/oracles \
        --heads results/antibody/sapiens/sabdab_test --out results/antibody/sapiens/oracles/head_vs_oracle.json
    python -m benchmarks.head_vs_oracle --oracles results/sudoku/demask/oracles,results/sudoku/demask/oracle_twin \
        --heads results/sudoku/test_hard,results/sudoku/demask/test_hard --out .../head_vs_oracle.json

Both sweeps must have saved their per-input rows (--save-rows). An oracle setting `X-gt` is paired
with the head setting `X` whose declared parameters are the same, nothing else: the rule is one, only
the map it reads differs (the head's one pass, or the exact map's many). The oracle sweep may cover
a prefix of the head sweep's inputs (the oracles are the costlier: 32 chains against 171; 200
puzzles against 1,000); the inputs are matched by index and checked to be the same (the sweeps read
the same input file, and each judge's figure of the natural input and the masked count agree row by
row), so a mismatch stops the run rather than pairing two different chains. --heads may name several
folders (Sudoku's MI rows and its DEMASK rows were swept apart): each head rule is looked for in all;
so may --oracles (a twin kept out of the oracles' fronts: Sudoku's validated DEMASK rule has its
confidence bar on, the oracles' TV front has it off).

For each pair and each per-input measure both sweeps hold (the infill's PLL under each judge,
recovery, passes): the head's mean, the oracle's, and head minus oracle with its 90 % paired
bootstrap interval (inputs resampled, 10,000 draws, the same draws for every figure). A negative
PLL (or solved) difference is quality the head loses; a negative passes difference is passes it
saves. Prints, last, a one-line JSON.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from benchmarks.fronts import paired, per_chain, saved_chains
from benchmarks.report import params_of, save
from benchmarks.tables.common import label, rows_of
from mi_viz.core.paths import portable
from mi_viz.core.sweep import inputs_file

# the per-input figures compared (those a sweep's rows hold; the others are skipped)
MEASURES = ("solved", "pll", "pll_antiberty", "pll_sapiens", "recovery", "passes")
# what must agree between the two sweeps' rows of one input for the pairing to stand
SAME_INPUT = ("masked", "pll_natural", "pll_antiberty_natural")
# what must agree between the two sweeps' summary rows: the input file each read
SAME_FILE = ("puzzles", "inputs")


Rows = list[tuple[Path, dict]]  # (a sweep's folder, one of its sweep.csv rows)


def pairs(oracle_rows: Rows, head_rows: Rows) -> list[tuple[Path, dict, Path, dict]]:
    """(oracle folder, oracle row, head folder, head row) for every oracle setting whose head twin a
    head sweep holds."""
    out = []
    for od, o in oracle_rows:
        if not o["sampler"].endswith("-gt"):
            continue
        rule = o["sampler"][: -len("-gt")]
        twin = [(d, h) for d, h in head_rows if h["sampler"] == rule and params_of(h) == params_of(o)]
        if twin:
            out.append((od, o, *twin[0]))
    return out


def check_same_inputs(oracle_row: dict, head_row: dict, oracle: list[dict], head: list[dict], where: str) -> None:
    """Stop unless the oracle's inputs are the head sweep's first ones, figure for figure."""
    for k in SAME_FILE:
        if k in oracle_row and k in head_row and inputs_file(oracle_row[k]) != inputs_file(head_row[k]):
            raise SystemExit(f"{where}: the sweeps read different inputs ({oracle_row[k]} against {head_row[k]})")
    if len(oracle) > len(head):
        raise SystemExit(f"{where}: the oracle sweep has {len(oracle)} inputs, the head sweep {len(head)}")
    for o, h in zip(oracle, head):
        for k in SAME_INPUT:
            if k in o and k in h and o[k] != h[k]:
                raise SystemExit(f"{where}: input {o['i']} differs between the sweeps ({k}: {o[k]} against {h[k]})")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--oracles", required=True, help="the oracle sweeps' folders, comma-separated")
    ap.add_argument("--heads", required=True, help="the head sweeps' folders (sweep.csv and rows/), comma-separated")
    ap.add_argument("--boot", type=int, default=10_000, help="bootstrap draws (inputs resampled)")
    ap.add_argument("--out", help="the results file (JSON)")
    a = ap.parse_args(argv)
    ods, hds = ([Path(d).resolve() for d in x.split(",")] for x in (a.oracles, a.heads))
    found = pairs(*([(d, r) for d in x for r in rows_of(d / "sweep.csv")] for x in (ods, hds)))
    if not found:
        raise SystemExit(f"no oracle setting in {a.oracles} has its head twin in {a.heads}")
    named = lambda ds: portable(ds[0]) if len(ds) == 1 else [portable(d) for d in ds]  # noqa: E731
    res: dict = {"oracles": named(ods), "heads": named(hds), "boot": a.boot, "pairs": {}}
    draws = None
    for od, o, hd, h in found:
        oc, hc = saved_chains(od, o), saved_chains(hd, h)
        check_same_inputs(o, h, oc, hc, f"{label(o)} / {label(h)}")
        hc = hc[: len(oc)]
        n = len(oc)
        if draws is None:
            draws = np.random.default_rng(0).integers(0, n, (a.boot, n))
            res["inputs"] = n
        elif draws.shape[1] != n:
            raise SystemExit(f"{label(o)} has {n} inputs, the first pair {draws.shape[1]}")
        cell: dict = {"oracle": label(o), "head": label(h)}
        for m in MEASURES:
            if m not in oc[0] or m not in hc[0]:
                continue
            ov, hv = per_chain(oc, m), per_chain(hc, m)
            cell[m] = {"head": round(float(np.nanmean(hv)), 4), "oracle": round(float(np.nanmean(ov)), 4),
                       **paired(hv - ov, draws, (0.90,))}  # fmt: skip
        res["pairs"][label(h)] = cell
    save(res, a.out, {"pairs": list(res["pairs"]), "inputs": res["inputs"]})


if __name__ == "__main__":
    main()
