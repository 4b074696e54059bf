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


@dataclass(frozen=True)
class Fronts:
    """How a domain's test sweeps are read at matched passes: one subcommand of benchmarks/fronts.py
    a plan (`python -m benchmarks.fronts NAME`). Declared in the domain's folder beside its criteria
    (`Domain.fronts`), so a new domain that reads its sweeps as an existing one does needs no edit to
    fronts.py. `reading` names one of fronts.py's readings; the other fields are its arguments (paths
    under results/)."""

    reading: str  # "per-input bootstrap" | "pair statistics" | "row errors" | "paired chains"
    help: str  # the subcommand's one line
    sweep_dir: str = ""  # the sweep read by default
    method: str = ""  # the front set against every other (per-input bootstrap)
    at: tuple[float, ...] = ()  # the pass counts read (pair statistics, per-input bootstrap)
    rivals: tuple[str, ...] = ()  # the samplers the MI rule is set against
    leads: tuple[tuple[str, str, tuple[str, ...]], ...] = ()  # (label, MI rule, its rivals): pair statistics
    members: tuple[str, ...] = ()  # the folders read under sweep_dir, each with `sweeps` (pair statistics, masks)
    sweeps: tuple[str, ...] = ()  # the sweep files read in each member's folder
    choice: str = ""  # the validation choice whose settings are compared (paired chains; row errors: its folder)
    metrics: str = ""  # the per-input judges compared, comma-separated (paired chains: those present;
    # per-input bootstrap: the one column read, "solved" when empty)
    boot: int = 1000  # bootstrap draws
    out: str = ""  # the default output (paired chains: SWEEP_DIR/fronts.json)
    # paired chains: the parameters that make a row of the validated rule one of its controls (mi-revise's
    # pick and act): such a row, equal to the choice but for these, is paired with it chain by chain
    controls: tuple[str, ...] = ()
    # paired chains: another sweep of the same chains (same file, chains, seed) whose rows join this one's where
    # this one has no row of that setting, so a family re-reads the committed decodes (sequential, the rivals)
    # instead of committing them twice
    also: str = ""
