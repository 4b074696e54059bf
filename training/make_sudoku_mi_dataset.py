"""Build the MI dataset: Sudoku states with their ground-truth pairwise MI maps.

    python training/make_sudoku_mi_dataset.py --mdm checkpoints/sudoku_mdm --out runs/mi_data
    torchrun --nproc_per_node 2 training/make_sudoku_mi_dataset.py ...      # ranks split the jobs
    python training/make_sudoku_mi_dataset.py ... --rank 1 --world 4        # or independent workers
    python training/make_sudoku_mi_dataset.py --merge runs/mi_data          # one file from all shards
    python training/make_sudoku_mi_dataset.py --pack runs/mi_data data/sudoku/mi_states.safetensors  # compact

States (see docs/mi.md): (a) every stage of decoding trajectories of the trained
MDM on TRAINING puzzles (the test sets are never touched): for each puzzle we
decode it (sequential, or EB with gamma 0.5 for every other puzzle, so that
parallel decodes' states are covered too) and keep `--states-per-puzzle` states
at random steps; (b) randomly masked training solutions, mask ratio ~ U(0.2, 0.8)
(--mask-range).
Each state gets ground_truth_mi (pruning eps, default 1e-3).

Jobs are numbered; job j belongs to worker j % world; jobs are cut into shards
of --shard-size and a shard file is written atomically when complete, so a
re-run skips finished shards (resumable) and shards from any number of workers
merge into one data set.

--pack writes a folder's states in a compact file (mi_viz.core.mi_data: tokens plus the
upper triangle of the masked pairs only), which load_mi_dataset reads back bit for bit.
"""

from __future__ import annotations

import argparse
import csv
import logging

import torch

from mi_viz.cli import add_shard_arguments, pack_or_merge, shard_run
from mi_viz.core.mi import MIRun, ground_truth_mi
from mi_viz.core.mi_data import run_shards
from mi_viz.core.samplers import SamplerConfig, decode
from mi_viz.domains.sudoku import board as S
from mi_viz.domains.sudoku.mdm import MASK_TOKEN, boards_to_tokens, load_mdm


def states_for_jobs(model, jobs, puzzles, solutions, states_per_puzzle, seed, device, mask_range=(0.2, 0.8)):
    """Token states (N, 81) for a list of jobs: ('p', i) puzzle i, ('r', i) random mask."""
    out = []
    pz = [i for kind, i in jobs if kind == "p"]
    for cfg_name, sel in (("sequential", [i for i in pz if i % 2 == 0]), ("eb", [i for i in pz if i % 2 == 1])):
        if not sel:
            continue
        cfg = SamplerConfig(cfg_name, gamma=0.5 if cfg_name == "eb" else None)
        x = boards_to_tokens([puzzles[i] for i in sel]).to(device)
        res = decode(model, x, cfg, keep_states=True)
        traj = torch.stack(res.states, 1)  # (b, T, 81); finished puzzles repeat their last state
        for r, i in enumerate(sel):
            g = torch.Generator().manual_seed(seed * 7919 + i)
            T = len(res.batch_sizes[r])  # this puzzle's own number of steps
            steps = torch.randperm(T, generator=g)[:states_per_puzzle]
            out.extend(traj[r, int(t)] for t in steps)
    for kind, i in jobs:
        if kind != "r":
            continue
        g = torch.Generator().manual_seed(seed * 104729 + i)
        sol = boards_to_tokens([solutions[i % len(solutions)]])[0]
        ratio = mask_range[0] + (mask_range[1] - mask_range[0]) * torch.rand(1, generator=g).item()
        m = torch.rand(81, generator=g) < ratio
        m[torch.randint(0, 81, (1,), generator=g)] = True
        out.append(torch.where(m, torch.full_like(sol, MASK_TOKEN), sol))
    return torch.stack(out) if out else torch.zeros(0, 81, dtype=torch.long)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mdm", default="checkpoints/sudoku_mdm")
    ap.add_argument("--puzzles", default="data/sudoku/generated/train_puzzles.csv")
    ap.add_argument("--n-val-holdout", type=int, default=200, help="last rows: MDM validation, never used here")
    ap.add_argument("--n-puzzles", type=int, default=2_000)
    ap.add_argument("--states-per-puzzle", type=int, default=6)
    ap.add_argument("--n-random", type=int, default=4_000)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument(
        "--mask-range",
        default="0.2,0.8",
        help="random maskings: ratio ~ U(LO, HI); 0.95 reaches the rules regime (docs/mi.md)",
    )
    add_shard_arguments(ap, out="runs/mi_data", shard_size=256, chunk=2048)
    a = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")  # the library's notes (pack, merge)
    mask_range = tuple(float(v) for v in a.mask_range.split(","))
    if len(mask_range) != 2 or not 0 <= mask_range[0] <= mask_range[1] <= 1:
        raise SystemExit(f"--mask-range wants LO,HI with 0 <= LO <= HI <= 1, got {a.mask_range!r}")
    if pack_or_merge(a, MASK_TOKEN):
        return
    model, _ = load_mdm(a.mdm, device=a.device)
    rows = list(csv.DictReader(open(a.puzzles)))
    rows = rows[: max(0, len(rows) - a.n_val_holdout)]
    puzzles = [S.parse_board(r["puzzle"]) for r in rows[: a.n_puzzles]]  # decoded
    solutions = [S.parse_board(r["solution"]) for r in rows]  # masked at random (every non-held-out row)
    # interleave the two kinds so that a time-boxed run still gets both
    pj, rj = [("p", i) for i in range(len(puzzles))], [("r", i) for i in range(a.n_random)]
    jobs = sorted(pj + rj, key=lambda j: j[1] / max(1, len(pj)) if j[0] == "p" else j[1] / max(1, len(rj)))

    def make_shard(shard_jobs) -> dict:
        x = states_for_jobs(model, shard_jobs, puzzles, solutions, a.states_per_puzzle, a.seed, a.device, mask_range)
        x = x[(x == MASK_TOKEN).sum(1) >= 2]  # a state needs two masked cells to have a pair
        mis, tvs, asy, ent, drop, passes = [], [], [], [], [], []
        for s in range(0, len(x), 64):
            gt = ground_truth_mi(model, x[s : s + 64].to(a.device), eps=a.eps, run=MIRun(chunk=a.chunk))
            mis.append(gt.mi.half().cpu())
            tvs.append(gt.tv.half().cpu())  # type: ignore[union-attr]  # DEMASK's D, the same passes
            asy.append(gt.asymmetry.half().cpu())
            ent.append(gt.entropy.cpu())
            drop.append(gt.dropped_mass.cpu())
            passes.append(gt.passes.cpu())
        return {
            "tokens": x.to(torch.uint8).cpu(),
            "mi": torch.cat(mis),
            "tv": torch.cat(tvs),
            "asymmetry": torch.cat(asy),
            "entropy": torch.cat(ent),
            "dropped_mass": torch.cat(drop),
            "passes": torch.cat(passes),
        }

    run_shards(shard_run(a), jobs, make_shard)


if __name__ == "__main__":
    main()
