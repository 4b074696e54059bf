"""DAWN (Luo et al. 2026, arXiv 2602.06953; github.com/silence1024/DAWN): a training-free rival
of the MI head that reads the dependency graph off the backbone's own attention.

One pass, three steps (its Sec. 4 and Algorithm 1), on the last block's head-averaged attention A
(row q attends to column k; core.attention):

1. The graph. Keys that soak up attention whatever the query (attention sinks: mean incoming
   attention over sink / L, i.e. `sink` uniform shares) lose their column; the diagonal goes;
   an edge k -> q wherever A[q, k] >= edge (q leans on k).
2. Anchor-guided decoding. Anchors are unmasked positions committed with probability >= tau
   (the starting context counts as certain). A masked position is taken when its top
   probability is >= tau, or when it is induced (an edge from an anchor reaches it) and its
   top probability is >= induce.
3. Conflict-based scheduling. Of the rest, positions with top probability >= low that conflict
   (an edge either way) with nothing taken so far are added greedily, most confident first,
   each one's conflicting neighbours dropped: an independent set of the conflict graph.

At least the most confident position is taken. Two adaptations, both written here: an anchor's
confidence is the probability its value had when it was unmasked (DAWN re-reads it from the
current pass, where an MDM's outputs at unmasked positions are not trained), and the sink bar
is relative to the length (DAWN's 0.01 is about ten uniform shares at LLaDA's lengths; an
absolute 0.01 would mark every key of an 81-cell board). Its published defaults otherwise
(tau 0.9, induce 0.7, low 0.7, edge 0.07); the domains' defaults are chosen on validation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .params import TAUS, Param, declare
from .registry import Candidates, Sampler, SamplerConfig, register

EDGES = (0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.5)
SINKS = (2.0, 3.0, 5.0, 10.0, 20.0, 50.0)

declare(Param("induce", "float", "least top probability of a position an anchor's edge reaches", 0.0, 1.0, ladder=TAUS))
declare(Param("low", "float", "least top probability of a conflict-free extra position", 0.0, 1.0, ladder=TAUS))
declare(Param("edge", "float", "least attention weight that makes a dependency edge", 0.0, 1.0, ladder=EDGES))
declare(Param("sink", "float", "a key is an attention sink over sink / L mean incoming attention", 1.0, ladder=SINKS))


DAWN_DEFAULTS = {"tau": 0.9, "induce": 0.7, "low": 0.7, "edge": 0.07, "sink": 10.0}  # the paper's, select_dawn's order


def dependency_edges(A: np.ndarray, edge: float, sink: float) -> np.ndarray:
    """(L, L) attention -> (L, L) bool E[q, k]: q leans on k (sinks' columns and the diagonal dropped)."""
    L = len(A)
    A = A.copy()
    A[:, A.mean(0) > sink / L] = 0.0
    np.fill_diagonal(A, 0.0)
    return A >= edge


@dataclass(frozen=True)
class Thresholds:
    """DAWN's five bars (the paper's names; DAWN_DEFAULTS holds its values)."""

    tau: float  # least top probability of a position taken outright, and of an anchor
    induce: float  # least top probability of a position an anchor's edge reaches
    low: float  # least top probability of a conflict-free extra position
    edge: float  # least attention weight that makes a dependency edge
    sink: float  # a key is an attention sink over sink / L mean incoming attention


def select_dawn(
    p1: np.ndarray,  # (m,) the candidates' top probabilities
    pos: np.ndarray,  # (m,) their places in the sequence
    A: np.ndarray,  # (L, L) attention of the whole sequence
    committed: np.ndarray,  # (L,) probability each position was unmasked with (nan: masked)
    t: Thresholds,
) -> list[int]:
    """DAWN's update set (indices into the candidates), most confident first."""
    tau, induce, low = t.tau, t.induce, t.low
    E = dependency_edges(A, t.edge, t.sink)  # (L, L)
    anchors = np.nan_to_num(committed, nan=0.0) >= tau  # (L,)
    taken = (p1 >= tau) | (E[pos][:, anchors].any(1) & (p1 >= induce))  # (m,)
    conflict = (E | E.T)[np.ix_(pos, pos)]  # (m, m)
    free = (p1 >= low) & ~taken & ~conflict[:, taken].any(1)
    for i in np.argsort(-p1, kind="stable"):
        if free[i]:
            taken[i] = True
            free &= ~conflict[i]
    chosen = [int(i) for i in np.argsort(-p1, kind="stable") if taken[i]]
    return chosen or [int(np.argmax(p1))]


def _select(c: Candidates, cfg: SamplerConfig) -> list[int]:
    assert c.probs is not None and c.attention is not None and c.committed is not None and c.pos is not None
    p = cfg.params
    return select_dawn(c.probs.max(-1), c.pos, c.attention, c.committed, Thresholds(*(p[k] for k in DAWN_DEFAULTS)))


register(
    Sampler(
        "dawn",
        "DAWN (Luo et al. 2026): confident and anchor-induced positions, then a conflict-free set, on the "
        "backbone's own attention graph (no head)",
        DAWN_DEFAULTS,
        _select,
        reads=frozenset({"probs", "attention"}),
        curve=(),  # every setting on one front: its bars move it along together
        help={"tau": "least top probability of a position taken outright, and of an anchor"},
    )
)
