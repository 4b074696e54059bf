"""A family's MI data set: states of its alignment's width with their ground-truth MI maps.

    python training/make_family_mi_dataset.py --backbone checkpoints/family_PF00595 --msa FILE \
        --out runs/family_mi/PF00595 --states 1200
    python training/make_family_mi_dataset.py --pack runs/family_mi/PF00595 runs/family_mi/PF00595.safetensors

States, from the TRAINING rows only (the held-out rows are recomputed from the checkpoint's
split and never touched):
- "r": a training row masked at a ratio ~ U(0.05, 0.95) (the contacts report masks 10 %;
  decoding sees every ratio);
- "u": an unconditional decode (all masked; sequential, or EB gamma 1 every other job;
  values sampled at temperature 1) at a random step.
Each state gets ground_truth_mi (eps 1e-3). Jobs are cut into shards written atomically:
a re-run skips finished shards (resumable); a tqdm bar shows the progress.
"""

from __future__ import annotations

import argparse
import logging
import random

import torch

from mi_viz.cli import add_shard_arguments, pack_or_merge, shard_run
from mi_viz.core.mi import ground_truth_mi
from mi_viz.core.mi_data import run_shards
from mi_viz.core.samplers import SamplerConfig, decode
from mi_viz.domains.family import family_domain
from mi_viz.domains.family.alignment import read_alignment
from mi_viz.domains.family.backbone import to_tokens
from mi_viz.domains.family.train import data_for
from mi_viz.domains.protein.alphabet import MASK


def state_for_job(model, job: int, train_rows, width: int, seed: int) -> torch.Tensor:
    g = random.Random(f"{seed}:{job}")
    if job % 2 == 0:  # a masked training row
        x = to_tokens(train_rows[g.randrange(len(train_rows))])
        ratio = g.uniform(0.05, 0.95)
        m = torch.tensor([g.random() < ratio for _ in range(width)])
        m[g.sample(range(width), 2)] = True
        return torch.where(m, torch.full_like(x, MASK), x)
    cfg = (
        SamplerConfig("sequential", temperature=1.0, seed=g.randrange(2**31))
        if job % 4 == 1
        else SamplerConfig("eb", gamma=1.0, temperature=1.0, seed=g.randrange(2**31))
    )
    res = decode(model, torch.full((1, width), MASK), cfg, keep_states=True)
    states = [s[0] for s in res.states or [] if int((s[0] == MASK).sum()) >= 2]
    return states[g.randrange(len(states))]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backbone", help="family checkpoint (name or path)")
    ap.add_argument("--msa", help="the alignment the backbone was trained on")
    ap.add_argument("--states", type=int, default=1200)
    add_shard_arguments(ap, out="runs/family_mi/data", shard_size=64)
    a = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")  # the library's notes (pack, merge)
    if pack_or_merge(a, MASK):
        return
    dom = family_domain(a.backbone)
    model = dom.load_model()
    data = data_for(dom.meta, read_alignment(a.msa))

    def make_shard(jobs) -> dict:
        with torch.inference_mode():
            x = torch.stack([state_for_job(model, j, data.train_rows, dom.width, a.seed) for j in jobs])
            gt = ground_truth_mi(model, x, eps=a.eps)
        return {
            "tokens": x.to(torch.uint8),
            "mi": gt.mi.half(),
            "entropy": gt.entropy,
            "dropped_mass": gt.dropped_mass,
            "passes": gt.passes,
        }

    run_shards(shard_run(a), list(range(a.states)), make_shard)


if __name__ == "__main__":
    main()
