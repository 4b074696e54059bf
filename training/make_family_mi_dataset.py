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
import os
import random
import time
from pathlib import Path

import torch
from safetensors.torch import save_file
from tqdm import tqdm

from mi_viz.core.cli_types import finite_float
from mi_viz.core.mi import ground_truth_mi
from mi_viz.core.mi_data import MIDataError, pack
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
    states = [s[0] for s in res.states if int((s[0] == MASK).sum()) >= 2]
    return states[g.randrange(len(states))]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backbone", help="family checkpoint (name or path)")
    ap.add_argument("--msa", help="the alignment the backbone was trained on")
    ap.add_argument("--states", type=int, default=1200)
    ap.add_argument("--shard-size", type=int, default=64)
    ap.add_argument("--eps", type=finite_float, default=1e-3)
    ap.add_argument("--out", default="runs/family_mi/data")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-minutes", type=finite_float, default=0.0)
    ap.add_argument("--pack", nargs=2, metavar=("FOLDER", "FILE"), help="write FOLDER's states compactly to FILE")
    a = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")  # the library's notes (pack, merge)
    if a.pack:
        try:
            return pack(Path(a.pack[0]), Path(a.pack[1]), MASK)
        except MIDataError as e:
            raise SystemExit(f"error: {e}") from None
    dom = family_domain(a.backbone)
    model = dom.load_model()
    data = data_for(dom.meta, read_alignment(a.msa))
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    shards = [list(range(s, min(a.states, s + a.shard_size))) for s in range(0, a.states, a.shard_size)]
    t0 = time.time()
    bar = tqdm(total=a.states, desc=f"MI states {dom.family}")
    for k, jobs in enumerate(shards):
        path = out / f"shard_000_{k:05d}.safetensors"
        if path.exists():
            bar.update(len(jobs))
            continue
        if a.max_minutes and time.time() - t0 > a.max_minutes * 60:
            print("time budget reached; run the same command again to continue", flush=True)
            break
        with torch.inference_mode():
            x = torch.stack([state_for_job(model, j, data.train_rows, dom.width, a.seed) for j in jobs])
            gt = ground_truth_mi(model, x, eps=a.eps)
        shard = {
            "tokens": x.to(torch.uint8),
            "mi": gt.mi.half(),
            "entropy": gt.entropy,
            "dropped_mass": gt.dropped_mass,
            "passes": gt.passes,
        }
        tmp = path.with_name(path.name + ".tmp")
        save_file(shard, str(tmp))
        os.replace(tmp, path)
        bar.update(len(jobs))
    bar.close()
    print(f"{dom.family}: states in {out} ({time.time() - t0:.0f} s this run)", flush=True)


if __name__ == "__main__":
    main()
