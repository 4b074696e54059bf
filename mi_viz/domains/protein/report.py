"""The protein MI report's extras (any sequence domain's: families use them too).

- separation_profile: mean MI by sequence separation |i - j|, local against long-range;
- head_vs_baselines: the head against the ground truth, beside two trivial baselines on the
  same pairs. A head that reads hidden states should know more than where a pair sits and
  how uncertain its two positions are, so the baselines are fitted on half of the held-out
  states and all three are scored on the other half (the same pairs):
  separation (the mean truth at each |i - j|, binned as SEPARATION_BINS), and separation +
  entropies (gradient-boosted trees, scikit-learn, on |i - j|, min(H_i, H_j), max(H_i, H_j)).
  Pearson pooled over all pairs and within a state (the mean over states of the per-state
  Pearson): pooled numbers reward each state's overall level, within-state ones its ranking.
"""

from __future__ import annotations

import numpy as np

from ...core.mi_report import PairTable, pearson

SEPARATION_BINS = ((1, 1), (2, 2), (3, 3), (4, 4), (5, 8), (9, 16), (17, 32), (33, 10**6))


def separation_profile(pt: PairTable, bins=SEPARATION_BINS) -> list[dict]:
    """Mean MI (truth and head) of the pairs at each sequence separation |i - j| (binned):
    local against long-range dependence, for sequences (proteins)."""
    sep = np.abs(pt.i - pt.j)
    out = []
    for lo, hi in bins:
        sel = (sep >= lo) & (sep <= hi)
        if sel.any():
            out.append(
                {
                    "separation": f"{lo}" if lo == hi else (f"{lo}-{hi}" if hi < 10**6 else f">={lo}"),
                    "n_pairs": int(sel.sum()),
                    "mean_gt": round(float(pt.gt[sel].mean()), 5),
                    "mean_est": round(float(pt.est[sel].mean()), 5),
                    "pearson": round(pearson(pt.est[sel], pt.gt[sel]), 4) if sel.sum() > 2 else None,
                }
            )
    return out


def within_state_pearson(pred: np.ndarray, gt: np.ndarray, state: np.ndarray) -> float:
    rs = [pearson(pred[state == s], gt[state == s]) for s in np.unique(state) if (state == s).sum() > 2]
    rs = [r for r in rs if r == r]
    return float(np.mean(rs)) if rs else float("nan")


def head_vs_baselines(pt: PairTable, entropy: np.ndarray, seed: int = 0) -> dict:
    """pt: the report's pairs; entropy (N, L): each state's marginal entropies (nats)."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    states = np.unique(pt.state)
    g = np.random.default_rng(seed)
    fit_states = set(g.permutation(states)[: len(states) // 2].tolist())
    fit = np.array([s in fit_states for s in pt.state])
    ev = ~fit
    sep = np.abs(pt.i - pt.j)
    hi_, hj = entropy[pt.state, pt.i], entropy[pt.state, pt.j]
    X = np.stack([sep, np.minimum(hi_, hj), np.maximum(hi_, hj)], 1)
    sep_pred = np.zeros(len(sep))
    for lo, hi in SEPARATION_BINS:
        b = (sep >= lo) & (sep <= hi)
        if (b & fit).any():
            sep_pred[b] = pt.gt[b & fit].mean()
        elif b.any():
            sep_pred[b] = pt.gt[fit].mean()
    gbr = HistGradientBoostingRegressor(max_iter=200, random_state=seed).fit(X[fit], pt.gt[fit])
    preds = {"head": pt.est, "separation": sep_pred, "separation_entropies": gbr.predict(X)}
    out: dict[str, float] = {"eval_states": int(len(states) - len(fit_states)), "eval_pairs": int(ev.sum())}
    for name, p in preds.items():
        out[f"pearson_{name}"] = round(pearson(p[ev], pt.gt[ev]), 4)
        out[f"within_state_pearson_{name}"] = round(within_state_pearson(p[ev], pt.gt[ev], pt.state[ev]), 4)
    return out
