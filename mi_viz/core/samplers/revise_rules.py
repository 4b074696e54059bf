"""mi-revise: the MI rule that goes back over what a parallel step may have broken.

Every unmask-only rule writes two dependent positions from their marginals in one pass and never
looks at them again. The MI map of that pass says which pairs were written together while
dependent: mi-revise marks, for each pair of its batch whose MI exceeds theta, the less confident
member (the lower top probability of its marginal when written), and at the next pass, once that
pass's writes have grown the context around it, sets it back to MASK; the rule's own unmasking then
re-predicts it from the model's conditional given everything written since. A re-prediction at the
sampling temperature is a Gibbs step on the pair, not a sharpening: it does not prefer the likelier
value, it draws from the conditional the independent write ignored.

    unmask: the mi rule (gamma, lam, scan) on the same pass's map
    mark:   members of pairs {a, b} in the batch with I_ab > theta, never written before,
            the less confident of each pair; at most the budget left
    remask: every position marked at an earlier step (the step after it was marked); at the step
            that writes the last masked candidate, this step's marks at once (so every mark is
            revised before the decode ends: for those the revision is a deferral)
    budget: at most floor(rho x M) remasks in a decode, M the positions it decodes; a position is
            revised at most once (its second write is final)

Controls (the `pick` and `act` parameters), each with the same number of marks per pass and chain
as the MI pairs give: pick=random marks members of the batch drawn at random; pick=conf the least
confident members of the batch (ReMDM's confidence idea, timed as mi-revise); act=defer never
writes a marked member at that pass (an unmask-only twin: tells revision from deferral).
mi-revise reads the MI head's map; mi-revise-gt the exact map (an oracle, passes counted apart).
"""

from __future__ import annotations

import math
import zlib
from typing import Any

import numpy as np

from .mi_rules import MI_HELP, RULE_VERSION, mi_rule_reach, select_mi
from .params import Param, declare
from .registry import Candidates, Revision, Sampler, SamplerConfig, register

declare(Param("theta", "float", "least MI of a pair written together that marks its less confident member, nats",
              lo=0.0, ladder=(0.0, 0.01, 0.03, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0)))  # fmt: skip
declare(Param("rho", "float", "most remasks a decode makes, as a share of the positions it decodes", lo=0.0, hi=1.0,
              ladder=(0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0)))  # fmt: skip
declare(Param("pick", "choice", "which members a pass marks: mi (the less confident of each dependent pair), "
              "random, conf (the least confident); the count is mi's", choices=("mi", "random", "conf"),
              label_default=False))  # fmt: skip
declare(Param("act", "choice", "remask: rewrite a marked member a pass later; defer: never write it at that pass",
              choices=("remask", "defer"), label_default=False))  # fmt: skip

REVISE_PARAMS = {"gamma": 6.0, "lam": 1.0, "scan": "stop", "theta": 0.1, "rho": 0.2, "pick": "mi", "act": "remask"}
REVISE_HELP = {**MI_HELP, "gamma": "the mi rule's budget, nats (its unmasking is the mi rule's)"}


def _rng(seed: int, now: int, pos: np.ndarray) -> np.random.Generator:
    """A draw that is a pure function of the state (a rule must be: LazyMaps may run it twice)."""
    return np.random.default_rng([seed, now, zlib.crc32(np.asarray(pos, dtype=np.int64).tobytes())])


def dependent_marks(S: list[int], MI: np.ndarray, top: np.ndarray, theta: float, eligible: np.ndarray) -> list[int]:
    """The less confident member (lower top probability; on a tie the later in S) of every pair of S
    whose MI exceeds theta, among eligible candidates; each member once, in S's order."""
    out: dict[int, None] = {}
    for x, a in enumerate(S):
        for b in S[x + 1 :]:
            if eligible[a] and eligible[b] and float(MI[a, [b]][0]) > theta:
                out[b if top[b] <= top[a] else a] = None
    return [c for c in S if c in out]


def select_revise(c: Candidates, cfg: SamplerConfig) -> Revision:
    """One step of mi-revise (module docstring): the mi rule's batch, its marks, its remasks."""
    w = c.written
    assert w is not None and c.probs is not None and c.pos is not None, "decode hands a revising rule what it reads"
    S = select_mi(c.H, c.MI, cfg.gamma, cfg.lam, cfg.scan)
    top = c.probs.max(-1)  # (m,)
    eligible = w.times[c.pos] == 0  # (m,) never written: a revised position's second write is final
    pending = [int(p) for p in w.pos if w.mark[p] > 0]
    left = math.floor(cfg.rho * (len(w.pos) + len(c.H)) + 1e-9) - w.revised - len(pending)
    marks = dependent_marks(S, c.MI, top, cfg.theta, eligible) if c.MI is not None and left > 0 else []
    n = min(len(marks), max(0, left))
    if cfg.pick == "random":
        pool = [a for a in S if eligible[a]]
        marks = sorted(_rng(cfg.seed, w.now, c.pos).choice(pool, size=n, replace=False).tolist(), key=S.index)
    elif cfg.pick == "conf":
        pool = sorted((a for a in S if eligible[a]), key=lambda a: (top[a], -S.index(a)))
        marks = sorted(pool[:n], key=S.index)
    else:
        marks = marks[:n]
    if cfg.act == "defer":
        keep = [a for a in S if a not in marks] or [S[0]]
        return Revision(keep)
    last = len(S) == len(c.H)  # this step writes every masked candidate: its marks are revised at once
    remask = [p for p in pending if w.mark[p] < w.now]
    if last:
        remask += [int(c.pos[a]) for a in marks]
    return Revision(S, remask=sorted(remask), mark=[] if last else marks)


def _revise_rule(name: str, summary: str, reads: frozenset[str], **kw: Any) -> Sampler:
    reads = reads | {"probs", "written"}
    kw = {"version": RULE_VERSION, "help": REVISE_HELP, "revises": True, **kw}
    return register(Sampler(name, summary, REVISE_PARAMS, select_revise, reads=reads, **kw))


_revise_rule(
    "mi-revise",
    "the mi rule, then the less confident member of each pair written together with MI > theta is "
    "remasked a pass later and re-predicted (at most rho x the span; the MI head)",
    frozenset({"mi"}),
)
_revise_rule(
    "mi-revise-gt",
    "mi-revise on the exact MI (an oracle: its passes are counted apart)",
    frozenset({"exact-mi"}),
    reach=lambda H, cfg, probs=None: mi_rule_reach(H, cfg.gamma, cfg.lam, cfg.scan, "mi"),
)
