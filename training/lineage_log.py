"""One training log for a head trained in several runs, each continuing the last (--init).

    python training/lineage_log.py runs/head_7k_mix_more3/sudoku_mi_head --out results/sudoku_mi_head_log.csv

Why: the shipped head is the fourth of a chain of runs (each a warm restart from the previous
run's kept checkpoint), and each run's log starts again at step 1. This follows the chain back
through the checkpoints' own record of their arguments (extra.args.init) and writes the runs'
logs one after another with `run` and `lineage_step`: the optimizer steps behind the weights
at that row (a run continues from the previous run's kept checkpoint, not its last step).

Every checkpoint of the chain is a committed candidate, checkpoints/candidates/sudoku_mi_head_NAME,
whose log is committed at results/sudoku/candidate_mi_head_NAME_log.csv (Makefile, candidate_7k):
that is where each run's log is read from. (The shipped head is a copy of the last one.)
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


PREFIX = "sudoku_mi_head_"


def lineage(last: Path) -> list[tuple[str, dict]]:
    """[(candidate name, checkpoint JSON)] from the first run to the one that wrote `last`."""
    chain = []
    path: Path | None = last
    while path is not None:
        if path.parent.name != "candidates" or not path.name.startswith(PREFIX):
            raise SystemExit(
                f"{path}: not a committed candidate (checkpoints/candidates/{PREFIX}NAME), so its log is not committed"
            )
        meta = json.loads(path.with_name(path.name + ".json").read_text())
        chain.append((path.name.removeprefix(PREFIX), meta))
        init = meta["extra"]["args"].get("init")
        path = ROOT / init if init else None  # None: the first run
    return chain[::-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("head", help="a head checkpoint (path without .json / .safetensors)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rows, offset = [], 0
    for name, meta in lineage(ROOT / a.head if not Path(a.head).is_absolute() else Path(a.head)):
        log = ROOT / "results" / "sudoku" / f"candidate_mi_head_{name}_log.csv"
        for r in csv.DictReader(log.open()):
            rows.append({"run": name, "lineage_step": offset + int(r["step"]), **r})
        offset += int(meta["step"])  # the next run starts from this run's kept checkpoint
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"{a.out}: {len(rows)} rows; the weights are {offset} optimizer steps deep", file=sys.stderr)


if __name__ == "__main__":
    main()
