"""Several processes loading the shipped Sudoku models on a cold cache at one signal (the README's
`models.load_models`), round after round: how many of them failed. Each round gets a fresh, empty
MI_VIZ_CACHE, so every process decompresses the same .xz weights and writes the same cache file at
once; with a fixed NAME.tmp one writer renamed another's file away mid-write (FileNotFoundError).

    python -m benchmarks.cache_race [--rounds 12] [--processes 3]

Prints the failures, last a one-line JSON.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import tempfile
import traceback

import torch

from mi_viz.core import strict_json
from mi_viz.core.models import load_models
from mi_viz.domains import get_domain


def _load(barrier, cache: str, out) -> None:
    os.environ["MI_VIZ_CACHE"] = cache  # read where the cache is first asked for, in load_models
    try:
        torch.set_num_threads(1)
        barrier.wait(timeout=120)  # every process imported: now all read the cold cache at once
        load_models(get_domain("sudoku"), need_head=True)
        out.put("")
    except Exception:  # noqa: BLE001 - the failure is what is measured
        out.put(traceback.format_exc(limit=3))


def race(rounds: int, processes: int) -> list[str]:
    ctx = mp.get_context("spawn")
    failures = []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as cache:
            barrier, out = ctx.Barrier(processes), ctx.Queue()
            ps = [ctx.Process(target=_load, args=(barrier, cache, out)) for _ in range(processes)]
            for p in ps:
                p.start()
            got = [out.get(timeout=300) for _ in ps]
            for p in ps:
                p.join()
            failures += [g for g in got if g]
    return failures


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--processes", type=int, default=3)
    a = ap.parse_args(argv)
    failures = race(a.rounds, a.processes)
    for f in failures:
        print(f)
    print(strict_json.dumps({"rounds": a.rounds, "processes": a.processes, "failures": len(failures)}))


if __name__ == "__main__":
    main()
