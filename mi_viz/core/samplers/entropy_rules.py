"""Rules by entropy order alone (H = marginal entropy in nats; "entropy order" = ascending, most
confident first): sequential, top-k and EB-Sampler. docs/samplers.md has each with a worked case."""

from __future__ import annotations

import numpy as np

from .registry import Sampler, register


def select_topk(H: np.ndarray, k: int) -> list[int]:
    """Indices (into H) of the k smallest entropies, most confident first."""
    order = np.argsort(H, kind="stable")
    return [int(i) for i in order[: max(1, k)]]


def select_eb(H: np.ndarray, gamma: float) -> list[int]:
    """EB-Sampler: largest entropy-ordered prefix with sum - max <= gamma."""
    order = np.argsort(H, kind="stable")
    csum = np.cumsum(H[order])
    ok = csum - H[order] <= gamma + 1e-12  # sorted ascending: max of the prefix is its last
    n = max(1, int(np.argmin(ok)) if not ok.all() else len(order))
    return [int(i) for i in order[:n]]


for rule in (
    Sampler("sequential", "one position per pass, the lowest entropy", {}, lambda c, cfg: select_topk(c.H, 1)),
    Sampler("topk", "the k lowest-entropy positions per pass", {"k": 4}, lambda c, cfg: select_topk(c.H, cfg.k)),
    Sampler(
        "eb",
        "EB-Sampler (Ben-Hamu et al. 2025): the largest entropy-ordered prefix with sum(H) - max(H) <= gamma",
        {"gamma": 0.2},
        lambda c, cfg: select_eb(c.H, cfg.gamma),
    ),
):
    register(rule)
