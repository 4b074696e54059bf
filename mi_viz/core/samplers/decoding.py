"""Decoding: any registered rule over many sequences at once, one backbone pass per step, and
the Trace of a decode (a StepRecord per pass) that the app scrubs and the benchmarks aggregate.
One code path serves both. A rule gets what it declares it reads (registry.READS) and nothing
else; no rule is special-cased here."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from .. import strict_json
from ..mi import MIRun, ground_truth_mi
from ..protocol import MaskedModel
from ..reading import read_state
from .registry import Candidates, Revision, Sampler, SamplerConfig, Written


@dataclass
class StepRecord:
    step: int  # 0-based index of this pass
    tokens: list[int]  # (L,) tokens BEFORE this step's writes
    masked: list[bool]  # (L,) masked before this step
    entropy: list[float]  # (L,) marginal entropy, 0 on unmasked
    probs: list[list[float]]  # (L, V) marginals
    # (L, L) the map the sampler used, if any: the MI, or DEMASK's TV for its rules (oracles: only the
    # pairs their rule could reach)
    mi: list[list[float]] | None
    selected: list[int]  # positions unmasked in this step
    values: list[int]  # token written at each selected position
    passes: int  # backbone passes so far, this one included
    oracle_passes: int = 0  # extra passes of the ground-truth oracle so far
    # a revising rule's remasks in this step (trace format 2): decoded positions set back to MASK after
    # the step's writes, and the token each held; a rule that only unmasks leaves both empty
    remasked: list[int] = field(default_factory=list)
    cleared: list[int] = field(default_factory=list)


TRACE_FORMAT = 2  # 1: unmask-only steps; 2: a step may remask (StepRecord.remasked / cleared)


@dataclass
class Trace:
    sampler: dict
    initial: list[int]  # (L,) starting tokens
    final: list[int]  # (L,) tokens at the end
    steps: list[StepRecord] = field(default_factory=list)
    meta: dict = field(default_factory=dict)
    format: int = TRACE_FORMAT  # a trace written before formats were numbered reads as 1

    def to_json(self) -> str:
        # the same document as strict_json.dumps(asdict(self)), without asdict's deep copy of every
        # step's (L, V) marginals (seconds for a long decode; the app serialises every trace)
        d = {
            "sampler": self.sampler,
            "initial": self.initial,
            "final": self.final,
            "steps": [vars(s) for s in self.steps],
            "meta": self.meta,
            "format": self.format,
        }
        return strict_json.dumps(d, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Trace:
        d = json.loads(text)
        d.setdefault("format", 1)
        if d["format"] > TRACE_FORMAT:
            raise ValueError(f"trace format {d['format']} is newer than this mi-viz reads ({TRACE_FORMAT})")
        d["steps"] = [StepRecord(**s) for s in d["steps"]]
        return cls(**d)

    @property
    def revised(self) -> int:
        """How many remasks the decode made (0 for a rule that only unmasks)."""
        return sum(len(s.remasked) for s in self.steps)

    def tokens_at(self, step: int) -> list[int]:
        """Tokens after `step` steps (0 = initial, len(steps) = final)."""
        return self.steps[step].tokens if step < len(self.steps) else self.final


# --------------------------------------------------------------------------- decode


@dataclass(frozen=True)
class Batching:
    """How a decode is run, never what it decodes (the tokens are the same for any value): rows per
    forward pass (memory), each row's random stream id (default its index, so that a row samples
    the same alone or in any batch, and a subset of a set as the whole set does), and a progress
    callback (positions written so far, positions masked at the start)."""

    batch_size: int = 256
    streams: list[int] | None = None
    progress: Callable[[int, int], None] | None = None


@dataclass
class DecodeResult:
    tokens: torch.Tensor  # (B, L) final tokens
    passes: torch.Tensor  # (B,) backbone passes per sequence
    oracle_passes: torch.Tensor  # (B,) extra ground-truth passes (mi-gt only)
    batch_sizes: list[list[int]]  # per sequence: positions unmasked at each step
    traces: list[Trace] | None  # when record=True
    seconds: float = 0.0
    states: list[torch.Tensor] | None = None  # keep_states: (B, L) tokens before each step
    revealed: np.ndarray | None = (
        None  # (B, L) the step (1-based, the sequence's own) that last wrote each position; 0 given
    )
    revised: np.ndarray | None = None  # (B,) remasks made per sequence (a revising rule's; else zeros)


def _round(x: torch.Tensor, nd: int = 5) -> Any:
    return np.round(x.detach().cpu().double().numpy(), nd).tolist()


def _check_head(cfg: SamplerConfig, head: Any) -> Any:
    """The head this rule reads (from a dict by the map it predicts), refused if absent or of the other map."""
    rule = cfg.rule
    if isinstance(head, dict):  # heads by the map they predict (models.load_models): this rule's own
        head = head.get(rule.head_kind)
    if rule.needs_head and head is None:
        raise ValueError(f"the {cfg.name!r} sampler reads a {rule.head_kind.upper()} head: give a head checkpoint")
    if rule.needs_head and getattr(head.config, "target", "mi") != rule.head_kind:
        raise ValueError(
            f"the {cfg.name!r} sampler reads a head trained on {rule.head_kind.upper()} maps, "
            f"not this {head.config.target.upper()} head"
        )
    return head


def _oracle_map(
    model: MaskedModel,
    cfg: SamplerConfig,
    x: torch.Tensor,
    logits: torch.Tensor,
    m_np: np.ndarray,
    H_np: np.ndarray,
    P_np: np.ndarray | None,
) -> tuple[torch.Tensor | None, torch.Tensor]:
    """An oracle rule's exact map of a batch (b, L, L), expanding only what its rule can admit
    (rule.reach): the same decisions as with the full map (tested) at a fraction of the passes;
    and the passes it spent per sequence (b,)."""
    rule = cfg.rule
    reach = torch.zeros(m_np.shape, dtype=torch.bool, device=x.device)  # (b, L)
    for r in range(len(m_np)):
        pos = np.nonzero(m_np[r])[0]
        probs = P_np[r][pos] if P_np is not None else None
        cand = [int(pos[i]) for i in rule.reach(H_np[r][pos], cfg, probs)] if rule.reach else pos.tolist()
        if len(cand) > 1:  # one position has no pairs: no passes
            reach[r, cand] = True
    gt = ground_truth_mi(model, x, eps=cfg.gt_eps, positions=reach, run=MIRun(base_logits=logits))
    return (gt.tv if "exact-tv" in rule.reads else gt.mi), gt.passes.cpu()  # zero outside reach x reach


class Unexpanded(Exception):
    """A rule read a lazy map at positions not expanded yet (LazyMaps.select expands them, asks again)."""

    def __init__(self, idx: list[int]):
        super().__init__(idx)
        self.idx = idx


class LazyMap:
    """One state's exact symmetrised map (the MI, or DEMASK's TV for a rule reading "exact-tv") over
    its m masked candidates, as far as it has been expanded. A rule reads it as it reads a dense map,
    M[c, S] (select_demask, select_mi); a read that needs a position not expanded raises Unexpanded."""

    def __init__(self, pos: np.ndarray):
        self.pos = pos  # (m,) the candidates' places in the sequence
        self.rows = np.zeros((len(pos), len(pos)))  # (m, m) directed: row i conditioned on pos[i]
        self.done = np.zeros(len(pos), dtype=bool)  # (m,) expanded
        self.passes = 0

    def __getitem__(self, key: tuple[int, Any]) -> np.ndarray:
        c, given = key
        S = np.atleast_1d(np.asarray(given, dtype=np.int64))
        need = [i for i in dict.fromkeys([int(c), *S.tolist()]) if not self.done[i]]
        if need:
            raise Unexpanded(need)
        return 0.5 * (self.rows[c, S] + self.rows[S, c])

    def dense(self, L: int) -> torch.Tensor:
        """(L, L) the symmetrised pairs it expanded (zero elsewhere): what a trace records."""
        sym = 0.5 * (self.rows + self.rows.T) * (self.done[:, None] & self.done[None, :])
        out = np.zeros((L, L))
        out[np.ix_(self.pos, self.pos)] = sym
        return torch.from_numpy(out)


class LazyMaps:
    """A batch's exact maps, a position's conditioned passes run only when its rule first reads a pair
    holding it. A greedy scan=stop rule reads its batch and the candidate that ends it, so a step costs
    those positions' passes, not every masked position's (DEMASK with its confidence bar off could
    reach all of them: the Sudoku TV oracle would expand every empty cell at every step). Each pair is
    the number the full map holds: I_{i->j} and D_{i->j} need only the passes conditioning on i
    (core/mi.py; tests compare the decodes). Every state's rule runs; the positions all of them read
    unexpanded are expanded in one batched ground truth; the rules run again, until none asks for more
    (as many rounds as the largest batch, plus one). So a lazy oracle's select may run several times a
    step: it must be a pure function of its Candidates, as every registered rule is."""

    def __init__(
        self, model: MaskedModel, x: torch.Tensor, logits: torch.Tensor, m_np: np.ndarray, eps: float, tv: bool
    ) -> None:
        self.model, self.x, self.logits, self.eps, self.tv = model, x, logits, eps, tv  # (b, L), (b, L, V)
        self.maps = [LazyMap(np.nonzero(m)[0]) for m in m_np]

    def select(self, rule: Sampler, cands: list[Candidates], cfg: SamplerConfig) -> list[list[int]]:
        picks: list[list[int]] = [[] for _ in cands]
        todo = list(range(len(cands)))
        while todo:
            need: dict[int, list[int]] = {}
            for r in todo:
                try:
                    picks[r] = rule.select(cands[r], cfg)
                except Unexpanded as e:
                    need[r] = e.idx
            if need:
                self._expand(need)
            todo = list(need)
        return picks

    def _expand(self, need: dict[int, list[int]]) -> None:
        rows = sorted(need)
        scope = torch.zeros(len(rows), self.x.shape[1], dtype=torch.bool)  # (n, L)
        for k, r in enumerate(rows):
            scope[k, torch.as_tensor(self.maps[r].pos[need[r]])] = True
        at = torch.as_tensor(rows, device=self.x.device)
        gt = ground_truth_mi(self.model, self.x[at], eps=self.eps, positions=scope.to(self.x.device), tv=self.tv,
                             rows=True, run=MIRun(base_logits=self.logits[at]))  # fmt: skip
        d = gt.extra["tv_directed64" if self.tv else "directed64"].cpu().numpy()  # (n, L, L)
        for k, r in enumerate(rows):
            m, new = self.maps[r], need[r]
            m.rows[new] = d[k][np.ix_(m.pos[new], m.pos)]
            m.done[new] = True
            m.passes += int(gt.passes[k])


def _draw(logits: torch.Tensor, cfg: SamplerConfig, idx: torch.Tensor, gens: list[torch.Generator]) -> torch.Tensor:
    """Every masked position's value (b, L): argmax, or a draw from each sequence's own stream at
    temperature > 0 (batched == one by one)."""
    if cfg.temperature <= 0:
        return logits.argmax(-1).cpu()
    probs_t = torch.softmax(logits.cpu() / cfg.temperature, -1)  # (b, L, V)
    return torch.stack(
        [torch.multinomial(probs_t[r], 1, generator=gens[int(idx[r])]).squeeze(1) for r in range(len(idx))]
    )


@dataclass
class _State:
    """What a decode keeps while it runs, per sequence (B of them, L positions)."""

    tokens: torch.Tensor  # (B, L) on the model's device
    passes: torch.Tensor  # (B,)
    oracle: torch.Tensor  # (B,)
    sizes: list[list[int]]  # positions unmasked at each of a sequence's steps
    revealed: np.ndarray  # (B, L) the step (1-based) that wrote each position; 0: given
    committed: np.ndarray  # (B, L) the probability a position was unmasked with (DAWN's anchors); nan while masked
    prev: dict[int, np.ndarray]  # sequence -> its marginals (L, V) one pass earlier ("prev")
    traces: list[Trace]
    # what a revising rule reads ("written"; kept for the others too, unread): (B, L) times each position
    # was written, the top probability of its marginal when last written (nan while masked or given), the
    # step a rule marked it at (0: unmarked); and (B,) remasks so far
    times: np.ndarray
    conf: np.ndarray
    marked: np.ndarray
    revised: np.ndarray


def _written(st: _State, b: int, masked: np.ndarray, score: np.ndarray | None) -> Written:
    """Sequence b's decoded positions (written and not masked again) as a revising rule reads them;
    score (L,): this pass's probability of each position's current token (nan where masked)."""
    pos = np.nonzero((st.times[b] > 0) & ~masked)[0]
    return Written(pos, st.revealed[b].copy(), st.conf[b].copy(), st.times[b].copy(), st.marked[b].copy(),
                   int(st.revised[b]), len(st.sizes[b]) + 1, score)  # fmt: skip


def _token_scores(P: np.ndarray, x: torch.Tensor, vt: torch.Tensor, masked: np.ndarray) -> np.ndarray:
    """(b, L) the probability P (b, L, V) gives each position's current token x (b, L); nan where masked
    or where the token is not a value (a special token of the context)."""
    index = {int(t): i for i, t in enumerate(vt.tolist())}
    idx = np.array([[index.get(int(t), -1) for t in row] for row in x.cpu().tolist()])  # (b, L)
    got = np.take_along_axis(P, np.maximum(idx, 0)[..., None], -1)[..., 0]
    return np.where((idx >= 0) & ~masked, got, np.nan)


def _step_batch(
    model: MaskedModel,
    st: _State,
    idx: torch.Tensor,
    cfg: SamplerConfig,
    head: Any,
    gens: list[torch.Generator],
    record: bool,
) -> None:
    """One backbone pass over the sequences idx (b,) and each one's selection and writes."""
    rule = cfg.rule
    vt = model.value_tokens.cpu()  # selection runs on the CPU
    wants_attention = "attention" in rule.reads
    wants_probs = bool({"probs", "prev", "attention"} & rule.reads)
    x = st.tokens[idx]  # (b, L)
    # one pass; with an mi rule the head reads the same pass (read_state)
    rd = read_state(model, x, head if rule.needs_head else None, attention=wants_attention)
    A_np = rd.attention.cpu().double().numpy() if rd.attention is not None else None  # (b, L, L)
    out, masked, H, MI = rd.out, rd.masked, rd.entropy, rd.mi  # (b, L), (b, L), (b, L, L) or None
    logits = out.logits.float()  # (b, L, V)
    st.passes[idx.cpu()] += 1
    H_np = H.cpu().double().numpy()  # (b, L)
    m_np = masked.cpu().numpy()  # (b, L)
    P_np = torch.softmax(logits, -1).cpu().double().numpy() if wants_probs else None  # (b, L, V)
    revises = "written" in rule.reads
    scores = _token_scores(P_np, x, vt, m_np) if revises and P_np is not None else None  # (b, L)
    lazy = None
    if rule.is_oracle and rule.lazy:
        lazy = LazyMaps(model, x, out.logits, m_np, cfg.gt_eps, tv="exact-tv" in rule.reads)
    elif rule.is_oracle:
        MI, spent = _oracle_map(model, cfg, x, out.logits, m_np, H_np, P_np)
        st.oracle[idx.cpu()] += spent
    vals = _draw(logits, cfg, idx, gens)  # (b, L)
    MI_np = MI.cpu().double().numpy() if MI is not None else None
    cands, places = [], []
    for r in range(idx.numel()):
        b = int(idx[r])
        pos = np.nonzero(m_np[r])[0]
        places.append(pos)
        cands.append(
            Candidates(
                H=H_np[r][pos],
                MI=lazy.maps[r] if lazy else MI_np[r][np.ix_(pos, pos)] if MI_np is not None else None,
                probs=P_np[r][pos] if P_np is not None else None,
                pos=pos,
                prev=st.prev[b][pos] if b in st.prev else None,
                attention=A_np[r] if A_np is not None else None,
                committed=st.committed[b] if wants_attention else None,
                written=_written(st, b, m_np[r], scores[r] if scores is not None else None) if revises else None,
            )
        )
    picks = lazy.select(rule, cands, cfg) if lazy else [rule.select(c, cfg) for c in cands]
    for r in range(idx.numel()):
        b = int(idx[r])
        pick = picks[r]
        rev = pick if isinstance(pick, Revision) else Revision(list(pick))
        if not rev.unmask:
            raise RuntimeError(f"the {cfg.name!r} rule unmasked nothing: a step must write at least one position")
        chosen = [int(places[r][i]) for i in rev.unmask]
        remask = sorted(int(p) for p in rev.remask)
        shown = cands[r].written
        if remask and (shown is None or not np.isin(remask, [*shown.pos.tolist(), *chosen]).all()):
            raise RuntimeError(f"the {cfg.name!r} rule remasked a position neither written nor being written: {remask}")
        if lazy:
            st.oracle[b] += lazy.maps[r].passes
        if "prev" in rule.reads and P_np is not None:
            st.prev[b] = P_np[r]
        written = [int(vt[vals[r, c]]) for c in chosen]
        if record:
            st.traces[b].steps.append(
                StepRecord(
                    step=len(st.traces[b].steps),
                    tokens=x[r].tolist(),
                    masked=m_np[r].tolist(),
                    entropy=_round(H[r]),
                    probs=_round(torch.softmax(logits[r], -1), 4),
                    mi=_round(lazy.maps[r].dense(len(x[r]))) if lazy else _round(MI[r]) if MI is not None else None,
                    selected=chosen,
                    values=written,
                    passes=int(st.passes[b]),
                    oracle_passes=int(st.oracle[b]),
                    remasked=remask,
                    cleared=[],  # filled below, after this step's writes (a deferred position holds its new one)
                )
            )
        st.tokens[b, chosen] = torch.tensor(written, device=st.tokens.device)
        if record and remask:
            st.traces[b].steps[-1].cleared = st.tokens[b, remask].tolist()
        if wants_attention and P_np is not None:
            st.committed[b, chosen] = P_np[r, chosen, vals[r, chosen].numpy()]
        st.sizes[b].append(len(chosen))
        st.revealed[b, chosen] = len(st.sizes[b])
        if revises:  # a revising rule's memory: what was written, how surely, what it marked
            st.times[b, chosen] += 1
            st.conf[b, chosen] = P_np[r, chosen].max(-1) if P_np is not None else np.nan
            st.marked[b, chosen] = 0
            st.marked[b, [int(places[r][i]) for i in rev.mark]] = len(st.sizes[b])
            if remask:
                st.tokens[b, remask] = model.mask_id
                st.marked[b, remask] = 0
                st.conf[b, remask] = np.nan
                st.revised[b] += len(remask)
                if wants_attention:
                    st.committed[b, remask] = np.nan


# inference_mode, not no_grad: it skips autograd bookkeeping, a visible share of the head's small ops at batch 1
@torch.inference_mode()
def decode(
    model: MaskedModel,
    tokens: torch.Tensor,  # (B, L) starting tokens, mask_id where masked
    cfg: SamplerConfig,
    head: Any = None,
    record: bool = False,
    max_steps: int | None = None,
    keep_states: bool = False,
    run: Batching = Batching(),
) -> DecodeResult:
    """Decode every sequence until nothing is masked, all in lock-step batches.

    Finished sequences drop out of the batch; each keeps its own batch sizes, and with
    temperature > 0 each draws its values from its own random stream (seeded by cfg.seed and
    run.streams[b], default b), so the result equals decoding them one by one with the same
    stream ids (tests check both).
    """
    t0 = time.perf_counter()
    head = _check_head(cfg, head)
    B, L = tokens.shape
    mask_id = model.mask_id
    ids = list(range(B)) if run.streams is None else [int(i) for i in run.streams]
    if len(ids) != B:
        raise ValueError(f"{len(ids)} stream ids for {B} sequences")
    gens = (
        [torch.Generator(device="cpu").manual_seed(cfg.seed * 1_000_003 + i) for i in ids]
        if cfg.temperature > 0
        else []
    )
    st = _State(
        tokens=tokens.clone(),  # on the model's device: the caller puts it there
        passes=torch.zeros(B, dtype=torch.long),
        oracle=torch.zeros(B, dtype=torch.long),
        sizes=[[] for _ in range(B)],
        revealed=np.zeros((B, L), dtype=np.int64),
        committed=np.where((tokens == mask_id).cpu().numpy(), np.nan, 1.0),
        prev={},
        traces=[Trace(cfg.to_dict(), tokens[b].tolist(), []) for b in range(B)] if record else [],
        times=np.zeros((B, L), dtype=np.int64),
        conf=np.full((B, L), np.nan),
        marked=np.zeros((B, L), dtype=np.int64),
        revised=np.zeros(B, dtype=np.int64),
    )
    total_masked = int((tokens == mask_id).sum())
    step = 0
    states: list[torch.Tensor] = []
    while True:
        active = (st.tokens == mask_id).any(1).nonzero().squeeze(1)  # (A,)
        if active.numel() == 0 or (max_steps is not None and step >= max_steps):
            break
        if step > 4 * L + 16:  # only a rule that remasks without end gets here
            raise RuntimeError(f"the {cfg.name!r} rule has not finished after {step} passes over {L} positions")
        if keep_states:
            states.append(st.tokens.cpu().clone())
        for s in range(0, active.numel(), run.batch_size):
            _step_batch(model, st, active[s : s + run.batch_size], cfg, head, gens, record)
        step += 1
        if run.progress is not None:
            run.progress(total_masked - int((st.tokens == mask_id).sum()), total_masked)
    if record:
        for b in range(B):
            st.traces[b].final = st.tokens[b].tolist()
    return DecodeResult(
        st.tokens.cpu(),
        st.passes,
        st.oracle,
        st.sizes,
        st.traces if record else None,
        time.perf_counter() - t0,
        states if keep_states else None,
        st.revealed,
        st.revised,
    )
