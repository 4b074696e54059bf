"""How hard a Sudoku puzzle is: whether naked and hidden singles alone finish it (the "medium"
and "hard" test sets' split), in how many rounds, and the exact solver's search nodes."""

from __future__ import annotations

from dataclasses import dataclass

from .board import geometry, rule_conflicts
from .solver import solve


@dataclass
class Rating:
    givens: int
    singles_solvable: bool  # naked + hidden singles alone finish the puzzle
    singles_rounds: int  # rounds of (all) singles until stuck or solved
    singles_filled: int  # cells the singles filled
    search_nodes: int  # nodes of the exact solver (1 + filled cells when trivial)

    @property
    def level(self) -> str:
        return "medium" if self.singles_solvable else "hard"


def singles_rounds(board, box: int = 3) -> tuple[tuple[int, ...], int]:
    """Apply naked and hidden singles in parallel rounds until stuck.

    One round fills every cell that is forced in the current state (the floor a
    perfect parallel decoder could reach, docs/results-sudoku.md). Returns the board
    reached and the number of rounds that filled something.
    """
    n, rows, cols, boxes, peers = geometry(box)
    grid = list(board)
    full = set(range(1, n + 1))
    rounds = 0
    while True:
        cand = {}
        for c, v in enumerate(grid):
            if not v:
                cand[c] = full - {grid[p] for p in peers[c]}
        if not cand:
            break
        forced: dict[int, int] = {}
        for c, s in cand.items():
            if len(s) == 1:
                forced[c] = next(iter(s))
        for unit in rows + cols + boxes:
            for v in range(1, n + 1):
                if any(grid[c] == v for c in unit):
                    continue
                where = [c for c in unit if c in cand and v in cand[c]]
                if len(where) == 1:
                    forced.setdefault(where[0], v)
        if not forced or any(len(s) == 0 for s in cand.values()):
            break
        for c, v in forced.items():
            grid[c] = v
        rounds += 1
    return tuple(grid), rounds


def rate(board, box: int = 3) -> Rating:
    after, rounds = singles_rounds(board, box)
    done = all(after) and not rule_conflicts(after, box)
    res = solve(board, limit=2, box=box)
    return Rating(
        givens=sum(1 for v in board if v),
        singles_solvable=done,
        singles_rounds=rounds,
        singles_filled=sum(1 for a, b in zip(board, after) if a != b),
        search_nodes=res.nodes,
    )
