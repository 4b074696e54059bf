"""What DEMASK's TV influence costs beside the MI in the ground truth (no new pass; the target was <= 5 %).

    python -m benchmarks.tv_overhead [--out results/tv_overhead.json]

The same states' exact maps with and without the TV reduction, timed side by side in interleaved
rounds (median of each; one thread): the Sudoku MDM on mid-decode states of held-out puzzles, and
AntiBERTy on a natural test chain's CDR3. Passes are the same by construction (checked); the ratio
is the whole ground truth's time with TV over without. Prints, last, a one-line JSON.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from benchmarks.report import save
from mi_viz.core.mi import ground_truth_mi
from mi_viz.core.samplers import SamplerConfig, decode
from mi_viz.domains import get_domain
from mi_viz.domains.antibody import DATA, chains_of
from mi_viz.domains.sudoku.board import read_puzzle_file


def interleaved(model, x, eps: float, rounds: int) -> dict:
    """Median seconds of the ground truth with and without TV, alternating runs (the same load on both)."""
    with_tv: list[float] = []
    without: list[float] = []
    a, b = ground_truth_mi(model, x, eps=eps), ground_truth_mi(model, x, eps=eps, tv=False)  # warm-up
    if not torch.equal(a.passes, b.passes) or not torch.equal(a.mi, b.mi):
        raise SystemExit("the TV changed the passes or the MI: it must not")
    for _ in range(rounds):
        for tv, into in ((True, with_tv), (False, without)):
            t0 = time.perf_counter()
            ground_truth_mi(model, x, eps=eps, tv=tv)
            into.append(time.perf_counter() - t0)
    m1, m0 = statistics.median(with_tv), statistics.median(without)
    return {"passes": int(a.passes.sum()), "seconds_with_tv": round(m1, 4), "seconds_mi_only": round(m0, 4),
            "ratio": round(m1 / m0, 4)}  # fmt: skip


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    res: dict = {"threads": 1, "rounds": a.rounds}
    sudoku = get_domain("sudoku")
    model = sudoku.load_model()
    puzzles = read_puzzle_file("data/sudoku/test_hard.txt").puzzles[:8]
    states = decode(model, sudoku.encode(puzzles), SamplerConfig("sequential"), keep_states=True, max_steps=12).states
    assert states
    res["sudoku"] = interleaved(model, states[-1], 1e-3, a.rounds)  # 8 boards 12 cells into their decodes
    ab = get_domain("antibody")
    lm = ab.load_model()
    x = ab.encode(chains_of(DATA / "natural" / "sabdab_test.tsv.gz", "cdr3", 1))
    res["antibody"] = interleaved(lm, x, 1e-2, max(1, a.rounds // 2))  # the first natural test chain's CDR3
    save(res, a.out, {k: res[k]["ratio"] for k in ("sudoku", "antibody")})


if __name__ == "__main__":
    main()
