"""Samplers: which masked positions to unmask together, one registry, one step API.

Every sampler sees, per state, its masked positions as Candidates: their marginal entropies,
their marginals, their places in the sequence, the marginals they had one pass earlier (for
KLASS) and, for the MI samplers, the pairwise MI among them; it returns the batch to unmask
in this pass. `decode` runs any sampler over many sequences at once (each keeps its own batch
sizes) and, when asked, records a StepRecord per step: the app scrubs that Trace, the
benchmark aggregates many. One code path serves both.

Rules (H = marginal entropy in nats; "entropy order" = ascending, most confident first; every
rule takes at least one position per pass). docs/samplers.md has each rule with its citation
and a worked case.

- sequential: the single lowest-entropy position.
- topk (k): the k lowest-entropy positions.
- eb (gamma): EB-Sampler (Ben-Hamu et al. 2025). The largest prefix U of the entropy order
  with sum(H_U) - max(H_U) <= gamma.
- mi / mi-gt (gamma, lam): MI-guided, as the paper parameterises it (rule version 4). The
  positions are scanned in entropy order; the first is always taken and charged its entropy
  H_1; a candidate c joins the batch S if, with what the batch has already spent,

      spent + H_c + lam * sum_{j in S} I_cj  <  gamma      (then spent += H_c + lam * sum I_cj)

  gamma is the budget in nats, lam weighs the MI (the entropy is charged at weight 1).
  scan="stop" (default): the first rejected candidate ends the batch, so it is a prefix of the
  entropy order; scan="skip": it is skipped and the scan goes on. gamma = 0 is sequential;
  lam = 0 is a pure entropy budget (mi-zero). `mi` reads I from the MI head (same backbone
  pass, no extra passes); `mi-gt` from ground_truth_mi (an oracle: its passes are counted
  apart as oracle_passes, and only the positions the rule can reach are expanded).
- mi-zero (gamma): the mi rule with I = 0: the entropy budget alone (an ablation).
- mi-tc (gamma, lam): the mi rule charging each candidate its *largest* MI to the batch,
  lam * max_{j in S} I_cj, instead of the sum. The batch's total correlation (the KL from
  the joint to the product of marginals, what independent unmasking loses) is at least the
  MI along any spanning tree and the greedy max-MI charges sum to such a tree (Chow-Liu), so
  mi-tc budgets a lower bound of it where mi budgets the pairwise sum.
- mi-cap (k, gamma, lam): the mi rule with at most k positions a pass (its first k). An
  entropy budget takes its largest batches first, when nothing is observed and positions
  depend most; on protein families that front-loading costs the pair statistics top-k keeps
  (docs/results-family.md). With a cap, mi is top-k that stops early at a dependent candidate.
- mi-pairs (gamma, lam): the MI rule of releases up to 0.3 (rule version 3): the first position
  free, then cost(S) = sum_{a<b in S} I_ab + lam * sum_{a in S, a != s1} H_a < gamma, i.e.
  gamma a budget on the batch's pair MI and lam the weight of the entropy. Up to the first
  position's charge it is the mi rule at gamma / lam with lam' = 1 / lam (docs/samplers.md).
- threshold (tau): Fast-dLLM's parallel decoding (Wu et al. 2025): every position whose top
  probability is >= tau.
- margin (k, tau): top-probability margin (Kim et al. 2025): order by p1 - p2, the top two
  probabilities, largest first; the k largest, or with tau every position with p1 - p2 >= tau.
- klass (tau, kl): KL-adaptive stability (KLASS, 2025): positions whose top probability is
  >= tau and whose marginal moved little since the previous pass, KL(p_t || p_{t-1}) <= kl
  (at the first pass, confidence alone).
- dilated (k, d): dilated unmasking in the spirit of DUS (2025): up to k positions in entropy
  order, each at least d positions from every other one in the batch (neighbours in a
  sequence are the most dependent).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np
import torch

from . import strict_json
from .mi import ground_truth_mi
from .reading import read_state

# --------------------------------------------------------------------------- config

PARAMS = ("k", "gamma", "lam", "tau", "kl", "d", "scan")  # every rule parameter SamplerConfig knows


@dataclass
class SamplerConfig:
    name: str = "sequential"  # a key of SAMPLERS
    gamma: float | None = None  # budget (nats) for eb / mi / mi-gt / mi-zero / mi-tc / mi-pairs
    lam: float | None = None  # mi / mi-gt / mi-tc: weight of the MI; mi-pairs: weight of the entropy
    k: int | None = None  # batch size for topk / margin / dilated; the cap of mi-cap
    temperature: float = 0.0  # 0 = argmax value; > 0 samples softmax(logits / T)
    seed: int = 0  # for temperature sampling (each sequence draws from its own stream: seed, index)
    gt_eps: float = 1e-3  # pruning tolerance of the ground-truth MI (mi-gt)
    scan: str | None = None  # mi rules: "stop" at the first rejected candidate, or "skip" it
    tau: float | None = None  # threshold / klass: top probability; margin: p1 - p2
    kl: float | None = None  # klass: largest KL(p_t || p_{t-1}) of a stable position (nats)
    d: int | None = None  # dilated: least distance between two positions of a batch

    def __post_init__(self):
        if self.name not in SAMPLERS:
            raise ValueError(f"unknown sampler {self.name!r}; choose from {sorted(SAMPLERS)}")
        spec = SAMPLERS[self.name]
        for p, default in spec.defaults.items():
            if getattr(self, p) is None:
                setattr(self, p, default)
        for p in PARAMS:
            if p not in spec.defaults:
                setattr(self, p, None)
        for p in ("gamma", "lam", "tau", "kl", "temperature", "gt_eps"):
            v = getattr(self, p)
            if v is not None and not math.isfinite(float(v)):
                raise ValueError(f"{p} must be a finite number, not {v!r}")
        if self.scan is not None and self.scan not in ("stop", "skip"):
            raise ValueError(f"scan must be 'stop' or 'skip', not {self.scan!r}")
        for p in ("k", "d"):
            if getattr(self, p) is not None and getattr(self, p) < 1:
                raise ValueError(f"{p} must be >= 1")
        for p in ("gamma", "lam", "kl"):
            if getattr(self, p) is not None and getattr(self, p) < 0:
                raise ValueError(f"{p} must be >= 0")
        if self.tau is not None and not 0 <= self.tau <= 1:
            raise ValueError("tau must be in [0, 1]")
        if self.temperature < 0:
            raise ValueError("temperature must be >= 0")

    @property
    def needs(self) -> str | None:
        return SAMPLERS[self.name].needs

    def label(self) -> str:
        parts = [self.name]
        for p in ("k", "gamma", "lam", "tau", "kl", "d"):
            v = getattr(self, p)
            if v is not None:
                parts.append(f"{p}={v:g}")
        if self.scan == "skip":  # the default (stop) stays implicit
            parts.append("scan=skip")
        return " ".join(parts)


# --------------------------------------------------------------------------- rules


@dataclass
class Candidates:
    """What a rule sees of one state's m masked positions (indices 0..m-1 into these arrays)."""

    H: np.ndarray  # (m,) marginal entropies, nats
    MI: np.ndarray | None = None  # (m, m) pairwise MI, or None (a rule that reads none, or I = 0)
    probs: np.ndarray | None = None  # (m, V) marginals
    pos: np.ndarray | None = None  # (m,) places in the sequence
    prev: np.ndarray | None = None  # (m, V) the same positions' marginals one pass earlier (None: first pass)


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


def select_mi(
    H: np.ndarray, MI: np.ndarray | None, gamma: float, lam: float, scan: str = "stop", charge: str = "sum"
) -> list[int]:
    """The paper's MI rule (module docstring): H (m,), MI (m, m) or None (I = 0). charge="sum"
    charges lam * sum_{j in S} I_cj (mi), "max" lam * max_{j in S} I_cj (mi-tc)."""
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


# of the mi rules (mi, mi-gt, mi-zero, mi-tc, mi-cap); sweep rows record it so --resume never mixes rules
RULE_VERSION = 4
PAIRS_RULE_VERSION = 3  # mi-pairs: the rule that was "mi" in releases up to 0.3


@dataclass
class SamplerSpec:
    defaults: dict  # parameters this sampler takes, with defaults
    needs: str | None  # None, "mi" (head) or "mi-gt" (ground truth)
    select: Callable  # (Candidates, SamplerConfig) -> list of indices into the candidates
    version: int = 1  # of the selection rule: recorded in sweep rows
    reach: str | None = None  # the MI rule whose mi_rule_reach bounds what it can admit (mi-gt)
    curve: tuple[str, ...] = ("lam",)  # parameters that name a sweep curve; the others move along it


SAMPLERS: dict[str, SamplerSpec] = {
    "sequential": SamplerSpec({}, None, lambda c, cfg: select_topk(c.H, 1)),
    "topk": SamplerSpec({"k": 4}, None, lambda c, cfg: select_topk(c.H, cfg.k)),
    "eb": SamplerSpec({"gamma": 0.2}, None, lambda c, cfg: select_eb(c.H, cfg.gamma)),
    # neutral starting values: each domain sets its own (Domain.sampler_defaults, chosen on its validation data)
    "mi": SamplerSpec(
        {"gamma": 1.0, "lam": 1.0, "scan": "stop"},
        "mi",
        lambda c, cfg: select_mi(c.H, c.MI, cfg.gamma, cfg.lam, cfg.scan),
        RULE_VERSION,
    ),
    "mi-gt": SamplerSpec(
        {"gamma": 1.0, "lam": 1.0, "scan": "stop"},
        "mi-gt",
        lambda c, cfg: select_mi(c.H, c.MI, cfg.gamma, cfg.lam, cfg.scan),
        RULE_VERSION,
        reach="mi",
    ),
    "mi-zero": SamplerSpec({"gamma": 1.0}, None, lambda c, cfg: select_mi(c.H, None, cfg.gamma, 0.0), RULE_VERSION),
    "mi-tc": SamplerSpec(
        {"gamma": 1.0, "lam": 1.0, "scan": "stop"},
        "mi",
        lambda c, cfg: select_mi(c.H, c.MI, cfg.gamma, cfg.lam, cfg.scan, charge="max"),
        RULE_VERSION,
    ),
    # the setting measured on the protein families (docs/results-family.md): gamma well above what
    # 8 columns' entropies cost, so the batch ends where lambda x MI breaks the budget, or at k
    "mi-cap": SamplerSpec(
        {"k": 8, "gamma": 32.0, "lam": 300.0, "scan": "stop"},
        "mi",
        lambda c, cfg: select_mi(c.H, c.MI, cfg.gamma, cfg.lam, cfg.scan)[: cfg.k],
        RULE_VERSION,
        curve=("k",),  # its front moves along lambda at a fixed cap
    ),
    "mi-pairs": SamplerSpec(
        {"gamma": 0.01, "lam": 0.25, "scan": "stop"},
        "mi",
        lambda c, cfg: select_mi_pairs(c.H, c.MI, cfg.gamma, cfg.lam, cfg.scan),
        PAIRS_RULE_VERSION,
    ),
    "threshold": SamplerSpec({"tau": 0.9}, None, lambda c, cfg: select_threshold(c.probs, cfg.tau)),
    "margin": SamplerSpec({"k": 4, "tau": None}, None, lambda c, cfg: select_margin(c.probs, cfg.k, cfg.tau)),
    "klass": SamplerSpec({"tau": 0.9, "kl": 0.01}, None, lambda c, cfg: select_klass(c.probs, c.prev, cfg.tau, cfg.kl)),
    "dilated": SamplerSpec({"k": 4, "d": 3}, None, lambda c, cfg: select_dilated(c.H, c.pos, cfg.k, cfg.d)),
}


def row_label(row: dict) -> str:
    """A results row's setting as SamplerConfig.label() writes it (a sweep.csv line read as text,
    or a summary), plus "(rule 3)" on mi-gt / mi-zero rows made under the rule that release 0.3
    called mi (the rule-4 rows share their names)."""
    parts = [str(row["sampler"])]
    for k in ("k", "gamma", "lam", "tau", "kl", "d"):
        if row.get(k) not in ("", None):
            parts.append(f"{k}={float(row[k]):g}")
    if row.get("scan") == "skip":
        parts.append("scan=skip")
    if row["sampler"] in ("mi-gt", "mi-zero") and str(row.get("rule_version")) == str(PAIRS_RULE_VERSION):
        parts.append("(rule 3)")
    return " ".join(parts)


def defaults_for(name: str, domain_defaults: dict | None = None) -> dict:
    """The parameters sampler `name` takes, with their defaults in a domain: the registry's,
    overridden by the domain's own (Domain.sampler_defaults)."""
    return {**SAMPLERS[name].defaults, **(domain_defaults or {}).get(name, {})}


def config_for(name: str, domain_defaults: dict | None = None, **given) -> SamplerConfig:
    """A SamplerConfig whose parameters left None in `given` take the domain's defaults."""
    if name not in SAMPLERS:
        raise ValueError(f"unknown sampler {name!r}; choose from {sorted(SAMPLERS)}")
    d = {k: v for k, v in (domain_defaults or {}).get(name, {}).items() if k in SAMPLERS[name].defaults}
    d.update({k: v for k, v in given.items() if v is not None})
    return SamplerConfig(name, **d)


# --------------------------------------------------------------------------- trace


@dataclass
class StepRecord:
    step: int  # 0-based index of this pass
    tokens: list[int]  # (L,) tokens BEFORE this step's writes
    masked: list[bool]  # (L,) masked before this step
    entropy: list[float]  # (L,) marginal entropy, 0 on unmasked
    probs: list[list[float]]  # (L, V) marginals
    mi: (
        list[list[float]] | None
    )  # (L, L) the MI map the sampler used, if any (mi-gt: only the pairs its rule could reach)
    selected: list[int]  # positions unmasked in this step
    values: list[int]  # token written at each selected position
    passes: int  # backbone passes so far, this one included
    oracle_passes: int = 0  # extra passes of the ground-truth oracle so far


@dataclass
class Trace:
    sampler: dict
    initial: list[int]  # (L,) starting tokens
    final: list[int]  # (L,) tokens at the end
    steps: list[StepRecord] = field(default_factory=list)
    meta: dict = field(default_factory=dict)

    def to_json(self) -> str:
        # the same document as strict_json.dumps(asdict(self)), without asdict's deep copy of every
        # step's (L, V) marginals (seconds for a long decode; the app serialises every trace)
        d = {
            "sampler": self.sampler,
            "initial": self.initial,
            "final": self.final,
            "steps": [vars(s) for s in self.steps],
            "meta": self.meta,
        }
        return strict_json.dumps(d, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Trace:
        d = json.loads(text)
        d["steps"] = [StepRecord(**s) for s in d["steps"]]
        return cls(**d)

    def tokens_at(self, step: int) -> list[int]:
        """Tokens after `step` steps (0 = initial, len(steps) = final)."""
        return self.steps[step].tokens if step < len(self.steps) else self.final


# --------------------------------------------------------------------------- decode


@dataclass
class DecodeResult:
    tokens: torch.Tensor  # (B, L) final tokens
    passes: torch.Tensor  # (B,) backbone passes per sequence
    oracle_passes: torch.Tensor  # (B,) extra ground-truth passes (mi-gt only)
    batch_sizes: list[list[int]]  # per sequence: positions unmasked at each step
    traces: list[Trace] | None  # when record=True
    seconds: float = 0.0
    states: list[torch.Tensor] | None = None  # keep_states: (B, L) tokens before each step


def _round(x: torch.Tensor, nd: int = 5):
    return np.round(x.detach().cpu().double().numpy(), nd).tolist()


# inference_mode, not no_grad: it skips autograd bookkeeping, a visible share of the head's small ops at batch 1
@torch.inference_mode()
def decode(
    model,
    tokens: torch.Tensor,  # (B, L) starting tokens, mask_id where masked
    cfg: SamplerConfig,
    head=None,
    record: bool = False,
    batch_size: int = 256,
    max_steps: int | None = None,
    keep_states: bool = False,
    progress: Callable[[int, int], None] | None = None,
    streams: list[int] | None = None,
) -> DecodeResult:
    """Decode every sequence until nothing is masked, all in lock-step batches.

    Finished sequences drop out of the batch; each keeps its own batch sizes, and with
    temperature > 0 each draws its values from its own random stream (seeded by cfg.seed and
    streams[b], default b), so the result equals decoding them one by one with the same
    stream ids (tests check both).
    """
    import time

    t0 = time.perf_counter()
    if cfg.needs == "mi" and head is None:
        raise ValueError("the 'mi' sampler needs an MI head checkpoint")
    tokens = tokens.clone()  # on the model's device: the caller puts it there
    dev = tokens.device
    B, L = tokens.shape
    mask_id = model.mask_id
    vt = model.value_tokens.cpu()  # selection runs on the CPU
    passes = torch.zeros(B, dtype=torch.long)
    oracle = torch.zeros(B, dtype=torch.long)
    sizes: list[list[int]] = [[] for _ in range(B)]
    traces = [Trace(asdict(cfg), tokens[b].tolist(), []) for b in range(B)] if record else []
    ids = list(range(B)) if streams is None else [int(i) for i in streams]
    if len(ids) != B:
        raise ValueError(f"{len(ids)} stream ids for {B} sequences")
    gens = (
        [torch.Generator(device="cpu").manual_seed(cfg.seed * 1_000_003 + i) for i in ids]
        if cfg.temperature > 0
        else []
    )
    prev: dict[int, np.ndarray] = {}  # sequence -> its marginals (L, V) at its previous pass (klass)
    wants_probs = cfg.name in ("threshold", "margin", "klass")
    total_masked = int((tokens == mask_id).sum())
    step = 0
    states: list[torch.Tensor] = []
    while True:
        active = (tokens == mask_id).any(1).nonzero().squeeze(1)  # (A,)
        if active.numel() == 0 or (max_steps is not None and step >= max_steps):
            break
        if keep_states:
            states.append(tokens.cpu().clone())
        for s in range(0, active.numel(), batch_size):
            idx = active[s : s + batch_size]
            x = tokens[idx]  # (b, L)
            # one pass; with the mi sampler the head reads the same pass (read_state)
            rd = read_state(model, x, head if cfg.needs == "mi" else None)
            out, masked, H, MI = rd.out, rd.masked, rd.entropy, rd.mi  # (b, L), (b, L), (b, L, L) or None
            logits = out.logits.float()  # (b, L, V)
            passes[idx.cpu()] += 1
            H_np = H.cpu().double().numpy()  # (b, L) selection runs on the CPU
            m_np = masked.cpu().numpy()  # (b, L)
            if cfg.needs == "mi-gt":
                # expand only what the rule can admit (mi_rule_reach): the same decisions as
                # with the full map (tested) at a fraction of the oracle passes
                reach = torch.zeros_like(masked)  # (b, L)
                rule = SAMPLERS[cfg.name].reach or "mi"
                for r in range(idx.numel()):
                    pos = np.nonzero(m_np[r])[0]
                    g, lam, scan = cfg.gamma or 0.0, cfg.lam or 0.0, cfg.scan or "stop"  # set for every mi rule
                    cand = [int(pos[i]) for i in mi_rule_reach(H_np[r][pos], g, lam, scan, rule)]
                    if len(cand) > 1:  # one position has no pairs: no passes
                        reach[r, cand] = True
                gt = ground_truth_mi(model, x, eps=cfg.gt_eps, base_logits=out.logits, positions=reach)
                MI = gt.mi  # zero outside reach x reach
                oracle[idx.cpu()] += gt.passes.cpu()
            if cfg.temperature > 0:  # each sequence from its own stream (batched == one by one)
                probs_t = torch.softmax(logits.cpu() / cfg.temperature, -1)  # (b, L, V)
                vals = torch.stack(
                    [torch.multinomial(probs_t[r], 1, generator=gens[int(idx[r])]).squeeze(1) for r in range(len(idx))]
                )  # (b, L)
            else:
                vals = logits.argmax(-1).cpu()  # (b, L)
            MI_np = MI.cpu().double().numpy() if MI is not None else None
            P_np = torch.softmax(logits, -1).cpu().double().numpy() if wants_probs else None  # (b, L, V)
            for r in range(idx.numel()):
                b = int(idx[r])
                pos = np.nonzero(m_np[r])[0]
                cands = Candidates(
                    H=H_np[r][pos],
                    MI=MI_np[r][np.ix_(pos, pos)] if MI_np is not None else None,
                    probs=P_np[r][pos] if P_np is not None else None,
                    pos=pos,
                    prev=prev[b][pos] if b in prev else None,
                )
                chosen = [int(pos[i]) for i in SAMPLERS[cfg.name].select(cands, cfg)]
                if cfg.name == "klass" and P_np is not None:
                    prev[b] = P_np[r]
                written = [int(vt[vals[r, c]]) for c in chosen]
                if record:
                    traces[b].steps.append(
                        StepRecord(
                            step=len(traces[b].steps),
                            tokens=x[r].tolist(),
                            masked=m_np[r].tolist(),
                            entropy=_round(H[r]),
                            probs=_round(torch.softmax(logits[r], -1), 4),
                            mi=_round(MI[r]) if MI is not None else None,
                            selected=chosen,
                            values=written,
                            passes=int(passes[b]),
                            oracle_passes=int(oracle[b]),
                        )
                    )
                tokens[b, chosen] = torch.tensor(written, device=dev)
                sizes[b].append(len(chosen))
        step += 1
        if progress is not None:
            progress(total_masked - int((tokens == mask_id).sum()), total_masked)
    if record:
        for b in range(B):
            traces[b].final = tokens[b].tolist()
    return DecodeResult(
        tokens.cpu(),
        passes,
        oracle,
        sizes,
        traces if record else None,
        time.perf_counter() - t0,
        states if keep_states else None,
    )
