"""Dilated unmasking in the spirit of DUS (2025): neighbours in a sequence are the most dependent,
so a batch keeps its positions apart."""

from __future__ import annotations

import numpy as np

from .registry import Sampler, register


def select_dilated(H: np.ndarray, pos: np.ndarray, k: int, d: int) -> list[int]:
    """Up to k positions in entropy order, each at least d places from every one already chosen."""
    order = np.argsort(H, kind="stable")
    S: list[int] = []
    for c in order:
        c = int(c)
        if all(abs(int(pos[c]) - int(pos[s])) >= d for s in S):
            S.append(c)
            if len(S) >= k:
                break
    return S


register(
    Sampler(
        "dilated",
        "up to k positions a pass in entropy order, each at least d apart (DUS-style)",
        {"k": 4, "d": 3},
        lambda c, cfg: select_dilated(c.H, c.pos if c.pos is not None else np.arange(len(c.H)), cfg.k, cfg.d),
    )
)
