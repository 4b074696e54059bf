"""The protein MI data set: protein states with their ground-truth pairwise MI maps.

    python training/make_protein_mi_dataset.py --out runs/protein_mi_data --max-minutes 120
    python training/make_protein_mi_dataset.py ... --rank 1 --world 2          # a second worker
    python training/make_protein_mi_dataset.py --pack runs/protein_mi_data data/protein/mi_states.safetensors

States, from the training split only (never a validation or test protein):
- "u": unconditional decodes of the backbone (all-masked, length 50-100), sequential or
  EB (gamma 2, every other job), values sampled at temperature 1: `--states-per-decode`
  states at random steps (all stages of a decode);
- "p": prompted decodes: a training protein (length 50-100) with a random 30-70 % of its
  residues kept as the prompt, decoded the same way, states at random steps;
- "r": randomly masked training proteins of length 50-100, mask ratio ~ U(0.2, 0.95).
Each state gets ground_truth_mi (pruning eps, default 1e-3; the streamed path keeps memory
bounded). States are right-padded with PAD to --max-length (never masked, so never in a
pair). Jobs are numbered and dealt to workers (job j to worker j % world), cut into shards
written atomically: a re-run skips finished shards (resumable), and any workers' shards
merge into one set.
"""

from __future__ import annotations

import argparse
import logging
import random

import torch

from mi_viz.cli import add_shard_arguments, pack_or_merge, shard_run
from mi_viz.core.mi_data import run_shards, truth_shard
from mi_viz.core.samplers import SamplerConfig, decode
from mi_viz.domains import get_domain
from mi_viz.domains.protein.alphabet import MASK, PAD, encode
from mi_viz.domains.protein.fasta import read_fasta

PROTEIN = get_domain("protein")


def job_list(n_uncond: int, n_prompted: int, n_random: int) -> list[tuple[str, int]]:
    """Interleaved so that a time-boxed run still gets every kind."""
    kinds = [("u", n_uncond), ("p", n_prompted), ("r", n_random)]
    jobs = [(k, i) for k, n in kinds for i in range(n)]
    return sorted(jobs, key=lambda j: j[1] / max(1, dict(kinds)[j[0]]))


def states_for_job(model, job, naturals: list[str], states_per_decode: int, seed: int, device) -> list[torch.Tensor]:
    kind, i = job
    g = random.Random(f"{seed}:{kind}:{i}")
    if kind == "r":
        s = encode(naturals[g.randrange(len(naturals))])
        ratio = g.uniform(0.2, 0.95)
        m = torch.tensor([g.random() < ratio for _ in range(len(s))])
        m[g.randrange(len(s))] = True
        return [torch.where(m, torch.full_like(s, MASK), s)]
    if kind == "u":
        x = torch.full((1, g.randint(50, 100)), MASK)
    else:
        s = encode(naturals[g.randrange(len(naturals))])
        keep = g.uniform(0.3, 0.7)
        x = torch.where(torch.tensor([g.random() < keep for _ in range(len(s))]), s, torch.full_like(s, MASK))[None]
    cfg = (
        SamplerConfig("sequential", temperature=1.0, seed=g.randrange(2**31))
        if i % 2 == 0
        else SamplerConfig("eb", gamma=2.0, temperature=1.0, seed=g.randrange(2**31))
    )
    kept = decode(model, x.to(device), cfg, keep_states=True).states or []
    steps = g.sample(range(len(kept)), min(states_per_decode, len(kept)))
    return [kept[t][0] for t in sorted(steps)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backbone", default=None, help="protein_mdm (default) or a checkpoint path")
    ap.add_argument("--train", default="runs/protein_data/train.fasta", help="training split (make_protein_data.py)")
    ap.add_argument("--n-uncond", type=int, default=600)
    ap.add_argument("--n-prompted", type=int, default=600)
    ap.add_argument("--n-random", type=int, default=1200)
    ap.add_argument("--states-per-decode", type=int, default=3)
    ap.add_argument("--max-length", type=int, default=100)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    add_shard_arguments(ap, out="runs/protein_mi_data", shard_size=32, chunk=512)
    a = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")  # the library's notes (pack, merge)
    if pack_or_merge(a, MASK):
        return
    model = PROTEIN.load_model(a.backbone, a.device).eval()
    naturals = [s for _, s in read_fasta(a.train) if 50 <= len(s) <= a.max_length]

    def make_shard(shard_jobs) -> dict:
        states = [
            s for j in shard_jobs for s in states_for_job(model, j, naturals, a.states_per_decode, a.seed, a.device)
        ]
        states = [s for s in states if int((s == MASK).sum()) >= 2]
        return truth_shard(model, states, a.max_length, PAD, a.eps, a.chunk, a.device)

    jobs = job_list(a.n_uncond, a.n_prompted, a.n_random)
    run_shards(shard_run(a), jobs, make_shard, lambda d: f", {int(d['passes'].sum())} passes")


if __name__ == "__main__":
    main()
