"""Held-out figures of the protein backbones, beside the amino-acid unigram.

    python -m benchmarks.protein_backbones --out results/protein/backbones.json

For each backbone (the shipped small ESM-C, and ESM-C 300M where its weights are on the
machine; an absent one is reported as absent, never downloaded), on two held-out sets of the
test split (data/protein/): the 500 reference proteins of length 50-100 (whole), and the
500 held-out proteins of any length cropped to their first 126 residues (the training
window):
- mdm_loss: the MDM objective, cross-entropy over the 20 amino acids on residues masked with
  a ratio t ~ U(0, 1) per sequence (fixed seed), nats per masked residue;
- pseudo_ppl_15: exp of the cross-entropy with 15 % of residues masked (fixed seed);
- unigram_ppl: the perplexity of the training split's amino-acid frequencies on the same
  residues: what a model that learned nothing but composition scores. A backbone's MI maps
  mean something only as far as its perplexity is below this.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
import torch

from benchmarks.report import save
from mi_viz.core.checkpoints import CheckpointError
from mi_viz.domains import get_domain
from mi_viz.domains.protein.alphabet import AMINO_ACIDS, encode
from mi_viz.domains.protein.backbone import BackboneUnavailable, masked_lm_loss
from mi_viz.domains.protein.fasta import read_fasta
from mi_viz.domains.protein.metrics import composition

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "protein"


@torch.no_grad()
def scores(model, seqs: list[str], seed: int = 0) -> dict:
    """MDM loss and 15 % pseudo-perplexity over sequences batched by length (no padding)."""
    by_len: dict[int, list[str]] = {}
    for s in seqs:
        by_len.setdefault(len(s), []).append(s)
    g = torch.Generator().manual_seed(seed)
    tot = {"mdm": [0.0, 0], "p15": [0.0, 0]}
    for L in sorted(by_len):
        x = torch.stack([encode(s) for s in by_len[L]])
        for key, ratio in (("mdm", None), ("p15", 0.15)):
            loss, n = masked_lm_loss(model, x, generator=g, mask_ratio=ratio)
            tot[key][0] += loss.item() * n
            tot[key][1] += n
    mdm, p15 = (tot[k][0] / tot[k][1] for k in ("mdm", "p15"))
    return {"mdm_loss": round(mdm, 4), "pseudo_ppl_15": round(math.exp(p15), 3), "masked_residues_15": tot["p15"][1]}


def unigram_ppl(freq: np.ndarray, seqs: list[str]) -> float:
    logp = np.log(freq / freq.sum())
    idx = {a: k for k, a in enumerate(AMINO_ACIDS)}
    ce = -np.mean([logp[idx[ch]] for s in seqs for ch in s])
    return round(float(math.exp(ce)), 3)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backbone", action="append", default=None, help="protein_mdm (default), esmc_300m, PATH")
    ap.add_argument(
        "--train",
        default=str(ROOT / "runs" / "protein_data" / "train.fasta"),
        help="the training split, for the unigram (make_protein_data.py)",
    )
    ap.add_argument("--crop", type=int, default=126)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    protein = get_domain("protein")
    freq = composition([s for _, s in read_fasta(a.train)])
    sets = {
        "reference_test_50_100": [s for _, s in read_fasta(DATA / "reference_test.fasta")],
        f"heldout_test_first_{a.crop}": [s[: a.crop] for _, s in read_fasta(DATA / "heldout_test.fasta")],
    }
    res = {
        "unigram_from": Path(a.train).name,
        "training_residues": int(freq.sum()),
        "unigram_ppl": {k: unigram_ppl(freq, v) for k, v in sets.items()},
        "backbones": {},
    }
    for spec in a.backbone or ["protein_mdm", "esmc_300m"]:
        t0 = time.time()
        try:
            model = protein.load_model(spec)
        except (BackboneUnavailable, CheckpointError) as e:
            res["backbones"][spec] = {"available": False, "note": str(e)}
            continue
        model.eval()
        res["backbones"][spec] = {
            "available": True,
            "parameters": model.n_params(),
            "config": model.config.to_dict(),
            **{k: scores(model, v) for k, v in sets.items()},
            "seconds": round(time.time() - t0, 1),
        }
    save(res, a.out)


if __name__ == "__main__":
    main()
