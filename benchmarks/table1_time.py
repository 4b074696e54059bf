"""Wall time of the whole Table 1 run on this machine, per sampler and in total.

    python -m benchmarks.table1_time [--jobs 2] [--limit N] [--out results/sudoku/table1_time.json]

Decodes every setting of mi_viz.domains.sudoku.TABLE1_GRID over the 1,000 hard test puzzles with
the same run_grid the sweep command uses (batched across puzzles, DECODE_BATCH puzzles per
pass, --jobs settings side by side). Prints one line per setting (seconds, passes, solve
rate: the solve rates must equal the committed sweep's, which the JSON records as a check)
and, last, a one-line JSON with the total wall time. Target (issue #4): about 15 minutes
or less on 2 CPU cores. mi-gt is not in it: an oracle, timed in its own sweep.
"""

from __future__ import annotations

import argparse
import csv
import os
import time
from pathlib import Path

import torch

from benchmarks.report import save
from mi_viz.core.bench import DECODE_BATCH, run_grid
from mi_viz.core.sweep import parse_grid
from mi_viz.domains import get_domain
from mi_viz.domains.sudoku import TABLE1_GRID
from mi_viz.domains.sudoku.board import read_puzzle_file

ROOT = Path(__file__).resolve().parents[1]


def setting(row: dict) -> tuple:
    """(sampler, gamma, lam, k) as text, the same for a fresh summary and a row read from CSV."""
    return (row["sampler"], *("" if row[k] in ("", None) else f"{float(row[k]):g}" for k in ("gamma", "lam", "k")))


def committed_rows(path: Path) -> dict:
    """setting -> solved_frac of the committed sweep (default scan only), to check we decoded the same."""
    if not path.exists():
        return {}
    with open(path, newline="") as fh:
        return {setting(r): float(r["solved_frac"]) for r in csv.DictReader(fh) if r.get("scan", "") in ("", "stop")}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--puzzles", default=str(ROOT / "data/sudoku/test_hard.txt"))
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=DECODE_BATCH)
    ap.add_argument("--out", default=None, help="also write the JSON here")
    a = ap.parse_args(argv)
    puzzles = read_puzzle_file(a.puzzles).puzzles[: a.limit]
    cfgs = parse_grid(TABLE1_GRID)
    ref = committed_rows(ROOT / "results/sudoku/test_hard/sweep.csv") if a.limit is None else {}
    t0 = time.perf_counter()
    rows = []
    for i, r in run_grid(get_domain("sudoku"), cfgs, puzzles, batch_size=a.batch_size, jobs=a.jobs):
        s = r.summary
        key = setting(s)
        s["matches_committed"] = (ref[key] == s["solved_frac"]) if key in ref else None
        rows.append(s)
        print(
            f"{cfgs[i].label():32s} {s['seconds']:8.1f} s  {s['avg_passes']:6.2f} passes  "
            f"{100 * s['solved_frac']:5.1f} % solved  (threads {s['threads']})",
            flush=True,
        )
    wall = time.perf_counter() - t0
    out = {
        "wall_seconds": round(wall, 1),
        "wall_minutes": round(wall / 60, 2),
        "jobs": a.jobs,
        "batch_size": a.batch_size,
        "n_puzzles": len(puzzles),
        "cpu_cores": os.cpu_count(),
        "torch_threads_main": torch.get_num_threads(),
        "sum_of_row_seconds": round(sum(r["seconds"] for r in rows), 1),
        "all_match_committed": all(r["matches_committed"] is not False for r in rows),
        "rows": rows,
    }
    save(out, a.out, {k: v for k, v in out.items() if k != "rows"})


if __name__ == "__main__":
    main()
