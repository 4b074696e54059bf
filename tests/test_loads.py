"""Each backbone is built once per process, in every shipped domain: a process that runs `bench`
and then `sweep --jobs 2` builds it once (a judge that reads it shares it), and each of the sweep's
two workers builds its own once. Counted by the log core.models.build_model appends to
($MI_VIZ_LOAD_LOG: a line "pid, domain, spec" per build), across the spawned workers too."""

from __future__ import annotations

import collections
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FAMILY_MSA = ROOT.parent / "shared" / "data" / "protein_families" / "PF00595" / "PF00595.align.80.fasta"
INPUTS = {
    "sudoku": ["--puzzles", "data/sudoku/test_hard.txt", "--limit", "2"],
    "protein": ["--n", "2", "--lengths", "50-52"],
    "family": ["--backbone", "PF00595", "--msa", str(FAMILY_MSA), "--n", "2"],
    "antibody": ["--fasta", "data/antibody/natural/sabdab_test.tsv.gz", "--chains", "heavy", "--mask", "cdr3",
                 "--limit", "2", "--no-judge"],
}  # fmt: skip
SCRIPT = """
import sys
from mi_viz.cli import main
if __name__ == "__main__":  # the sweep's workers are spawned: they import this file, never run it
    domain, out, flags = sys.argv[1], sys.argv[2], sys.argv[3:]
    mi = ["--sampler", "mi", "--gamma", "1", "--lam", "1"]
    assert main(["bench", domain, *flags, *mi, "--out", out + "/b.csv"]) == 0
    grid = "sequential; topk:k=2; mi:gamma=1:lam=1"
    assert main(["sweep", domain, *flags, "--grid", grid, "--jobs", "2", "--out-dir", out + "/sw"]) == 0
"""


@pytest.mark.parametrize("domain", sorted(INPUTS))
def test_bench_then_a_two_worker_sweep_build_the_backbone_once_a_process(domain, tmp_path):
    if domain == "antibody" and importlib.util.find_spec("antiberty") is None and not os.environ.get("CI"):
        pytest.skip("AntiBERTy is installed by make setup (under CI it must be there: this test then fails)")
    if domain == "family" and not FAMILY_MSA.exists() and not os.environ.get("CI"):
        pytest.skip("the family's alignment is in ../shared/data (under CI it must be there: this test then fails)")
    log = tmp_path / "builds.log"
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "MI_VIZ_LOAD_LOG": str(log), "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, str(script), domain, str(tmp_path), *INPUTS[domain]], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=600)  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    builds = collections.Counter(tuple(line.split("\t")) for line in log.read_text().splitlines())
    assert builds and max(builds.values()) == 1, builds  # no process built one backbone twice
    pids = {pid for pid, _, _ in builds}
    assert len(pids) == 3, builds  # this process (bench, then the sweep's head check) and the two workers
    assert {d for _, d, _ in builds} == {domain}
