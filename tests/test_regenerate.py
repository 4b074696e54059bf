"""Committed rows regenerate: the first 16 items of one committed sweep per domain, decoded again
through the CLI at the committed setting, match their rows item by item (every column both have:
the solved flag or the written sequence, the passes, the largest batch). A refactor of decode,
bench, the samplers or a backbone that changed one decode fails here, not in a re-run of hours.

Family sweeps commit summaries only (results/family/*/sweep.csv, no per-member rows): no family case."""

from __future__ import annotations

import csv
import gzip
import importlib.util
import os
from pathlib import Path

import pytest

from mi_viz import cli

ROOT = Path(__file__).resolve().parents[1]
N = 16
# domain -> (the committed rows, the bench flags that decode the same items with the same setting)
CASES = {
    "sudoku": (
        "results/sudoku/test_hard/rows/mi_gamma=0.04_lam=10.csv.gz",
        ["--puzzles", "data/sudoku/test_hard.txt", "--limit", str(N),
         "--sampler", "mi", "--gamma", "0.04", "--lam", "10"],
    ),
    "protein": (
        "results/protein/table2/rows/mi_gamma=16_lam=1.csv.gz",
        ["--n", str(N), "--lengths", "50-100", "--seed", "0", "--sampler", "mi", "--gamma", "16", "--lam", "1"],
    ),
    "antibody": (
        "results/antibody/sabdab_test/rows/mi_gamma=6_lam=1.csv.gz",
        ["--fasta", "data/antibody/natural/sabdab_test.tsv.gz", "--chains", "heavy", "--mask", "cdr3",
         "--limit", str(N), "--sampler", "mi", "--gamma", "6", "--lam", "1", "--no-judge"],
    ),
}  # fmt: skip
COMPARED = ("solved", "conflicts", "sequence", "infill", "recovery", "passes", "max_batch")


def _rows(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("domain", sorted(CASES))
def test_the_first_items_of_a_committed_sweep_decode_as_committed(domain, tmp_path, monkeypatch):
    if domain == "antibody" and importlib.util.find_spec("antiberty") is None and not os.environ.get("CI"):
        pytest.skip("AntiBERTy is installed by make setup (under CI it must be there: this test then fails)")
    committed, flags = CASES[domain]
    monkeypatch.chdir(ROOT)  # the flags name files as the Makefile does, from the repository root
    out = tmp_path / "rows.csv"
    assert cli.main(["bench", domain, *flags, "--out", str(out)]) == 0
    got, want = _rows(out), _rows(ROOT / committed)[:N]
    assert len(got) == N
    shared = [c for c in COMPARED if c in got[0] and c in want[0]]
    assert "passes" in shared and len(shared) >= 3, shared
    for k, (g, w) in enumerate(zip(got, want)):
        assert {c: g[c] for c in shared} == {c: w[c] for c in shared}, (domain, k)
