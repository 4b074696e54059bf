"""The field's semi-autoregressive and remasking samplers, on the one unmasking schedule their code uses.

llada (Nie et al. 2025, LLaDA, arXiv 2502.09992; its default sampler, "low-confidence remasking"):
  the decoded span in blocks of `block` positions, left to right; inside the current block the k
  masked positions of highest confidence are written each pass. A written token is never changed
  (the name's "remasking" is of the predictions it does not keep): an unmask-only baseline.

remdm (Wang, Schiff, Sahoo and Kuleshov, NeurIPS 2025, ReMDM, arXiv 2503.00307; its LLaDA code,
  guanghanwang/ReMDM-LLaDA, llada_remdm_sample): llada's schedule, and in each block a window in
  which written tokens are masked again and re-predicted. The window opens after floor(t_on x steps)
  of the block's steps = ceil(block / k) unmasking passes (the code: 7/8 of them). strategy "loop"
  (the code's): the window lasts `loop` passes (0: steps, the code's) and holds the number masked:
  each of its passes writes nr and masks nr again; "switch": from the window's start to the block's
  end each pass writes k and masks nr again (nr < k; cap and rescale at most k - 1). Which and how
  many (schedule): "conf" (the code's) the nr written positions of the block with the lowest
  confidence when written; "cap" and
  "rescale" (the paper's MDLM schedules) a count drawn from sigma = min(eta, sigma_max) or eta x
  sigma_max times the block's written positions, sigma_max = min(1, (1 - a_s) / a_t) with a the
  block's written share before (t) and after (s) the pass, the positions drawn uniformly (the paper
  remasks each written token with probability sigma).
  The code masks again before a pass's forward; here it is after the previous pass's writes: the
  state each forward reads is the same (tests/test_revision.py runs the code's loop beside it).

navira (Fomenko et al. 2026, NAVIRA, arXiv 2606.06031): scoring and regenerating in separate passes.
  A pass scores every written token by the probability the model's output at its own (unmasked)
  position gives it (a masked LM trained BERT-style predicts unmasked tokens too; no learned quality
  head here, where PRISM would use one); nr of them, drawn without replacement with weights
  p^(-1/tr) (tr, the remasking temperature: 0 takes the least probable, large draws uniformly),
  are masked; the next pass regenerates them from the cleaned context, so a token is never replaced
  by a prediction it conditioned. Unmasking is llada's; remasking starts once a share t_on of the
  span is written, and stops when rho x the span has been remasked.

Confidence is a candidate's top probability (a rule selects before values are drawn); LLaDA's code
reads the probability of the value it sampled, the same at temperature 0.
"""

from __future__ import annotations

import math
import zlib

import numpy as np

from ..errors import InputError
from . import revise_rules  # noqa: F401  (declares rho, which navira takes: parameters keep their declared order)
from .params import Param, declare
from .registry import Candidates, Revision, Sampler, SamplerConfig, register

declare(Param("block", "int", "positions of a semi-autoregressive block, the span's first first (0: the whole span)",
              lo=0,
              hi=100_000, widget_hi=64))  # fmt: skip
declare(Param("nr", "int", "positions masked again a pass (ReMDM-LLaDA's remdm_number)", lo=0, hi=100_000))
declare(Param("loop", "int", "passes of ReMDM's loop window (0: a block's unmasking steps, its code's)", lo=0,
              hi=100_000))  # fmt: skip
declare(Param("t_on", "float", "share of a block's unmasking steps (NAVIRA: of the span written) before remasking "
              "starts", lo=0.0, hi=1.0, ladder=(0.0, 0.25, 0.5, 0.75, 0.875, 1.0)))  # fmt: skip
declare(Param("eta", "float", "ReMDM's eta: sigma's cap (cap) or its scale (rescale)", lo=0.0, hi=1.0,
              ladder=(0.0, 0.01, 0.02, 0.04, 0.1, 0.2, 0.5, 1.0)))  # fmt: skip
declare(Param("schedule", "choice", "ReMDM's remasking schedule: conf (the least confident, its LLaDA code's), "
              "cap or rescale (a count from sigma, drawn uniformly)", choices=("conf", "cap", "rescale"),
              label_default=False))  # fmt: skip
declare(Param("strategy", "choice", "ReMDM's strategy: loop (hold the masked count in a window) or switch "
              "(remask while unmasking)", choices=("loop", "switch"), label_default=False))  # fmt: skip
declare(Param("tr", "float", "NAVIRA's remasking temperature (0: the least probable token)", lo=0.0,
              ladder=(0.0, 0.1, 0.3, 1.0, 3.0)))  # fmt: skip


def _span(c: Candidates) -> np.ndarray:
    """Every place the decode writes (written or masked now), in sequence order."""
    assert c.written is not None and c.pos is not None
    return np.union1d(c.written.pos, c.pos)


def _rng(cfg: SamplerConfig, c: Candidates) -> np.random.Generator:
    """A draw that is a pure function of the state (LazyMaps may run a rule twice)."""
    assert c.written is not None and c.pos is not None
    return np.random.default_rng([cfg.seed, c.written.now, zlib.crc32(np.asarray(c.pos, np.int64).tobytes())])


class _Block:
    """The current block of a semi-autoregressive decode: the first holding a masked position."""

    def __init__(self, c: Candidates, block: int):
        span = _span(c)
        block = block or len(span)
        if block > len(span):
            raise InputError(f"block {block} is longer than the {len(span)} positions being decoded")
        w = c.written
        assert w is not None and c.pos is not None
        masked = np.isin(span, c.pos)
        self.index = int(np.argmax(masked)) // block  # the first block with a masked place
        self.places = span[self.index * block : (self.index + 1) * block]  # (n,)
        earlier = span[: self.index * block]
        self.start = int(w.step[earlier].max()) + 1 if len(earlier) else 1  # the block's first step
        self.pass_in = w.now - self.start  # 0-based pass inside the block
        self.cands = [i for i, p in enumerate(c.pos.tolist()) if p in set(self.places.tolist())]  # candidate indices
        self.written = [int(p) for p in self.places if p in set(w.pos.tolist())]


def _most_confident(c: Candidates, among: list[int], n: int) -> list[int]:
    assert c.probs is not None
    top = c.probs.max(-1)
    return sorted(sorted(among, key=lambda i: (-top[i], i))[: max(1, n)])


def select_llada(c: Candidates, cfg: SamplerConfig) -> list[int]:
    b = _Block(c, cfg.block)
    return _most_confident(c, b.cands, cfg.k)


def _remask_count(cfg: SamplerConfig, n_block: int, written_before: int, written_after: int) -> int:
    """ReMDM's count for a pass: nr (conf), or sigma x the block's written positions (cap, rescale)."""
    if cfg.schedule == "conf":
        return cfg.nr
    a_t, a_s = written_before / n_block, written_after / n_block
    sigma_max = 1.0 if a_t == 0 else min(1.0, (1 - a_s) / a_t)
    sigma = min(cfg.eta, sigma_max) if cfg.schedule == "cap" else cfg.eta * sigma_max
    return int(round(sigma * written_after))


def select_remdm(c: Candidates, cfg: SamplerConfig) -> Revision:
    b = _Block(c, cfg.block)
    w = c.written
    assert w is not None and c.pos is not None
    steps = math.ceil(len(b.places) / cfg.k)
    on = math.floor(cfg.t_on * steps)
    length = cfg.loop or steps
    j = b.pass_in
    if cfg.strategy == "loop":
        window = on <= j < on + length
        unmask = _most_confident(c, b.cands, cfg.nr if window and cfg.nr > 0 else cfg.k)
        remasking = on <= j + 1 < on + length
    else:
        if cfg.nr >= cfg.k:
            raise InputError(f"remdm's switch strategy masks nr = {cfg.nr} again a pass while writing k = {cfg.k}: "
                             "it needs nr < k to finish")  # fmt: skip
        unmask = _most_confident(c, b.cands, cfg.k)
        remasking = j + 1 >= on
    if not remasking:
        return Revision(unmask)
    now = [int(c.pos[i]) for i in unmask]
    pool = b.written + now  # the block's written positions after this pass's writes
    if len(pool) == len(b.places) and cfg.strategy == "switch":
        return Revision(unmask)  # the pass that completes a block under switch ends it
    n = min(_remask_count(cfg, len(b.places), len(b.written), len(pool)), len(pool))
    if cfg.strategy == "switch":
        n = min(n, len(unmask) - 1)  # fewer than it writes, so the block finishes
    if n <= 0:
        return Revision(unmask)
    if cfg.schedule == "conf":
        assert c.probs is not None
        conf = {p: w.conf[p] for p in b.written} | {int(c.pos[i]): float(c.probs[i].max()) for i in unmask}
        chosen = sorted(pool, key=lambda p: (conf[p], p))[:n]
    else:
        chosen = _rng(cfg, c).choice(pool, size=n, replace=False).tolist()
    return Revision(unmask, remask=sorted(int(p) for p in chosen))


def select_navira(c: Candidates, cfg: SamplerConfig) -> Revision:
    b = _Block(c, cfg.block)
    w = c.written
    assert w is not None and c.pos is not None
    unmask = _most_confident(c, b.cands, cfg.k)
    span = len(w.pos) + len(c.pos)
    left = math.floor(cfg.rho * span + 1e-9) - w.revised
    if len(w.pos) < cfg.t_on * span or left <= 0 or cfg.nr == 0 or len(w.pos) == 0:
        return Revision(unmask)
    assert w.score is not None, "decode scores the written tokens for a rule that reads 'written'"
    p = np.clip(np.nan_to_num(w.score[w.pos], nan=1.0), 1e-12, 1.0)  # (n,) this pass's score of each written token
    n = min(cfg.nr, left, len(w.pos))
    if cfg.tr == 0:
        chosen = w.pos[np.argsort(p, kind="stable")[:n]]
    else:
        logits = -np.log(p) / cfg.tr
        weights = np.exp(logits - logits.max())
        chosen = _rng(cfg, c).choice(w.pos, size=n, replace=False, p=weights / weights.sum())
    return Revision(unmask, remask=sorted(int(x) for x in chosen))


BLOCK = 0  # no block unless asked: the whole span one block (a CDR3 is 3-30 residues)
register(
    Sampler(
        "llada",
        "LLaDA's semi-autoregressive sampler: blocks left to right, the k most confident of the current block "
        "a pass; unmask-only",
        {"k": 2, "block": BLOCK},
        select_llada,
        reads=frozenset({"probs", "written"}),
        curve=("block",),
        help={"k": "positions written a pass inside the current block"},
    )
)
register(
    Sampler(
        "remdm",
        "ReMDM (Wang et al. 2025) on LLaDA's schedule: in a window of each block, written tokens masked again "
        "and re-predicted (schedule conf/cap/rescale, strategy loop/switch)",
        {
            "k": 2,
            "block": BLOCK,
            "nr": 1,
            "loop": 1,
            "t_on": 0.875,
            "eta": 0.04,
            "schedule": "conf",
            "strategy": "loop",
        },  # fmt: skip
        select_remdm,
        reads=frozenset({"probs", "written"}),
        revises=True,
        curve=("block", "schedule", "strategy"),
        help={"k": "positions written a pass outside the loop window"},
    )
)
register(
    Sampler(
        "navira",
        "NAVIRA (Fomenko et al. 2026): a pass scores the written tokens, nr drawn by a temperature are masked, "
        "the next pass regenerates them from the cleaned context",
        {"k": 2, "rho": 0.2, "block": BLOCK, "nr": 1, "t_on": 0.5, "tr": 0.3},
        select_navira,
        reads=frozenset({"probs", "written"}),
        revises=True,
        curve=("block",),
        help={"k": "positions written a pass", "rho": "most remasks a decode makes, as a share of its span"},
    )
)
