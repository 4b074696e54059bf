"""The parameters a sampler can declare, each defined once: its type, its range, the values a
slider offers, and what it means. A sampler lists the ones it takes with its defaults
(registry.Sampler.params); the CLI flags, the grid syntax, labels, sweep columns and identity,
and the app's widgets are all generated from these declarations.

Order matters and is part of the file formats: a label names its parameters in PARAMS order
("mi-cap k=8 gamma=32 lam=300"), which the committed sweeps' row files are named by; a sweep
row holds the columns of COLUMNS, in that order, for every sampler.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..errors import InputError

# what a slider offers for the log-spaced parameters (useful budgets span 1e-5 .. 32 nats across domains)
GAMMAS = (
    0.0,
    1e-5,
    3e-5,
    1e-4,
    3e-4,
    0.001,
    0.003,
    0.01,
    0.03,
    0.1,
    0.2,
    0.3,
    0.5,
    0.6,
    1.0,
    2.0,
    4.0,
    8.0,
    16.0,
    32.0,
)
LAMBDAS = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 10.0, 16.0, 100.0, 300.0, 1000.0)
TAUS = (0.01, 0.03, 0.05, 0.1, 0.2, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999)
KLS = (1e-4, 1e-3, 0.01, 0.03, 0.05, 0.1, 0.3)


@dataclass(frozen=True)
class Param:
    name: str  # the flag (--gamma), the grid key (gamma=...), the label key and the sweep column
    kind: str  # "int", "float" or "choice"
    help: str  # what it means, in one line (a sampler may word it for itself: Sampler.help)
    lo: float | None = None  # least value (inclusive)
    hi: float | None = None  # largest value (inclusive)
    choices: tuple[str, ...] = ()  # kind "choice": the values it takes
    ladder: tuple[float, ...] = ()  # the values a slider offers (log-spaced parameters); () = a plain slider
    widget_hi: int = 20  # an int slider's top (the CLI and grids take anything up to hi)
    label_default: bool = True  # False: the label names it only when it differs from the sampler's default
    title: str = ""  # what a widget calls it ("lambda" for lam); the name when empty

    @property
    def shown(self) -> str:
        return self.title or self.name

    def cast(self, text: str) -> Any:
        """Grid text -> a value of this kind (ValueError naming the parameter when it is not one)."""
        text = text.strip()
        if self.kind == "choice":
            return text
        try:
            return int(text) if self.kind == "int" else float(text)
        except ValueError:
            raise ValueError(
                f"bad value {text!r} for {self.name}: expected {'an integer' if self.kind == 'int' else 'a number'}"
            ) from None

    def check(self, value: Any, sampler: str) -> Any:
        """value if it is one this parameter takes, else a ValueError that says why."""
        if value is None:
            return None
        if self.kind == "choice":
            if value not in self.choices:
                raise InputError(f"{self.name} must be one of {', '.join(map(repr, self.choices))}, not {value!r}")
            return value
        if self.kind == "int":
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if not isinstance(value, int) or isinstance(value, bool):
                raise InputError(f"{self.name} must be an integer, not {value!r}")
        else:
            value = float(value)
            if not math.isfinite(value):
                raise InputError(f"{self.name} must be a finite number, not {value!r}")
        if self.lo is not None and value < self.lo:
            raise InputError(f"{self.name} must be >= {self.lo:g} for {sampler}, not {value:g}")
        if self.hi is not None and value > self.hi:
            raise InputError(f"{self.name} must be <= {self.hi:g} for {sampler}, not {value:g}")
        return value

    def text(self, value: Any) -> str:
        """How a label and grid text write a value."""
        return str(value) if self.kind == "choice" else f"{value:g}"


PARAMS: dict[str, Param] = {
    p.name: p
    for p in (
        Param("k", "int", "positions per pass", lo=1, hi=100_000),
        Param("gamma", "float", "budget, nats", lo=0.0, ladder=GAMMAS),
        Param("lam", "float", "weight of the MI", lo=0.0, ladder=LAMBDAS, title="lambda"),
        Param("tau", "float", "least top probability", lo=0.0, hi=1.0, ladder=TAUS),
        Param("kl", "float", "largest KL to the previous pass's marginal, nats", lo=0.0, ladder=KLS, title="KL bound"),
        Param("d", "int", "least distance between two positions of a batch", lo=1, hi=100_000),
        Param(
            "scan",
            "choice",
            "stop: the batch ends at the first candidate over the budget (a prefix of the entropy order); "
            "skip: pass over it and keep scanning",
            choices=("stop", "skip"),
            label_default=False,
            title="batch rule",
        ),
    )
}

# a sweep row's parameter columns, in the order of the committed sweep.csv files (results/); a
# parameter declared later joins at the end (tests/test_sampler_template.py)
COLUMNS = ("gamma", "lam", "k", "scan", "tau", "kl", "d")


def declare(param: Param) -> Param:
    """Declare a new parameter (a sampler file does this for what it introduces)."""
    if param.name in PARAMS and PARAMS[param.name] != param:
        raise ValueError(f"parameter {param.name!r} is declared twice, differently")
    PARAMS[param.name] = param
    return param


def undeclare(name: str) -> None:
    """Remove a declared parameter (tests that declare a toy one clean up after themselves)."""
    if name in COLUMNS:
        raise ValueError(f"{name!r} is a column of the committed sweeps: it stays declared")
    PARAMS.pop(name, None)


def columns() -> tuple[str, ...]:
    """Every declared parameter as a sweep column: the committed order, then the newer ones."""
    return COLUMNS + tuple(p for p in PARAMS if p not in COLUMNS)
