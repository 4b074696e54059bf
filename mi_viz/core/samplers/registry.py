"""The sampler registry: each rule declares itself once (its parameters with their defaults, what
it reads, how it selects), and SamplerConfig is one setting of one rule.

A rule reads some of: "probs" (its candidates' marginals), "prev" (the same positions' marginals
one pass earlier), "mi" (the MI head's map, from the same backbone pass), "exact-mi" (the
ground-truth map: an oracle whose extra passes are counted apart), "tv" / "exact-tv" (the same
for DEMASK's expected TV influence: a head trained on it, or the exact map) and "attention" (the
backbone's own last-block attention over the whole sequence, from the same pass, with the
confidence each unmasked position was committed at). `decode` hands each rule what
it reads and nothing else, so no name is special-cased there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError
from .params import PARAMS, Param

READS = ("probs", "prev", "mi", "exact-mi", "attention", "tv", "exact-tv", "written")  # what a rule may ask for


@dataclass
class Written:
    """What a revising rule ("written") sees of one state's n decoded positions: those written by
    this decode and not masked again (the context it was given is never among them)."""

    pos: np.ndarray  # (n,) places in the sequence of the decoded positions
    # per place in the sequence (L,): the step (1-based, the sequence's own) that last wrote it, the
    # top probability of its marginal then (nan while masked or given), how often it was written, and
    # the step the rule marked it at (Revision.mark; 0: unmarked)
    step: np.ndarray
    conf: np.ndarray
    times: np.ndarray
    mark: np.ndarray
    revised: int  # remasks so far (this sequence)
    now: int  # this step (1-based)
    # (L,) the probability this pass's output gives each position's current token (nan where masked):
    # a written token scored by the model from the same pass, at no extra cost (NAVIRA's scoring pass).
    # Meaningful for a masked LM trained to predict unmasked tokens too (BERT's 80/10/10: AntiBERTy,
    # Sapiens); an MDM whose loss reads only masked positions has untrained outputs there
    score: np.ndarray | None = None


@dataclass
class Revision:
    """A revising rule's step: the candidates to unmask (indices into Candidates, at least one); the
    positions to set back to MASK after this step's writes (places in the sequence: decoded ones,
    from Candidates.written.pos, or ones written in this very step, which defers them); and the
    candidates unmasked now that it marks for a later look (read back as Written.mark). A rule
    that returns a plain list only unmasks."""

    unmask: list[int]
    remask: list[int] = field(default_factory=list)
    mark: list[int] = field(default_factory=list)


@dataclass
class Candidates:
    """What a rule sees of one state's m masked positions (indices 0..m-1 into these arrays)."""

    H: np.ndarray  # (m,) marginal entropies, nats
    # (m, m) the pairwise map ("mi" / "exact-mi", or the TV for "tv" / "exact-tv"), or None; a lazy
    # oracle's is a decoding.LazyMap, which a rule reads as M[c, S] only
    MI: Any = None
    probs: np.ndarray | None = None  # (m, V) marginals ("probs")
    pos: np.ndarray | None = None  # (m,) places in the sequence
    prev: np.ndarray | None = None  # (m, V) the same positions' marginals one pass earlier ("prev"; None at the first)
    # ("attention") the whole sequence's attention (L, L), row q attending to column k; and (L,) the
    # probability each position's value had when it was unmasked (1 for the starting context, nan while masked)
    attention: np.ndarray | None = None
    committed: np.ndarray | None = None
    written: Written | None = None  # ("written") the decoded positions, for a rule that may remask them


@dataclass(frozen=True)
class Sampler:
    """One rule, registered by name (register). select(Candidates, SamplerConfig) returns the
    candidates' indices to unmask in this pass (at least one)."""

    name: str
    summary: str  # one line: what the rule does (help texts, docs/samplers.md)
    params: Mapping[str, Any]  # the parameters it takes -> registry defaults, in PARAMS order
    # -> the candidates to unmask; a rule reading "written" may return a Revision (it may also remask)
    select: Callable[[Candidates, SamplerConfig], Any]
    reads: frozenset[str] = frozenset()  # of READS
    version: int = 1  # of the selection rule: sweep rows record it, so --resume never mixes rules
    curve: tuple[str, ...] = ("lam",)  # parameters that name a sweep curve; the others move along it
    # an oracle ("exact-mi", "exact-tv"): (H of the candidates, config, their marginals or None) -> the
    # indices the rule could admit whatever the map, the only positions whose exact map it needs
    # (samplers.mi_rules.mi_rule_reach); None: every masked position (unless lazy)
    reach: Callable[[np.ndarray, SamplerConfig, np.ndarray | None], list[int]] | None = None
    # an oracle whose exact map is expanded a position at a time, when its rule first reads a pair holding
    # it (decoding.LazyMaps): for a greedy scan=stop rule, the batch and the candidate that ends it. mi-gt
    # keeps the reach expansion (its committed oracle-pass figures were counted so); demask-gt, whose
    # reach is every masked position with the confidence bar off, is lazy
    lazy: bool = False
    revises: bool = False  # it may remask what it wrote (it reads "written"): its rows count the remasks
    help: Mapping[str, str] = field(default_factory=dict)  # a parameter's meaning for this rule, over PARAMS'

    def __post_init__(self) -> None:
        for p in self.params:
            if p not in PARAMS:
                raise ValueError(f"sampler {self.name!r} takes {p!r}, which no Param declares (params.declare)")
        bad = set(self.reads) - set(READS)
        if bad:
            raise ValueError(f"sampler {self.name!r} reads {sorted(bad)}; a rule may read {', '.join(READS)}")
        if self.revises and "written" not in self.reads:
            raise ValueError(f"sampler {self.name!r} revises, so it reads 'written' (what it may remask)")
        order = [p for p in PARAMS if p in self.params]
        if list(self.params) != order:
            raise ValueError(f"sampler {self.name!r}: declare its parameters in PARAMS order ({', '.join(order)})")

    @property
    def needs_head(self) -> bool:
        return bool({"mi", "tv"} & self.reads)

    @property
    def head_kind(self) -> str:
        """The map the head it reads predicts (mi_head.HeadConfig.target): "tv" for DEMASK's rule."""
        return "tv" if "tv" in self.reads else "mi"

    @property
    def is_oracle(self) -> bool:
        return bool({"exact-mi", "exact-tv"} & self.reads)

    def param_help(self, p: str) -> str:
        return self.help.get(p, PARAMS[p].help)


SAMPLERS: dict[str, Sampler] = {}


def register(sampler: Sampler) -> Sampler:
    """Add a rule to the registry (a sampler file calls this at import)."""
    if sampler.name in SAMPLERS and SAMPLERS[sampler.name] is not sampler:
        raise ValueError(f"a sampler named {sampler.name!r} is registered already")
    SAMPLERS[sampler.name] = sampler
    return sampler


def unregister(name: str) -> None:
    """Remove a rule (tests that register a toy one clean up after themselves)."""
    SAMPLERS.pop(name, None)


def _sampler(name: str) -> Sampler:
    if name not in SAMPLERS:
        raise InputError(f"unknown sampler {name!r}; choose from {', '.join(SAMPLERS)}")
    return SAMPLERS[name]


class SamplerConfig:
    """One setting of one rule: SamplerConfig("mi", gamma=0.04, lam=10). Parameters left out take
    the rule's defaults; a parameter the rule does not take, or a value out of its range, is a
    ValueError that says which (never silently dropped). cfg.gamma reads a parameter."""

    # every declared parameter (PARAMS), typed as its kind: annotations only (no attribute is made), so mypy
    # reads cfg.gamma as a float while __getattr__ serves it, and refuses it on a rule that does not take it
    k: int
    gamma: float
    lam: float
    tau: float
    kl: float
    d: int
    scan: str
    induce: float
    low: float
    edge: float
    sink: float
    conf: float
    theta: float
    rho: float
    pick: str
    act: str
    block: int
    nr: int
    loop: int
    t_on: float
    eta: float
    schedule: str
    strategy: str
    tr: float

    def __init__(
        self,
        name: str = "sequential",
        *,
        temperature: float = 0.0,
        seed: int = 0,
        gt_eps: float = 1e-3,
        **params: Any,
    ) -> None:
        rule = _sampler(name)
        # None means "not given" for any declared parameter; a value for one the rule does not take is an error
        unknown = [p for p, v in params.items() if p not in rule.params and (v is not None or p not in PARAMS)]
        if unknown:
            takes = ", ".join(rule.params) or "no parameter"
            raise InputError(f"{name} takes {takes}, not {', '.join(unknown)}")
        values = {p: rule.params[p] if params.get(p) is None else params[p] for p in rule.params}
        self.name = name
        self.params: dict[str, Any] = {p: PARAMS[p].check(v, name) for p, v in values.items()}
        for what, v, lo in (("temperature", temperature, 0.0), ("gt_eps", gt_eps, 0.0)):
            Param(what, "float", "", lo=lo).check(v, name)
        self.temperature = float(temperature)  # 0 = argmax value; > 0 samples softmax(logits / T)
        self.seed = int(seed)  # each sequence draws from its own stream: (seed, index)
        self.gt_eps = float(gt_eps)  # pruning tolerance of the ground-truth MI (oracle rules)

    @property
    def rule(self) -> Sampler:
        return SAMPLERS[self.name]

    def __getattr__(self, p: str) -> Any:  # cfg.gamma: a parameter this rule takes
        if p.startswith("_") or p == "params":
            raise AttributeError(p)
        if p in self.params:
            return self.params[p]
        raise AttributeError(f"{self.name} takes no parameter {p!r} (it takes {', '.join(self.params) or 'none'})")

    def get(self, p: str, default: Any = None) -> Any:
        """A parameter's value, or default when the rule does not take it."""
        return self.params.get(p, default)

    @property
    def needs_head(self) -> bool:
        return self.rule.needs_head

    @property
    def head_kind(self) -> str:
        return self.rule.head_kind

    @property
    def is_oracle(self) -> bool:
        return self.rule.is_oracle

    def replace(self, **changes: Any) -> SamplerConfig:
        """A copy with some fields or parameters changed (validated anew)."""
        d = self.to_dict()
        d.update(changes)
        return SamplerConfig.from_dict(d)

    def to_dict(self) -> dict:
        """name, parameters, temperature, seed, gt_eps: what a Trace records and caches key on."""
        return {
            "name": self.name,
            **self.params,
            "temperature": self.temperature,
            "seed": self.seed,
            "gt_eps": self.gt_eps,
        }

    @classmethod
    def from_dict(cls, d: Mapping) -> SamplerConfig:
        d = dict(d)
        return cls(d.pop("name"), **d)

    def label(self) -> str:
        """ "mi gamma=0.04 lam=10": parameters in PARAMS order; one whose Param says so only off its default."""
        parts = [self.name]
        for p, v in self.params.items():
            if v is None or (not PARAMS[p].label_default and v == self.rule.params[p]):
                continue
            parts.append(f"{p}={PARAMS[p].text(v)}")
        return " ".join(parts)

    def grid_text(self) -> str:
        """The setting in grid syntax ("mi:gamma=0.04:lam=10"; sweep.parse_grid reads it back to an
        equal config): the label's parameters."""
        return ":".join(self.label().split(" "))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SamplerConfig) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(tuple(self.to_dict().items()))

    def __repr__(self) -> str:
        return f"SamplerConfig({self.label()!r}, temperature={self.temperature:g}, seed={self.seed})"


def defaults_for(name: str, domain_defaults: dict | None = None) -> dict:
    """The parameters rule `name` takes with their defaults in a domain: the registry's,
    overridden by the domain's own (Domain.sampler_defaults)."""
    rule = _sampler(name)
    mine = (domain_defaults or {}).get(name, {})
    return {p: mine.get(p, d) for p, d in rule.params.items()}


def config_for(name: str, domain_defaults: dict | None = None, **given: Any) -> SamplerConfig:
    """A SamplerConfig whose parameters not given (or given as None) take the domain's defaults."""
    params = {k: v for k, v in given.items() if v is not None}
    fields = {k: params.pop(k) for k in ("temperature", "seed", "gt_eps") if k in params}
    return SamplerConfig(name, **fields, **{**defaults_for(name, domain_defaults), **params})


def row_label(row: Mapping) -> str:
    """A results row's setting as SamplerConfig.label() writes it (a sweep.csv line read as text,
    or a summary), plus "(rule N)" on a row made under an earlier version of its rule."""
    name = str(row["sampler"])
    rule = SAMPLERS.get(name)
    parts = [name]
    for p, spec in PARAMS.items():
        v = row.get(p)
        if v in ("", None):
            continue
        if spec.kind == "choice":
            if spec.label_default or rule is None or v != rule.params.get(p):
                parts.append(f"{p}={v}")
        else:
            parts.append(f"{p}={float(v):g}")
    version = row.get("rule_version")
    if rule is not None and version not in ("", None) and str(version) != str(rule.version):
        parts.append(f"(rule {version})")
    return " ".join(parts)
