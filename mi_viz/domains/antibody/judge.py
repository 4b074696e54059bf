"""Judging a set of infilled chains, by a model and by references nobody here trained.

- pll: the infilled residues' pseudo-log-likelihood under the backbone (AntiBERTy), nats a residue:
  each infilled residue masked alone, the rest of the chain as decoded (the paper-style
  consistency measure; the natural chains' own figure is reported beside it as `pll_natural`);
- log10_pgen: OLGA's generation probability of a heavy chain's infilled CDR3 junction, and the
  share OLGA cannot generate at all (`pgen_zero`): V(D)J recombination's own model, not an LM;
- jsd: the paper's k-means JSD (bits) of AntiBERTy embeddings against the reference chains
  (data/antibody/reference_*.tsv.gz, OLGA-generated), and UniRep's (`jsd_unirep`, an
  independent protein model) when it is installed;
- recovery: the share of infilled residues equal to the natural chain's (reported, though
  argmax and parallel decoding restore the same share: it cannot separate samplers).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ..protein.alphabet import FIRST_AA, MASK, encode
from ..protein.metrics import Reference, default_judge
from .chains import read_chains
from .recombination import RecombinationError, log10_pgen

PGEN_CHAINS = {"igh": "heavy", "igk": "kappa", "igl": "lambda"}


@torch.no_grad()
def region_pll(model, seqs: list[str], masks: list[np.ndarray], batch: int = 64) -> list[float]:
    """Mean log p(x_i | x_-i) over each chain's masked positions (nats a residue)."""
    out = []
    for s, m in zip(seqs, masks):
        x = encode(s)
        pos = np.flatnonzero(m)
        tot = 0.0
        for k in range(0, len(pos), batch):
            part = torch.as_tensor(pos[k : k + batch])
            xs = x.repeat(len(part), 1)
            xs[torch.arange(len(part)), part] = MASK
            logp = model.forward_tokens(xs).logits.log_softmax(-1)  # (b, L, 20)
            tot += float(logp[torch.arange(len(part)), part, x[part] - FIRST_AA].sum())
        out.append(tot / max(1, len(pos)))
    return out


def pgen_stats(rows: list[dict]) -> dict:
    """OLGA's log10 Pgen of the heavy chains' junctions (mean over those it can generate) and the
    share it gives probability 0."""
    heavy = [r["junction"] for r in rows if r.get("chain") == "igh" and r.get("junction")]
    if not heavy:
        return {}
    try:
        lp = [log10_pgen(j, "heavy") for j in heavy]
    except RecombinationError:  # OLGA is an optional install (GPL-3.0): the column is absent without it
        return {}
    fin = [v for v in lp if math.isfinite(v)]
    return {
        "log10_pgen": round(float(np.mean(fin)), 3) if fin else None,
        "pgen_zero": round(1 - len(fin) / len(lp), 4),
    }


class AntibodyJudge:
    """Scores decoded sets (the rows of AntibodyDomain.score) against a reference, embedded once."""

    def __init__(self, model, items: list, reference_path, k: int = 15, unirep: bool = True, jsd: bool = True):
        """jsd=False: no reference embedded, no JSD (the app's quick sweeps: the PLL is the judge that
        separates samplers; the whole-chain JSD barely moves, docs/results-antibody.md)."""
        self.model, self.items = model, items
        self.reference = None
        if jsd:
            ref = [c.sequence for _, c in read_chains(reference_path)]
            self.reference = Reference(model, ref, k, judge=default_judge() if unirep else None)
        self.natural_pll = float(np.mean(region_pll(model, [i.sequence for i in items], [i.masked for i in items])))

    def __call__(self, rows: list[dict]) -> dict:
        seqs = [r["sequence"] for r in rows]  # rows in the items' order (core.bench.run_bench)
        masks = [it.masked for it in self.items]
        per = np.array(region_pll(self.model, seqs, masks))  # (N,) each chain's infill, nats a residue
        res = {
            "pll": round(float(per.mean()), 4),
            # standard error over the chains (the intervals of fronts: rows treated as independent)
            "pll_se": round(float(per.std(ddof=1) / np.sqrt(len(per))), 4) if len(per) > 1 else None,
            "pll_natural": round(self.natural_pll, 4),
            "recovery": round(float(np.mean([r["recovery"] for r in rows])), 4),
            **pgen_stats(rows),
        }
        if self.reference is not None:
            ref = self.reference(seqs)
            res.update({k: ref[k] for k in ("jsd", "jsd_unirep", "frechet") if k in ref})
        return res
