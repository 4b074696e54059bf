"""The protein MI report's extra: mean MI by sequence separation |i - j|, local against long-range."""

from __future__ import annotations

import numpy as np

from ...core.fidelity import PairTable, pearson

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
