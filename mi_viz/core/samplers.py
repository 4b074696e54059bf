"""Samplers: which masked positions to unmask together, one registry, one step API.

Every sampler sees, per state, the masked positions' marginal entropies (and,
for the MI samplers, the pairwise MI among them) and returns the batch to
unmask in this pass. `decode` runs any sampler over many puzzles at once
(each puzzle keeps its own batch sizes) and, when asked, records a StepRecord
per step: the app scrubs that Trace, the benchmark aggregates many. One code
path serves both.

Selection rules (H = marginal entropy in nats, ascending = most confident first):

- sequential: the single lowest-entropy position.
- topk (k): the k lowest-entropy positions.
- eb (gamma): EB-Sampler. Largest prefix U of the entropy order with
  sum(H_U) - max(H_U) <= gamma; at least one position.
- mi / mi-gt (gamma, lam): MI-guided. The most confident position s1 is always
  taken. The others (the candidates) are scanned in entropy order and a
  candidate c joins the batch S only if the batch stays strictly inside the
  budget:

      cost(S + c) = sum_{a<b in S+c} I_ab + lam * sum_{a in S+c, a != s1} H_a < gamma

  The entropy term charges every candidate, including the least confident one.
  EB's sum(H) - max(H) lets the least confident member of its prefix in for
  free, and on our validation puzzles every puzzle EB lost that sequential
  solved was lost on exactly that free member (a guess committed beside
  near-certain cells, before they could inform it): docs/mi.md. Rule
  version 3 (RULE_VERSION; v2 charged sum - max like EB, v1 skipped).
  scan="stop" (default): the first rejected candidate ends the batch, so the
  batch is a prefix of the confidence order. scan="skip": a rejected candidate
  is skipped and the scan goes on, so a less confident, less dependent
  position may join instead. lam = 0 is a pure dependence budget; gamma = 0
  admits nobody, i.e. sequential. `mi` reads I from the MI head (same backbone
  pass, no extra passes); `mi-gt` from ground_truth_mi (an oracle: its extra
  passes are counted separately as oracle_passes).
- mi-zero (gamma): the MI rule with I = 0 and lam = 1, an ablation that shows
  what the entropy term does alone (with I = 0, lam only rescales gamma).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np
import torch

from .mi import ground_truth_mi
from .reading import read_state

# --------------------------------------------------------------------------- config


@dataclass
class SamplerConfig:
    name: str = "sequential"  # a key of SAMPLERS
    gamma: float | None = None  # budget for eb / mi / mi-gt
    lam: float | None = None  # weight of the entropy term for mi / mi-gt
    k: int | None = None  # batch size for topk
    temperature: float = 0.0  # 0 = argmax value; > 0 samples softmax(logits / T)
    seed: int = 0  # for temperature sampling
    gt_eps: float = 1e-3  # pruning tolerance of the ground-truth MI (mi-gt)
    scan: str | None = None  # mi / mi-gt: "stop" at the first rejected candidate, or "skip" it

    def __post_init__(self):
        if self.name not in SAMPLERS:
            raise ValueError(f"unknown sampler {self.name!r}; choose from {sorted(SAMPLERS)}")
        spec = SAMPLERS[self.name]
        for p, default in spec.defaults.items():
            if getattr(self, p) is None:
                setattr(self, p, default)
        for p in ("gamma", "lam", "k", "scan"):
            if p not in spec.defaults:
                setattr(self, p, None)
        if self.scan is not None and self.scan not in ("stop", "skip"):
            raise ValueError(f"scan must be 'stop' or 'skip', not {self.scan!r}")
        if self.k is not None and self.k < 1:
            raise ValueError("k must be >= 1")
        if self.gamma is not None and self.gamma < 0:
            raise ValueError("gamma must be >= 0")
        if self.lam is not None and self.lam < 0:
            raise ValueError("lam must be >= 0")
        if self.temperature < 0:
            raise ValueError("temperature must be >= 0")

    @property
    def needs(self) -> str | None:
        return SAMPLERS[self.name].needs

    def label(self) -> str:
        parts = [self.name]
        for p in ("k", "gamma", "lam"):
            v = getattr(self, p)
            if v is not None:
                parts.append(f"{p}={v:g}")
        if self.scan == "skip":  # the default (stop) stays implicit
            parts.append("scan=skip")
        return " ".join(parts)


# --------------------------------------------------------------------------- rules


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


def select_mi(H: np.ndarray, MI: np.ndarray | None, gamma: float, lam: float, scan: str = "stop") -> list[int]:
    """MI-guided greedy batch (see module docstring). H (m,), MI (m, m) or None for I = 0."""
    order = np.argsort(H, kind="stable")
    S = [int(order[0])]  # always taken, free of charge
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


def mi_rule_reach(H: np.ndarray, gamma: float, lam: float, scan: str = "stop") -> list[int]:
    """Indices (into H) that select_mi could admit whatever the MI (MI >= 0): the only
    positions whose MI the rule can ever read, so the only ones the ground-truth oracle
    needs to expand. Since cost >= lam * (entropies of the admitted candidates), with
    scan=stop the scan cannot pass the first candidate at which that sum alone reaches
    gamma, and with scan=skip no candidate whose own lam * H reaches gamma gets in.
    Sums are accumulated in select_mi's order, so the bound holds bit for bit. lam = 0:
    every position."""
    order = np.argsort(H, kind="stable")
    reach = [int(order[0])]
    h = 0.0
    for c in order[1:]:
        c = int(c)
        if scan == "stop":
            h = h + float(H[c])
            if not lam * h < gamma:
                break
        elif not lam * float(H[c]) < gamma:
            continue
        reach.append(c)
    return reach


RULE_VERSION = 3  # of select_mi; sweep rows record it so --resume never mixes rules


@dataclass
class SamplerSpec:
    defaults: dict  # parameters this sampler takes, with defaults
    needs: str | None  # None, "mi" (head) or "mi-gt" (ground truth)
    select: Callable  # (H, MI, cfg) -> list of indices
    version: int = 1  # of the selection rule: recorded in sweep rows


SAMPLERS: dict[str, SamplerSpec] = {
    "sequential": SamplerSpec({}, None, lambda H, MI, c: select_topk(H, 1)),
    "topk": SamplerSpec({"k": 4}, None, lambda H, MI, c: select_topk(H, c.k)),
    "eb": SamplerSpec({"gamma": 0.2}, None, lambda H, MI, c: select_eb(H, c.gamma)),
    # defaults: the best validation solve rate within 1/3.5 of sequential's passes, then the fewest passes
    # (results/sudoku/val_sweep; docs/results-sudoku.md, "Choosing the MI defaults")
    "mi": SamplerSpec(
        {"gamma": 0.01, "lam": 0.25, "scan": "stop"},
        "mi",
        lambda H, MI, c: select_mi(H, MI, c.gamma, c.lam, c.scan),
        RULE_VERSION,
    ),
    "mi-gt": SamplerSpec(
        {"gamma": 0.01, "lam": 0.25, "scan": "stop"},
        "mi-gt",
        lambda H, MI, c: select_mi(H, MI, c.gamma, c.lam, c.scan),
        RULE_VERSION,
    ),
    # ablation: the MI rule's entropy term alone
    "mi-zero": SamplerSpec({"gamma": 0.01}, None, lambda H, MI, c: select_mi(H, None, c.gamma, 1.0), RULE_VERSION),
}


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
        # the same document as json.dumps(asdict(self)), without asdict's deep copy of every
        # step's (L, V) marginals (seconds for a long decode; the app serialises every trace)
        d = {
            "sampler": self.sampler,
            "initial": self.initial,
            "final": self.final,
            "steps": [vars(s) for s in self.steps],
            "meta": self.meta,
        }
        return json.dumps(d, separators=(",", ":"))

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
) -> DecodeResult:
    """Decode every sequence until nothing is masked, all in lock-step batches.

    Finished sequences drop out of the batch; each keeps its own batch sizes,
    so the result equals decoding them one by one (tests check this).
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
    traces = [Trace(asdict(cfg), tokens[b].tolist(), []) for b in range(B)] if record else None
    gen = torch.Generator(device="cpu").manual_seed(cfg.seed)
    total_masked = int((tokens == mask_id).sum())
    step = 0
    states = [] if keep_states else None
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
                for r in range(idx.numel()):
                    pos = np.nonzero(m_np[r])[0]
                    cand = [int(pos[i]) for i in mi_rule_reach(H_np[r][pos], cfg.gamma, cfg.lam, cfg.scan)]
                    if len(cand) > 1:  # one position has no pairs: no passes
                        reach[r, cand] = True
                gt = ground_truth_mi(model, x, eps=cfg.gt_eps, base_logits=out.logits, positions=reach)
                MI = gt.mi  # zero outside reach x reach
                oracle[idx.cpu()] += gt.passes.cpu()
            if cfg.temperature > 0:
                probs_t = torch.softmax(logits.cpu() / cfg.temperature, -1)
                vals = torch.multinomial(probs_t.view(-1, probs_t.shape[-1]), 1, generator=gen).view(probs_t.shape[:2])
            else:
                vals = logits.argmax(-1).cpu()  # (b, L)
            MI_np = MI.cpu().double().numpy() if MI is not None else None
            for r in range(idx.numel()):
                b = int(idx[r])
                pos = np.nonzero(m_np[r])[0]
                mi_sub = MI_np[r][np.ix_(pos, pos)] if MI_np is not None else None
                chosen = [int(pos[i]) for i in SAMPLERS[cfg.name].select(H_np[r][pos], mi_sub, cfg)]
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
    return DecodeResult(tokens.cpu(), passes, oracle, sizes, traces, time.perf_counter() - t0, states)
