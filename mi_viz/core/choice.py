"""How a domain's sampler defaults are chosen on its validation sweep: a criterion, declared by the
domain beside its defaults (`Domain.criteria`), read by benchmarks/defaults.py (the one choosing script).
Each criterion is fixed before its sweep runs; `folder` is where its validation sweep and choice live
under results/ (default: the criterion's name)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Criterion:
    share: float  # the budget: at most sequential's passes / share
    metric: str  # the column judged
    higher: bool  # higher is better
    tie: float  # rows within this of the best go to the fewer passes (sudoku: of one puzzle, set from n)
    samplers: tuple[str, ...] | None  # those chosen for (None: every sampler of the sweep)
    figures: tuple[str, ...]  # what a choice records beside its parameters
    digits: int  # max_passes' rounding in the file
    text: str
    top_level: bool = False  # protein's file keeps each choice at its top level
    budgets: tuple[float, ...] = ()  # further shares chosen at by the same criterion ("at_budget": the test's fronts)
    folder: str = ""  # results/FOLDER/val_sweep (default: the criterion's name)
