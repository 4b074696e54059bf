"""The MI-guided rules (the paper's method and its variants): positions join a batch in entropy
order while their entropy and their MI to the batch fit a budget.

mi / mi-gt (gamma, lam), rule version 4, as the paper parameterises it: the positions are scanned
in entropy order; the first is always taken and charged its entropy H_1; a candidate c joins the
batch S if, with what the batch has already spent,

    spent + H_c + lam * sum_{j in S} I_cj  <  gamma      (then spent += H_c + lam * sum I_cj)

gamma is the budget in nats, lam weighs the MI (the entropy at weight 1). scan="stop": the first
rejected candidate ends the batch (a prefix of the entropy order); "skip": it is skipped. gamma = 0
is sequential; lam = 0 a pure entropy budget (mi-zero). `mi` reads I from the MI head (same pass);
`mi-gt` from the exact map (an oracle; only what the rule can reach is expanded: mi_rule_reach).

mi-tc charges lam * max_{j in S} I_cj instead of the sum: the greedy max-MI charges sum to a
spanning tree of the batch, whose MI lower-bounds its total correlation (Chow-Liu). mi-cap takes
at most k positions a pass (on protein families an uncapped entropy budget front-loads its largest
batches, when positions depend most: docs/results-family.md). mi-pairs is the rule of releases up
to 0.3 (version 3): the first position free, then sum_{a<b in S} I_ab + lam * sum_{a != s1} H_a < gamma.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .registry import Candidates, Sampler, SamplerConfig, register

RULE_VERSION = 4  # of mi, mi-gt, mi-zero, mi-tc, mi-cap
PAIRS_RULE_VERSION = 3  # mi-pairs: the rule that was "mi" in releases up to 0.3


def select_mi(
    H: np.ndarray, MI: np.ndarray | None, gamma: float, lam: float, scan: str = "stop", charge: str = "sum"
) -> list[int]:
    """The paper's MI rule: H (m,), MI (m, m) or None (I = 0). charge="sum" charges
    lam * sum_{j in S} I_cj (mi), "max" lam * max_{j in S} I_cj (mi-tc)."""
    order = np.argsort(H, kind="stable")
    S = [int(order[0])]
    spent = float(H[order[0]])  # the first position: always taken, charged its entropy
    for c in order[1:]:
        c = int(c)
        dep = 0.0
        if MI is not None and lam > 0:
            row = MI[c, S]
            dep = float(row.sum() if charge == "sum" else row.max())
        cost = float(H[c]) + lam * dep
        if spent + cost < gamma:
            S.append(c)
            spent += cost
        elif scan == "stop":
            break
    return S


def select_mi_pairs(H: np.ndarray, MI: np.ndarray | None, gamma: float, lam: float, scan: str = "stop") -> list[int]:
    """The rule of releases up to 0.3 (version 3): the first position free, then
    sum of pair MI in the batch + lam * sum of the candidates' entropies < gamma."""
    order = np.argsort(H, kind="stable")
    S = [int(order[0])]
    dep = 0.0  # sum of I over pairs in S
    hcand = 0.0  # sum of H over the candidates admitted so far
    for c in order[1:]:
        c = int(c)
        d = dep + (float(MI[c, S].sum()) if MI is not None else 0.0)
        h = hcand + float(H[c])
        if d + lam * h < gamma:
            S.append(c)
            dep, hcand = d, h
        elif scan == "stop":
            break
    return S


def mi_rule_reach(H: np.ndarray, gamma: float, lam: float, scan: str = "stop", rule: str = "mi") -> list[int]:
    """Indices (into H) that the MI rule could admit whatever the MI (MI >= 0): the only
    positions whose MI it can ever read, so the only ones the ground-truth oracle expands.

    rule "mi": every admitted position costs at least its entropy and the first is charged
    its own, so with scan=stop the scan cannot pass the first candidate at which the running
    sum of entropies (the first's included) reaches gamma, and with scan=skip no candidate c
    with H_1 + H_c >= gamma gets in. rule "mi-pairs" (version 3): the same with lam times the
    candidates' entropies and the first free; lam = 0 there: every position. Sums are
    accumulated in the rule's own order, so the bound holds bit for bit."""
    order = np.argsort(H, kind="stable")
    reach = [int(order[0])]
    first = float(H[order[0]]) if rule == "mi" else 0.0
    w = 1.0 if rule == "mi" else lam
    spent = first
    for c in order[1:]:
        c = int(c)
        if scan == "stop":
            spent = spent + w * float(H[c]) if rule == "mi" else spent + float(H[c])
            if not (spent if rule == "mi" else lam * spent) < gamma:
                break
        elif not first + w * float(H[c]) < gamma:
            continue
        reach.append(c)
    return reach


MI_HELP = {"lam": "weight of the MI; the entropy's is 1"}
MI_PARAMS = {"gamma": 1.0, "lam": 1.0, "scan": "stop"}  # neutral: each domain sets its own (Domain.sampler_defaults)


def _mi_rule(
    name: str,
    summary: str,
    params: dict,
    select: Callable[[Candidates, SamplerConfig], Any],
    reads: frozenset[str] = frozenset({"mi"}),
    **kw: Any,
) -> Sampler:
    """An MI-family rule: rule version 4 and the MI's help unless it says otherwise."""
    kw = {"version": RULE_VERSION, "help": MI_HELP, **kw}
    return register(Sampler(name, summary, params, select, reads=reads, **kw))


_mi_rule(
    "mi",
    "MI-guided (the paper): in entropy order, a position joins while spent + H + lam x its MI "
    "to the batch < gamma; the MI head",
    MI_PARAMS,
    lambda c, cfg: select_mi(c.H, c.MI, cfg.gamma, cfg.lam, cfg.scan),
)
_mi_rule(
    "mi-gt",
    "the mi rule on the exact MI (an oracle: its passes are counted apart)",
    MI_PARAMS,
    lambda c, cfg: select_mi(c.H, c.MI, cfg.gamma, cfg.lam, cfg.scan),
    reads=frozenset({"exact-mi"}),
    reach=lambda H, cfg, probs=None: mi_rule_reach(H, cfg.gamma, cfg.lam, cfg.scan, "mi"),
)
_mi_rule(
    "mi-zero",
    "the mi rule with MI = 0: its entropy budget alone (an ablation)",
    {"gamma": 1.0},
    lambda c, cfg: select_mi(c.H, None, cfg.gamma, 0.0),
    reads=frozenset(),
    help={},
)
_mi_rule(
    "mi-tc",
    "the mi rule charging a candidate its largest MI to the batch instead of the sum",
    MI_PARAMS,
    lambda c, cfg: select_mi(c.H, c.MI, cfg.gamma, cfg.lam, cfg.scan, charge="max"),
)
# the setting measured on the protein families (docs/results-family.md): gamma well above what
# 8 columns' entropies cost, so the batch ends where lambda x MI breaks the budget, or at k
_mi_rule(
    "mi-cap",
    "the mi rule with at most k positions a pass",
    {"k": 8, "gamma": 32.0, "lam": 300.0, "scan": "stop"},
    lambda c, cfg: select_mi(c.H, c.MI, cfg.gamma, cfg.lam, cfg.scan)[: cfg.k],
    curve=("k",),  # its front moves along lambda at a fixed cap
    help={**MI_HELP, "k": "the most positions a pass"},
)
_mi_rule(
    "mi-pairs",
    "the MI rule of release 0.3: the batch's pair MI + lam x its entropies < gamma",
    {"gamma": 0.01, "lam": 0.25, "scan": "stop"},
    lambda c, cfg: select_mi_pairs(c.H, c.MI, cfg.gamma, cfg.lam, cfg.scan),
    version=PAIRS_RULE_VERSION,
    help={"gamma": "budget on the batch's pair MI, nats", "lam": "weight of the entropy term"},
)
