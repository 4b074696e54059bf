"""DEMASK (Ringel, Ali and Romano 2026, arXiv 2604.02560, "Dependency-Guided Parallel Decoding in
Discrete Diffusion Language Models"): the MI rule's closest peer, with another measure of dependence.

D_{i<-j} is the expected total-variation influence of position j on position i: how far, in TV,
fixing x_j moves x_i's conditional, averaged over x_j's values (core/mi.py computes it exactly from
the MI's own conditioned passes; a head predicts it in one pass). A greedy step admits positions
while the batch's cumulative dependency stays within tau: under the paper's sub-additivity
assumption, with the true D, the TV distance between the model's joint over the batch and the
product of its marginals is then at most tau. Beside tau the paper sweeps a confidence threshold:
a position whose top probability is below `conf` is not a candidate (the first always is).

As implemented here (docs/samplers.md; where the paper's text did not fix a choice, the MI rule's
is used, so that the comparison isolates the measure): candidates in entropy order (the MI rule's
order), the first always taken; a candidate c joins if

    conf <= max_v P(x_c = v)   and   spent + sum_{j in S} D_cj <= tau   (then spent += sum_{j in S} D_cj)

with D the symmetrised map (the mean of both directions, as the MI map), scan="stop" ending the batch
at the first candidate refused and "skip" passing over it. tau = 0 is sequential (any dependence
breaks the budget), conf = 0 leaves the budget alone. `demask` reads D from a head trained on it (the
MI head's architecture and training kit, target "tv"); `demask-gt` from the exact map (an oracle:
its passes counted apart; a position's conditioned passes run only when the rule first reads a pair
holding it, so a step expands its batch and the candidate that ends it: decoding.LazyMaps).
"""

from __future__ import annotations

import numpy as np

from .params import TAUS, Param, declare
from .registry import Candidates, Sampler, register

declare(Param("conf", "float", "least top probability of a candidate (DEMASK's confidence threshold)", 0.0, 1.0,
              ladder=(0.0, *TAUS)))  # fmt: skip
DEMASK_PARAMS = {"tau": 0.1, "scan": "stop", "conf": 0.0}  # PARAMS order
DEMASK_HELP = {"tau": "largest cumulative TV dependency of a batch (the bound on its TV from the joint)"}


def select_demask(H: np.ndarray, D: np.ndarray | None, top: np.ndarray, tau: float, conf: float,
                  scan: str = "stop") -> list[int]:  # fmt: skip
    """H (m,) entropies, D (m, m) symmetric dependence or None (0), top (m,) top probabilities."""
    order = np.argsort(H, kind="stable")
    S = [int(order[0])]
    spent = 0.0
    for c in order[1:]:
        c = int(c)
        ok = top[c] >= conf  # the bar first: an exact map (decoding.LazyMap) is read only past it
        cost = float(D[c, S].sum()) if ok and D is not None else 0.0
        if ok and spent + cost <= tau:
            S.append(c)
            spent += cost
        elif scan == "stop":
            break
    return S


def _top(c: Candidates) -> np.ndarray:
    assert c.probs is not None, "decode hands the marginals to a rule that reads 'probs'"
    return c.probs.max(-1)


register(
    Sampler(
        "demask",
        "DEMASK (Ringel et al. 2026): in entropy order, confident positions join while the batch's summed "
        "TV dependence stays <= tau; a head trained on D",
        DEMASK_PARAMS,
        lambda c, cfg: select_demask(c.H, c.MI, _top(c), cfg.tau, cfg.conf, cfg.scan),
        reads=frozenset({"tv", "probs"}),
        help=DEMASK_HELP,
    )
)
register(
    Sampler(
        "demask-gt",
        "the demask rule on the exact TV influence (an oracle: its passes are counted apart)",
        DEMASK_PARAMS,
        lambda c, cfg: select_demask(c.H, c.MI, _top(c), cfg.tau, cfg.conf, cfg.scan),
        reads=frozenset({"exact-tv", "probs"}),
        lazy=True,
        help=DEMASK_HELP,
    )
)
