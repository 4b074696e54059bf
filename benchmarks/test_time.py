"""What the test suite costs: `python -m pytest -q` timed, wall and CPU, with its slowest tests.

    python -m benchmarks.test_time [--out results/testing/pytest_time.json] [--workers N]

Runs the suite in a child process (as `make test` does after its lint), with pytest's
--durations, and writes the wall seconds, the CPU seconds of the child and everything it started
(user + system: servers, Chromium, the CLI subprocesses), the pass/skip/fail counts and the 30
slowest test phases. Run it on an idle machine: the figure is the README's "minutes on an idle
2-core machine". --workers N runs pytest-xdist's `-n N --dist loadfile` instead (a file's tests
on one worker, so a module's server or browser is started once), where pytest-xdist is installed.

Why CPU beside wall: a wall time close to CPU / cores says the suite is bound by arithmetic, and
more workers cannot shorten it; a wall far above it says it waits (servers, sleeps).
The last stdout line is the one-line JSON.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

from mi_viz.core import strict_json

ROOT = Path(__file__).resolve().parents[1]
DURATION = re.compile(r"^\s*([\d.]+)s (call|setup|teardown)\s+(\S+)")
COUNTS = re.compile(r"(\d+) (passed|failed|skipped|errors?|deselected)")


def parse(log: str) -> dict:
    """The counts and the slowest phases out of pytest's -q --durations output."""
    tail = [line for line in log.splitlines() if re.search(r"\d+ (passed|failed|error).* in [\d.]+s", line)]
    found = COUNTS.findall(tail[-1]) if tail else []
    counts = {k.rstrip("s") if k.startswith("error") else k: int(n) for n, k in found}
    slowest = [
        {"seconds": float(m.group(1)), "phase": m.group(2), "test": m.group(3)}
        for m in map(DURATION.match, log.splitlines())
        if m
    ]
    return {"counts": counts, "slowest": slowest[:30]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="results/testing/pytest_time.json")
    ap.add_argument("--workers", type=int, default=0, help="pytest-xdist workers (0: none, as make test runs)")
    a = ap.parse_args(argv)
    cmd = [sys.executable, "-m", "pytest", "-q", "--durations=30", "-p", "no:cacheprovider"]
    if a.workers:
        cmd += ["-n", str(a.workers), "--dist", "loadfile"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(run.stdout[-3000:], run.stderr[-2000:], sep="\n")
    got = {
        "command": " ".join(["python", *cmd[1:]]),
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "cores": os.cpu_count(),
        "returncode": run.returncode,
        **parse(run.stdout),
    }
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(strict_json.dumps(got, indent=1) + "\n")
    print(f"pytest: {wall / 60:.1f} min wall, {cpu / 60:.1f} min CPU on {os.cpu_count()} cores -> {out}")
    print(strict_json.dumps({k: v for k, v in got.items() if k != "slowest"}))
    return run.returncode


if __name__ == "__main__":
    raise SystemExit(main())
