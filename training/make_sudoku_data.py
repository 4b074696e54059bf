"""Generate the Sudoku data: training grids, training puzzles, and held-out test sets.

    python training/make_sudoku_data.py            # the full, documented data set
    python training/make_sudoku_data.py --n-train 1000 --n-hard 20 --out /tmp/d   # tiny

Outputs (under --out, default data/sudoku):
  generated/train_grids.txt     N random complete grids (the MDM's training data)
  generated/train_puzzles.csv   unique-solution puzzles made from *other* random
                                grids, with solutions (decode states for the MI set)
  generated/val_puzzles.txt     its last 200 puzzles: MDM validation, sampler tuning
  test_hard.csv.gz              1,000 unique-solution puzzles NOT solvable by naked +
                                hidden singles ("hard"), with rating and solution
  test_medium.csv.gz            200 unique-solution puzzles solvable by singles alone
  test_hard.txt                 the hard puzzles alone, one per line (bench input)

Every item i of every split draws from its own seeded RNG (seed, split, i), so the
output does not depend on the number of worker processes. Test grids come from
a different RNG stream than training grids, and the script checks that no test
solution equals a training grid or a training-puzzle solution (exact match; the
chance that two random grids are even equivalent under the Sudoku symmetries is
about 1e-5 per pair of sets of this size, see README).
"""

from __future__ import annotations

import argparse
import gzip
import multiprocessing as mp
import os
import random
import time
from pathlib import Path

from mi_viz.domains.sudoku import board as S
from mi_viz.domains.sudoku import rating, solver

SPLIT_IDS = {"train_grid": 1, "train_puzzle": 2, "test": 3}


def _rng(seed: int, split: str, i: int) -> random.Random:
    return random.Random(seed * 1_000_003 + SPLIT_IDS[split] * 100_000_007 + i)


def _grid(args):
    seed, i = args
    return S.board_to_string(solver.random_grid(_rng(seed, "train_grid", i)))


def _puzzle(args):
    seed, split, i = args
    rng = _rng(seed, split, i)
    sol = solver.random_grid(rng)
    puz = solver.make_puzzle(sol, rng)
    r = rating.rate(puz)
    return (
        S.board_to_string(puz),
        S.board_to_string(sol),
        r.givens,
        r.singles_solvable,
        r.singles_rounds,
        r.search_nodes,
    )


def _write_atomic(path: Path, text: str):
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _write_csv(path: Path, rows):
    """NAME.csv, or NAME.csv.gz gzip-compressed (the test sets: the same bytes every run, mtime 0)."""
    header = "puzzle,solution,givens,singles_solvable,singles_rounds,search_nodes\n"
    body = "".join(f"{p},{s},{g},{int(ss)},{sr},{sn}\n" for p, s, g, ss, sr, sn in rows)
    if path.suffix != ".gz":
        return _write_atomic(path, header + body)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_bytes(gzip.compress((header + body).encode(), compresslevel=9, mtime=0))
    os.replace(tmp, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="data/sudoku")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-train", type=int, default=100_000)
    ap.add_argument("--n-train-puzzles", type=int, default=3_000)
    ap.add_argument("--n-hard", type=int, default=1_000)
    ap.add_argument("--n-medium", type=int, default=200)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args(argv)
    out = Path(a.out)
    (out / "generated").mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    with mp.Pool(a.workers) as pool:
        grids = pool.map(_grid, [(a.seed, i) for i in range(a.n_train)], chunksize=256)
        _write_atomic(out / "generated" / "train_grids.txt", "\n".join(grids) + "\n")
        print(f"{len(grids)} training grids ({time.time() - t0:.0f}s)", flush=True)

        tp = pool.map(_puzzle, [(a.seed, "train_puzzle", i) for i in range(a.n_train_puzzles)], chunksize=16)
        _write_csv(out / "generated" / "train_puzzles.csv", tp)
        # the last 200 training puzzles: the MDM's validation set and the set on which
        # sampler defaults are chosen (never the test sets)
        _write_atomic(out / "generated" / "val_puzzles.txt", "".join(r[0] + "\n" for r in tp[-200:]))
        print(f"{len(tp)} training puzzles ({time.time() - t0:.0f}s)", flush=True)

        train_solutions = set(grids) | {row[1] for row in tp}
        hard, medium, i = [], [], 0
        batch = 4 * a.workers * 8
        while len(hard) < a.n_hard or len(medium) < a.n_medium:
            rows = pool.map(_puzzle, [(a.seed, "test", j) for j in range(i, i + batch)], chunksize=8)
            i += batch
            for row in rows:
                if row[1] in train_solutions:
                    raise SystemExit(f"test solution collides with training data: {row[1]}")
                if row[3]:
                    if len(medium) < a.n_medium:
                        medium.append(row)
                elif len(hard) < a.n_hard:
                    hard.append(row)
    _write_csv(out / "test_hard.csv.gz", hard)
    _write_csv(out / "test_medium.csv.gz", medium)
    _write_atomic(out / "test_hard.txt", "".join(r[0] + "\n" for r in hard))
    print(
        f"{len(hard)} hard + {len(medium)} medium test puzzles from {i} generated "
        f"({time.time() - t0:.0f}s); disjoint from {len(train_solutions)} training solutions"
    )


if __name__ == "__main__":
    main()
