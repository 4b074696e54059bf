"""Sudoku's command-line verbs: `python -m mi_viz {bench,sweep,mi-report,figure} sudoku ...`.

Inputs are puzzle files (one puzzle per line, its first whitespace- or comma-separated
field); bad lines are reported on stderr by line number and skipped.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ...core import strict_json
from . import DOMAIN, PAPER_TABLE1
from . import board as S

COMMANDS = ("bench", "sweep", "mi-report", "figure")

DEFAULT_GRID = "sequential; topk:k=2,4,7; eb:gamma=1e-4,0.01,0.2; mi-zero:gamma=0.04,0.4; mi:gamma=0.04,0.4:lam=1,4"


def read_puzzles(path, limit=None):
    if not Path(path).exists():
        raise FileNotFoundError(f"puzzle file not found: {path}")
    res = S.read_puzzle_file(path)
    for e in res.errors:
        print(f"warning: {path}: {e} (skipped)", file=sys.stderr)
    puzzles = res.puzzles[:limit] if limit else res.puzzles
    if not puzzles:
        raise ValueError(f"no valid puzzles in {path}")
    return puzzles, res.errors


def add_arguments(command: str, p):
    p.add_argument("--puzzles", required=True, help="one puzzle per line (first field); '#' lines ignored")
    p.add_argument("--limit", type=int, default=None, help="first N valid puzzles only")
    p.add_argument("--checkpoint", default=None, help="MDM checkpoint (default checkpoints/sudoku_mdm)")
    p.add_argument("--head", default=None, help="MI head checkpoint (default checkpoints/sudoku_mi_head)")
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


def run(command: str, a, cfg_or_grid, dev: str):
    from ...core.bench import DECODE_BATCH, run_bench, write_rows
    from ...core.models import load_models

    if command == "bench":
        puzzles, errors = read_puzzles(a.puzzles, a.limit)
        model, head = load_models(DOMAIN, a.checkpoint, a.head, dev, need_head=cfg_or_grid.needs_head)
        res = run_bench(DOMAIN, model, puzzles, cfg_or_grid, head, a.batch_size or DECODE_BATCH, dev)
        write_rows(res.rows, a.out)
        res.summary["skipped_lines"] = len(errors)
        print(strict_json.dumps(res.summary))
    elif command == "sweep":
        from ...core.sweep import run_sweep

        puzzles, _ = read_puzzles(a.puzzles, a.limit)
        run_sweep(
            DOMAIN,
            cfg_or_grid,
            puzzles,
            {"puzzles": Path(a.puzzles).name},
            a.out_dir,
            a.checkpoint,
            a.head,
            dev,
            a.batch_size or DECODE_BATCH,
            a.jobs,
            a.resume,
            a.save_rows,
            title=a.title or f"Sudoku: {Path(a.puzzles).name}",
            plot={"paper": PAPER_TABLE1, "paper_label": "paper Table 1"},
            report=lambda d: print(strict_json.dumps(d), flush=True),
            keep_others=a.keep_others,
        )
    elif command == "mi-report":
        mi_report(a, dev)
    elif command == "figure":
        from .drawing import figure1

        puzzles, _ = read_puzzles(a.puzzles)
        if not 0 <= a.index < len(puzzles):
            raise ValueError(f"--index {a.index} is outside 0..{len(puzzles) - 1}")
        model, head = load_models(DOMAIN, a.checkpoint, a.head, dev, need_head=True)
        print(strict_json.dumps(figure1(model, head, puzzles[a.index], a.step, a.out, eps=a.eps)))


def mi_report(a, dev):
    from ...core.fidelity import mi_report as report
    from ...core.fidelity import write_report
    from ...core.models import load_models
    from .report import structure_by_mask_ratio

    puzzles, _ = read_puzzles(a.puzzles, a.limit)
    model, head = load_models(DOMAIN, a.checkpoint, a.head, dev, need_head=True)
    relations, _ = DOMAIN.relations(81)
    rep = report(model, head, DOMAIN.encode(puzzles).to(dev), a.states, a.eps, a.seed, relations)
    summary, pt, tokens = rep.summary, rep.pairs, rep.tokens
    summary["puzzles"] = str(a.puzzles)
    if a.structure_states:
        solutions = DOMAIN.encode([S.solve(p).solution for p in puzzles[: a.structure_states]]).to(dev)
        summary["structure_by_mask_ratio"] = structure_by_mask_ratio(
            model, head, solutions, relations, n_states=a.structure_states, eps=a.eps, seed=a.seed
        )
    write_report(summary, pt, tokens, a.out, a.pairs)
    print(strict_json.dumps(summary))
