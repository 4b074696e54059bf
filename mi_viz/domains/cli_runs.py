"""The command line's flags as the driver's typed runs (BenchRun, SweepRun, ReportRun): the one place
past mi_viz/cli.py and the domains' cli.py that reads an argparse Namespace, so the core takes typed
objects only."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..core.driver import BenchRun, ReportRun, SweepRun


def bench_run(a: argparse.Namespace) -> BenchRun:
    """The parsed flags bench reads, typed (the driver never sees a Namespace)."""
    return BenchRun(Path(a.out), a.batch_size)


def sweep_run(a: argparse.Namespace) -> SweepRun:
    return SweepRun(Path(a.out_dir), a.jobs, a.resume, a.save_rows, a.title or "", a.keep_others, a.batch_size)


def report_run(a: argparse.Namespace) -> ReportRun:
    pairs = getattr(a, "pairs", None)
    return ReportRun(a.states, a.eps, a.seed, Path(a.out), Path(pairs) if pairs else None, getattr(a, "target", "mi"))


def run_of(command: str, a: argparse.Namespace) -> BenchRun | SweepRun:
    """bench / sweep: the typed flags of that verb."""
    return bench_run(a) if command == "bench" else sweep_run(a)
