"""The antibody MI data set: AntiBERTy's infill states with their ground-truth pairwise MI maps.

    python training/make_antibody_mi_dataset.py --out runs/antibody_mi_data --max-minutes 60
    python training/make_antibody_mi_dataset.py ... --rank 1 --world 2          # a second worker
    python training/make_antibody_mi_dataset.py --pack runs/antibody_mi_data runs/antibody_mi.safetensors

States, from training chains only (OLGA chains of seeds no validation, test or reference set
uses), heavy and light alternately:
- "c": the chain with its CDR3 masked;
- "a": the chain with all three CDRs masked;
- "d": an infill decode's intermediate state (CDR3 or all CDRs, sequential or EB gamma 1 at
  temperature 1), at a random step with >= 2 positions still masked.
Ground truth (core.mi.ground_truth_mi) with pruning eps 1e-2 by default (a CDR3 state: about 170
conditioned passes, 15-30 s on one core). Shards are resumable, as for the other MI data sets.
"""

from __future__ import annotations

import argparse
import logging
import random

import torch

from mi_viz.cli import add_shard_arguments, pack_or_merge, shard_run
from mi_viz.core.mi_data import run_shards, truth_shard
from mi_viz.core.samplers import SamplerConfig, decode
from mi_viz.domains.antibody.numbering import number
from mi_viz.domains.antibody.recombination import generate
from mi_viz.domains.protein.alphabet import MASK, PAD, PROTEIN_ALPHABET, encode
from mi_viz.lm.masked_lm import load_masked_lm

CDRS = ("cdr1", "cdr2", "cdr3")


def masked(seq: str, regions: tuple[str, ...]) -> torch.Tensor:
    n = number(seq)
    x = encode(seq)
    for r in regions:
        s, e = n.span(r)
        x[s:e] = MASK
    return x


def states_for_job(model, job, chains: dict[str, list[str]], seed: int, device) -> list[torch.Tensor]:
    kind, i = job
    g = random.Random(f"{seed}:{kind}:{i}")
    types = [t for t in ("heavy", "light") if chains[t]]  # heavy and light alternately, or the one asked for
    pool = chains[types[i % len(types)]]
    seq = pool[g.randrange(len(pool))]
    regions = ("cdr3",) if kind == "c" or (kind == "d" and g.random() < 0.5) else CDRS
    x = masked(seq, regions)
    if kind != "d":
        return [x]
    cfg = (
        SamplerConfig("sequential", temperature=1.0, seed=g.randrange(2**31))
        if g.random() < 0.5
        else SamplerConfig("eb", gamma=1.0, temperature=1.0, seed=g.randrange(2**31))
    )
    kept = [s[0] for s in decode(model, x[None].to(device), cfg, keep_states=True).states or []]
    kept = [s for s in kept if int((s == MASK).sum()) >= 2]
    return [kept[g.randrange(len(kept))].cpu()] if kept else [x]


def job_list(n: int) -> list[tuple[str, int]]:
    return [(k, i) for i in range(n) for k in ("c", "d", "a")]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backbone", default="antiberty", help="antiberty, sapiens-vh / -vl, or a masked LM folder")
    ap.add_argument(
        "--chains", choices=("both", "heavy", "light"), default="both", help="heavy and light alternately, or one type"
    )
    ap.add_argument("--n", type=int, default=2000, help="jobs of each kind")
    ap.add_argument("--max-length", type=int, default=136)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    add_shard_arguments(ap, out="runs/antibody_mi_data", shard_size=6, chunk=256)
    ap.set_defaults(eps=1e-2)
    a = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if pack_or_merge(a, MASK):
        return
    model = load_masked_lm(a.backbone, PROTEIN_ALPHABET, a.device).eval()
    chains = {
        "heavy": [c.sequence for c in generate("heavy", 2000, 10_000)] if a.chains != "light" else [],
        "light": [c.sequence for c in generate("kappa", 1000, 10_100) + generate("lambda", 1000, 10_200)]
        if a.chains != "heavy"
        else [],
    }

    def make_shard(shard_jobs) -> dict:
        with torch.inference_mode():
            states = [s for j in shard_jobs for s in states_for_job(model, j, chains, a.seed, a.device)]
        states = [s for s in states if int((s == MASK).sum()) >= 2 and len(s) <= a.max_length]
        return truth_shard(model, states, a.max_length, PAD, a.eps, a.chunk, a.device)

    run_shards(shard_run(a), job_list(a.n), make_shard, lambda d: f", {int(d['passes'].sum())} passes")


if __name__ == "__main__":
    main()
