"""Sudoku's command-line verbs: `python -m mi_viz {bench,sweep,mi-report,figure} sudoku ...`.

Inputs are puzzle files (one puzzle per line, its first whitespace- or comma-separated
field); bad lines are reported on stderr by line number and skipped. The verbs run through the
core driver (core/driver.py); figure is Sudoku's own.
"""

from __future__ import annotations

from pathlib import Path

from ...core import driver
from ...core.backbone import single_backbone
from ...core.cli_contract import DomainCLI
from ...core.errors import InputError, MissingFileError
from ...core.models import load_models
from ...core.paths import stored_name
from ..cli_runs import report_run, run_of
from . import DOMAIN, PAPER_TABLE1, solver
from . import board as S
from .drawing import figure1
from .report import structure_by_mask_ratio


def read_puzzles(path, limit=None):
    if not Path(path).exists():
        raise MissingFileError(f"puzzle file not found: {path}")
    res = S.read_puzzle_file(path)
    for e in res.errors:
        driver.warn(f"{path}: {e} (skipped)")
    puzzles = res.puzzles[:limit] if limit else res.puzzles
    if not puzzles:
        raise InputError(f"no valid puzzles in {path}")
    return puzzles, res.errors


def add_arguments(command: str, p):
    p.add_argument("--puzzles", required=True, help="one puzzle per line (first field); '#' lines ignored")
    p.add_argument("--limit", type=int, default=None, help="first N valid puzzles only")
    p.add_argument("--checkpoint", default=None, help="MDM checkpoint (default checkpoints/sudoku_mdm)")
    p.add_argument("--head", default=None, help="MI head checkpoint (default checkpoints/sudoku_mi_head)")
    p.add_argument("--tv-head", default=None, help="TV (DEMASK) head checkpoint, for demask (default: the shipped one)")
    if command == "mi-report":
        p.add_argument(
            "--target", choices=("mi", "tv"), default="mi", help="report the MI head, or the TV head against exact TV"
        )
    if command == "mi-report":
        p.add_argument(
            "--structure-states",
            type=int,
            default=0,
            help="also measure the structure AUROC on N randomly masked solutions per masking ratio "
            "(0.9, 0.75, 0.6); 0: skip",
        )
        p.add_argument("--pairs", default=None, help="optional .npz with every masked pair (for plots)")
    if command == "figure":
        p.add_argument("--index", type=int, default=0, help="which puzzle of the file")
        p.add_argument("--step", type=int, default=10, help="decode step (sequential) to show")
        p.epilog = "--out: .png, or .svg / .pdf for a vector figure"


def run(command: str, a, cfg_or_grid, dev: str):
    puzzles, errors = read_puzzles(a.puzzles, a.limit if command != "figure" else None)
    b = single_backbone(DOMAIN, a.checkpoint)  # resolved once: built once a process (Backbone.load)
    if command in ("bench", "sweep"):
        task = driver.Task(
            DOMAIN,
            puzzles,
            {"puzzles": stored_name(a.puzzles)},
            b,
            head=a.head,
            tv_head=a.tv_head,
            columns={"skipped_lines": len(errors)},
            title=f"Sudoku: {stored_name(a.puzzles)}",
            plot={"paper": PAPER_TABLE1, "paper_label": "paper Table 1"},
        )
        return driver.bench_or_sweep(task, cfg_or_grid, run_of(command, a), dev)
    kind = getattr(a, "target", "mi")
    model, heads = load_models(DOMAIN, a.checkpoint, a.head, dev, kinds=(kind,), tv_head=a.tv_head, model=b.load(dev))
    head = heads[kind] if isinstance(heads, dict) else heads
    if command == "figure":
        if not 0 <= a.index < len(puzzles):
            raise InputError(f"--index {a.index} is outside 0..{len(puzzles) - 1}")
        return driver.say(figure1(model, head, puzzles[a.index], a.step, a.out, eps=a.eps))
    relations, _ = DOMAIN.relations(81)

    def more(rep) -> dict:
        out: dict = {"puzzles": str(a.puzzles)}
        if a.structure_states:
            solutions = DOMAIN.encode([solver.solve(p).solution for p in puzzles[: a.structure_states]]).to(dev)
            out["structure_by_mask_ratio"] = structure_by_mask_ratio(
                model, head, solutions, relations, n_states=a.structure_states, eps=a.eps, seed=a.seed
            )
        return out

    return driver.report(
        driver.ReportTask(model, head, DOMAIN.encode(puzzles).to(dev), relations=relations, more=more), report_run(a)
    )


CLI = DomainCLI(
    commands=("bench", "sweep", "mi-report", "figure"),
    add_arguments=add_arguments,
    run=run,
    default_grid="sequential; topk:k=2,4,7; eb:gamma=1e-4,0.01,0.2; mi-zero:gamma=0.04,0.4; mi:gamma=0.04,0.4:lam=1,4",
)
