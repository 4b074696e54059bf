"""The Sudoku domain: boards in, tokens out, and back; the MDM; the rules as known structure.

    from mi_viz.domains import get_domain
    sudoku = get_domain("sudoku")
    model = sudoku.load_model()            # checkpoints/sudoku_mdm
    x = sudoku.encode([board])             # (1, 81) tokens, MASK on blanks

Everything the core needs to know about Sudoku is on DOMAIN (mi_viz.core.protocol.Domain).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ...core import samplers
from ...core.choice import Criterion, Fronts
from . import board as S
from .mdm import MASK_TOKEN, boards_to_tokens, load_mdm, tokens_to_boards
from .symmetries import apply_symmetry, permute_pairs, random_symmetries

REPO = Path(__file__).resolve().parents[3]
CHECKPOINTS = REPO / "checkpoints"
HARD = REPO / "data" / "sudoku" / "test_hard.txt"  # the 1,000 hard test puzzles (make data)

# The paper's Table 1 (1000 hard Sudoku), for plots and the tables; "ours": the labels of our rows
# that run its setting (benchmarks/tables.py writes the paper's numbers beside them). Its MI rows
# were read as a pure MI budget in release 0.3 (mi-pairs, lam 0) and as the paper's own rule,
# entropy charged at weight 1 (mi, lam 1), since (docs/samplers.md).
PAPER_TABLE1: list[dict[str, Any]] = [
    {"method": "sequential", "avg_passes": 53.9, "solved_frac": 0.616, "ours": ["sequential"]},
    {"method": "topk k=4", "avg_passes": 14.9, "solved_frac": 0.524, "ours": ["topk k=4"]},
    {"method": "eb gamma=0.2", "avg_passes": 15.3, "solved_frac": 0.610, "ours": ["eb gamma=0.2"]},
    {
        "method": "mi gamma=0.3",
        "avg_passes": 15.2,
        "solved_frac": 0.636,
        "ours": ["mi gamma=0.3 lam=1", "mi-pairs gamma=0.3 lam=0"],
    },
    {
        "method": "mi gamma=0.6",
        "avg_passes": 9.7,
        "solved_frac": 0.562,
        "ours": ["mi gamma=0.6 lam=1", "mi-pairs gamma=0.6 lam=0"],
    },
]

# The rows of the paper's Table 1 as run here (mi-gt, the oracle ceiling, is timed apart:
# its extra passes are the point of it). benchmarks/table1_time.py times exactly these.
TABLE1_GRID = "sequential; topk:k=4,7; eb:gamma=0.2,0.5; mi-pairs:gamma=0.3,0.6:lam=0; mi-pairs:gamma=0.01:lam=0.25"
RELATION_NAMES = ("unrelated", "same row", "same column", "same box")


def related_matrix(box: int = 3) -> np.ndarray:
    """(L, L) int: 0 none, 1 same row, 2 same column, 3 same box only (a fresh copy)."""
    return _related(box).copy()


@cache
def _related(box: int) -> np.ndarray:
    n = box * box
    codes = {"none": 0, "row": 1, "col": 2, "box": 3}
    return np.array([[codes[S.relation(i, j, box)] if i != j else 0 for j in range(n * n)] for i in range(n * n)])


class SudokuDomain:
    name = "sudoku"
    value_names = tuple("123456789")
    mask_id = MASK_TOKEN
    default_model = CHECKPOINTS / "sudoku_mdm"
    # Sudoku's budgets (nats; tau a probability): each sampler at its validation choice
    # (benchmarks/defaults.py (sudoku) -> results/sudoku/val_sweep/choice.json: the best validation
    # solve rate at <= 1/3.5 of sequential's passes), tests/test_sudoku.py checks they agree.
    # mi-pairs (rule 3) keeps release 0.3's (0.01, 0.25): its Table 1 rows were made there.
    # a sweep's saved rows keep the per-puzzle figures; the 81-digit strings (most of a row's
    # bytes) are the puzzle file's line i and a re-decode's output
    unsaved_columns: tuple[str, ...] = ("puzzle", "output")
    default_temperature = 0.0  # argmax: a puzzle has one answer
    # how sampler_defaults were chosen on validation (core.choice; benchmarks/defaults.py reads them)
    # how its test sweep is read at matched passes (python -m benchmarks.fronts sudoku): the solve rate,
    # a paired bootstrap over the puzzles, the MI rule at lambda 10 against every other front
    fronts = {
        "sudoku": Fronts(
            "per-input bootstrap",
            "solve rate, a paired bootstrap over the puzzles",
            sweep_dir="sudoku/test_hard",
            method="mi lam=10",
            at=(9, 10, 11, 12.5, 14),
        )
    }
    criteria = {
        "sudoku": Criterion(
            3.5,
            "solved_frac",
            True,
            0.5,
            ("mi", "mi-tc", "mi-zero", "mi-pairs", "eb", "threshold", "margin", "klass", "dilated", "dawn"),
            ("avg_passes", "solved_frac"),
            2,
            "highest validation solve rate at <= 1/3.5 of sequential's passes; ties within one puzzle to the "
            "fewer passes",
        ),  # fmt: skip
        # DEMASK's rule: Sudoku's criterion, on its own validation sweep (results/sudoku/demask/)
        "sudoku-demask": Criterion(
            3.5,
            "solved_frac",
            True,
            0.5,
            ("demask",),
            ("avg_passes", "solved_frac"),
            2,
            "highest validation solve rate at <= 1/3.5 of sequential's passes; ties within one puzzle to the "
            "fewer passes",
            folder="sudoku/demask",
        ),  # fmt: skip
        # mi-revise (the MI rule that revises what a parallel step broke): Sudoku's criterion, and the same at
        # 1/5 of sequential's passes (where the unmask-only rules fall short), on its own validation sweep
        # (results/sudoku/revise/); fixed before any of its test rows
        "sudoku-revise": Criterion(
            3.5,
            "solved_frac",
            True,
            0.5,
            ("mi-revise", "mi"),
            ("avg_passes", "solved_frac"),
            2,
            "highest validation solve rate at <= 1/3.5 and at <= 1/5 of sequential's passes; ties within one "
            "puzzle to the fewer passes",
            budgets=(5.0,),
            folder="sudoku/revise",
        ),  # fmt: skip
    }
    sampler_defaults: dict = {
        "eb": {"gamma": 1e-4},
        "mi": {"gamma": 0.04, "lam": 10.0},
        "mi-gt": {"gamma": 0.04, "lam": 10.0},
        "mi-tc": {"gamma": 0.02, "lam": 10.0},
        "mi-zero": {"gamma": 0.04},
        "mi-pairs": {"gamma": 0.01, "lam": 0.25},
        "threshold": {"tau": 0.99},
        "margin": {"k": 4, "tau": 0.9},
        "klass": {"tau": 0.95, "kl": 0.01},
        "dilated": {"k": 4, "d": 2},
        "dawn": {"tau": 0.99, "induce": 0.99, "low": 0.99, "edge": 0.03, "sink": 10.0},
        "demask": {"scan": "stop", "tau": 0.1, "conf": 0.99},  # criterion "sudoku-demask"
    }

    def load_model(self, spec=None, device: str = "cpu"):
        return load_mdm(spec or self.default_model, device=device)[0]

    def default_head(self):
        return CHECKPOINTS / "sudoku_mi_head"

    def encode(self, boards) -> torch.Tensor:
        """Boards (0 = blank, 1..9) -> (B, 81) tokens."""
        return boards_to_tokens(boards)

    def decode(self, tokens: torch.Tensor) -> list[tuple[int, ...]]:
        """(B, 81) tokens -> boards, MASK -> 0."""
        return [tuple(b) for b in tokens_to_boards(tokens).tolist()]

    def position_name(self, i: int, length: int = 81) -> str:
        return S.cell_name(i)

    def relations(self, length: int = 81):
        if length != 81:
            return None
        return related_matrix(), RELATION_NAMES

    def score(self, puzzles, final: torch.Tensor) -> list[dict]:
        """Solved = complete, obeys every rule, keeps the givens."""
        rows = []
        for p, b in zip(puzzles, self.decode(final)):
            rows.append(
                {
                    "puzzle": S.board_to_string(p),
                    "solved": int(S.is_solution(b, p)),
                    "conflicts": len(S.conflict_cells(b)),
                    "output": S.board_to_string(b),
                }
            )
        return rows

    def groups(self, puzzles) -> list[list[int]]:
        """Every puzzle has 81 cells: one batch."""
        return [list(range(len(puzzles)))]

    def judge(self, model=None, reference=None, **options):
        """Nothing beyond summarize: a solved puzzle is judged by the rules alone."""
        return lambda rows: {}

    def summarize(self, rows: list[dict]) -> dict:
        return {"solved_frac": round(sum(r["solved"] for r in rows) / max(1, len(rows)), 4)}

    def typical_states(self, model, n: int = 1) -> torch.Tensor:
        """States a step in the app meets (benchmarks/latency.py times them): each of the first n hard
        test puzzles halfway through its sequential decode: (n, 81)."""
        x = boards_to_tokens(S.read_puzzle_file(HARD).puzzles[:n])  # (n, 81)
        with torch.inference_mode():  # as decode runs the pass
            res = samplers.decode(model, x, samplers.SamplerConfig("sequential"), keep_states=True)
        states = res.states or []  # (B, L) before each step
        return torch.stack([states[len(sizes) // 2][b] for b, sizes in enumerate(res.batch_sizes)])

    def random_symmetry(self, tokens: torch.Tensor, pair_maps: torch.Tensor, generator: torch.Generator):
        """A fresh random validity-preserving symmetry per state: (tokens (B, 81), pair maps
        (B, 81, 81)) -> the transformed states and their maps (train_head --augment)."""
        cells, digits = random_symmetries(tokens.shape[0], generator)
        return apply_symmetry(tokens, cells, digits), permute_pairs(pair_maps, cells)


DOMAIN = SudokuDomain()
