"""Rules of the field that read the marginals themselves: Fast-dLLM's threshold, the top-two
margin and KLASS (docs/samplers.md cites each)."""

from __future__ import annotations

import numpy as np

from .registry import Candidates, Sampler, register


def _top2(probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p = np.sort(probs, axis=-1)
    return p[:, -1], (p[:, -2] if probs.shape[-1] > 1 else np.zeros(len(p)))


def select_threshold(probs: np.ndarray, tau: float) -> list[int]:
    """Fast-dLLM: every position with top probability >= tau (most confident first), at least one."""
    p1 = probs.max(-1)
    order = np.argsort(-p1, kind="stable")
    n = max(1, int((p1 >= tau).sum()))
    return [int(i) for i in order[:n]]


def select_margin(probs: np.ndarray, k: int, tau: float | None = None) -> list[int]:
    """Top-probability margin: positions by p1 - p2, largest first; the k largest, or with tau
    every position whose margin is >= tau (at least one)."""
    p1, p2 = _top2(probs)
    m = p1 - p2
    order = np.argsort(-m, kind="stable")
    n = max(1, int((m >= tau).sum())) if tau is not None else max(1, k)
    return [int(i) for i in order[:n]]


def select_klass(probs: np.ndarray, prev: np.ndarray | None, tau: float, kl: float) -> list[int]:
    """KLASS: top probability >= tau and KL(p || p_prev) <= kl (confidence alone at the first
    pass); at least the most confident position."""
    p1 = probs.max(-1)
    ok = p1 >= tau
    if prev is not None:
        div = (probs * (np.log(np.clip(probs, 1e-12, 1)) - np.log(np.clip(prev, 1e-12, 1)))).sum(-1)
        ok &= div <= kl
    order = np.argsort(-p1, kind="stable")
    chosen = [int(i) for i in order if ok[i]]
    return chosen or [int(order[0])]


def _probs(c: Candidates) -> np.ndarray:
    assert c.probs is not None, "decode hands the marginals to a rule that reads 'probs'"
    return c.probs


register(
    Sampler(
        "threshold",
        "Fast-dLLM (Wu et al. 2025): every position whose top probability is >= tau",
        {"tau": 0.9},
        lambda c, cfg: select_threshold(_probs(c), cfg.tau),
        reads=frozenset({"probs"}),
    )
)
register(
    Sampler(
        "margin",
        "top-two margin (Kim et al. 2025): by p1 - p2, the k largest, or with tau every margin >= tau",
        {"k": 4, "tau": None},
        lambda c, cfg: select_margin(_probs(c), cfg.k, cfg.tau),
        reads=frozenset({"probs"}),
        help={"tau": "least p1 - p2 (unset: k per pass)"},
    )
)
register(
    Sampler(
        "klass",
        "KLASS (2025): confident (top probability >= tau) and stable (KL to the previous pass <= kl)",
        {"tau": 0.9, "kl": 0.01},
        lambda c, cfg: select_klass(_probs(c), c.prev, cfg.tau, cfg.kl),
        reads=frozenset({"probs", "prev"}),
    )
)
