"""Backbone throughput on this machine: boards per second by decode batch size and threads.

    python -m benchmarks.throughput [--boards 512] [--seconds 4]

Why: every sampler's wall time is (board-passes) / (boards per second), and on a 2-core
CPU the boards per second depend on the batch the decoder feeds the MDM and on how the
cores are used (one process with 2 threads, or 2 processes with 1 each). All settings are
measured side by side in this one run on the same mid-decode boards (hard test puzzles
with half of their blanks filled from the solution). The speed of these shared machines
drifts by 20-40 % within minutes, so the settings are measured in interleaved rounds
(every setting once per round) and each is reported as its median over the rounds, next
to its ratio to the reference (one process, 2 threads, batch 256) of the same round.
Prints one line per setting and, last, a one-line JSON.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import statistics
import time
from pathlib import Path

import torch

from mi_viz.core import strict_json
from mi_viz.core.cli_types import finite_float
from mi_viz.core.models import load_models
from mi_viz.domains import get_domain
from mi_viz.domains.sudoku.board import read_puzzle_file
from mi_viz.domains.sudoku.mdm import boards_to_tokens
from mi_viz.domains.sudoku.solver import solve

ROOT = Path(__file__).resolve().parents[1]


def mid_decode_boards(n: int) -> torch.Tensor:
    """(n, 81) tokens: hard test puzzles with every other blank filled in from the solution."""
    res = read_puzzle_file(ROOT / "data/sudoku/test_hard.txt")
    boards = []
    for p in res.puzzles[: min(n, 64)]:
        sol = solve(p).solution
        assert sol is not None  # the test puzzles have one
        blanks = [i for i, v in enumerate(p) if v == 0]
        b = list(p)
        for i in blanks[::2]:
            b[i] = sol[i]
        boards.append(b)
    x = boards_to_tokens(boards)
    return x.repeat((n + len(x) - 1) // len(x), 1)[:n]


def boards_per_second(batch: int, threads: int, n: int, seconds: float) -> float:
    torch.set_num_threads(threads)
    model, _ = load_models(get_domain("sudoku"))
    x = mid_decode_boards(n)
    with torch.inference_mode():
        model.forward_tokens(x[:batch])  # warm-up
        done, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            for s in range(0, n, batch):
                model.forward_tokens(x[s : s + batch])
                done += min(batch, n - s)
        return done / (time.perf_counter() - t0)


def _worker(args):
    return boards_per_second(*args)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--boards", type=int, default=512, help="boards per sweep over the batch")
    ap.add_argument("--seconds", type=finite_float, default=3.0, help="time per setting and round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batches", default="256,64,32")
    a = ap.parse_args(argv)
    batches = [int(b) for b in a.batches.split(",")]
    settings = [(b, threads, procs) for threads, procs in ((2, 1), (1, 2)) for b in batches]
    ref = (256, 2, 1)
    if ref not in settings:
        settings.insert(0, ref)
    rates = {st: [] for st in settings}  # boards/s per round
    ratios = {st: [] for st in settings}  # over the reference of the same round
    ctx = mp.get_context("spawn")  # a fresh process per setting: no thread pool carried over
    for rnd in range(a.rounds):
        for b, threads, procs in settings:
            with ctx.Pool(procs) as pool:
                total = sum(pool.map(_worker, [(b, threads, a.boards, a.seconds)] * procs))
            rates[(b, threads, procs)].append(total)
        for st in settings:
            ratios[st].append(rates[st][-1] / rates[ref][-1])
        print(
            f"round {rnd + 1}: " + ", ".join(f"{b}/{t}x{p} {rates[(b, t, p)][-1]:.0f}" for b, t, p in settings),
            flush=True,
        )
    results = []
    for b, threads, procs in settings:
        r = {
            "batch": b,
            "threads": threads,
            "processes": procs,
            "boards_per_s_median": round(statistics.median(rates[(b, threads, procs)]), 1),
            "over_reference_median": round(statistics.median(ratios[(b, threads, procs)]), 3),
            "over_reference_min": round(min(ratios[(b, threads, procs)]), 3),
        }
        results.append(r)
        print(
            f"batch {b:4d}  {procs} process(es) x {threads} thread(s): {r['boards_per_s_median']:7.1f} boards/s "
            f"(median of {a.rounds}), {r['over_reference_median']:.2f}x the reference "
            f"(lowest round {r['over_reference_min']:.2f}x)",
            flush=True,
        )
    best = max(results, key=lambda r: r["over_reference_median"])
    print(
        strict_json.dumps(
            {
                "reference": "batch 256, 1 process x 2 threads",
                "best": best,
                "rounds": a.rounds,
                "cpu_cores": mp.cpu_count(),
                "settings": results,
            }
        )
    )


if __name__ == "__main__":
    main()
