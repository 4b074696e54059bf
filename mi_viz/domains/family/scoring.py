"""Contact precision: how well a predictor's pair scores find a structure's contacts. APC (the
average-product correction every predictor here gets), the precision of the top L/k pairs, by
separation class, and a decode state's precision over its masked columns."""

from __future__ import annotations

import numpy as np

from .structure import ContactMap


def apc(S: np.ndarray) -> np.ndarray:
    """Average-product correction (Dunn et al. 2008): S_ij - S_i. S_.j / S_.. over the off-diagonal
    entries (L, L) -> (L, L), diagonal 0."""
    S = np.asarray(S, dtype=np.float64).copy()
    L = len(S)
    np.fill_diagonal(S, 0.0)
    row = S.sum(1) / (L - 1)
    total = S.sum() / (L * (L - 1))
    out = S - np.outer(row, row) / max(total, 1e-30)
    np.fill_diagonal(out, 0.0)
    return out


def precision_at(score: np.ndarray, cmap: ContactMap, k: int) -> float:
    """Share of contacts among the k highest-scoring scored pairs (i < j), ties broken by order."""
    scored = np.triu(cmap.scored(), 1)
    i, j = np.nonzero(scored)
    s = np.asarray(score)[i, j]
    top = np.argsort(-s, kind="stable")[:k]
    return float(cmap.contacts()[i[top], j[top]].mean()) if len(top) else float("nan")


def contact_scores(score: np.ndarray, cmap: ContactMap) -> dict:
    """Top-L/5 and L/2 precision and the AUROC of a column-pair score against the contacts
    (L = mapped columns), with the base rate: what the README's family tables show."""
    from sklearn.metrics import roc_auc_score

    L = cmap.n_mapped
    scored = np.triu(cmap.scored(), 1)
    labels = cmap.contacts()[scored]
    s = np.asarray(score)[scored]
    return {
        "precision_L5": round(precision_at(score, cmap, max(1, L // 5)), 4),
        "precision_L2": round(precision_at(score, cmap, max(1, L // 2)), 4),
        "auroc": round(float(roc_auc_score(labels, s)), 4) if 0 < labels.sum() < len(labels) else float("nan"),
        "base_rate": round(float(labels.mean()), 4),
    }


# the field's separation classes (CASP; the esm README's contact table), in residues along the chain
# like MIN_SEPARATION: short 6-11, medium 12-23, long >= 24; "all" is every scored pair (>= 6)
SEPARATION_CLASSES: dict[str, tuple[int, int | None]] = {
    "short": (6, 11),
    "medium": (12, 23),
    "long": (24, None),
    "all": (6, None),
}


def class_precisions(score: np.ndarray, cmap: ContactMap) -> dict:
    """Precision of the top L, L/2 and L/5 scored pairs (L = mapped columns) within each separation
    class: {"precision_long_L": ..., "precision_short_L5": ..., ...}. A class with fewer pairs than k
    is scored on all it has; one with none gets None. "all" at L/5 and L/2 equals contact_scores'."""
    L = cmap.n_mapped
    i, j = np.nonzero(np.triu(cmap.scored(), 1))  # the order precision_at breaks ties in
    sep, hit, s = cmap.separation()[i, j], cmap.contacts()[i, j], np.asarray(score)[i, j]
    out: dict = {}
    for name, (lo, hi) in SEPARATION_CLASSES.items():
        keep = (sep >= lo) & (sep <= hi if hi is not None else True)
        order = np.argsort(-s[keep], kind="stable")
        for tag, k in (("L", L), ("L2", L // 2), ("L5", L // 5)):
            top = order[: max(1, k)]
            out[f"precision_{name}_{tag}"] = round(float(hit[keep][top].mean()), 4) if len(top) else None
        out[f"pairs_{name}"] = int(keep.sum())
        out[f"contacts_{name}"] = int(hit[keep].sum())
    return out


def state_precision(mi: np.ndarray, masked, cmap: ContactMap) -> tuple[float, int] | None:
    """Contact precision of one state's MI map: the top max(1, M / 5) scored pairs among its masked
    columns (M = masked mapped columns) -> (precision, k), or None when no masked pair is scored."""
    m = np.zeros(cmap.width, bool)
    m[np.asarray(masked, bool)] = True
    mapped = np.zeros(cmap.width, bool)
    mapped[cmap.columns] = True
    keep = np.triu(cmap.scored() & m[:, None] & m[None, :], 1)
    i, j = np.nonzero(keep)
    if len(i) == 0:
        return None
    k = max(1, int((m & mapped).sum()) // 5)
    top = np.argsort(-np.asarray(mi)[i, j], kind="stable")[:k]
    return float(cmap.contacts()[i[top], j[top]].mean()), len(top)
