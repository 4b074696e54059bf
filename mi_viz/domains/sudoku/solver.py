"""The exact Sudoku solver (bitmasks, minimum remaining values) and the generators built on it:
random complete grids and unique-solution puzzles. Pure Python, milliseconds a puzzle."""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache
from typing import Any

from .board import geometry


@dataclass
class SolveResult:
    count: int  # number of solutions found, capped at `limit`
    solution: tuple[int, ...] | None  # the first solution found
    nodes: int  # search nodes visited (a difficulty signal)


def solve(board, limit: int = 2, box: int = 3, rng: random.Random | None = None) -> SolveResult:
    """Exact backtracking solver with bitmasks and minimum remaining values.

    Counts solutions up to `limit` (2 is enough to test uniqueness). With `rng`
    the digit order is shuffled, which turns the solver into a uniform-ish
    random grid generator when called on an empty board.
    """
    n, _, _, _, peers = geometry(box)
    full = (1 << (n + 1)) - 2  # bits 1..n
    nc = n * n
    grid = list(board)
    row_m = [0] * n
    col_m = [0] * n
    box_m = [0] * n
    cell_row = [c // n for c in range(nc)]
    cell_col = [c % n for c in range(nc)]
    cell_box = [(c // n) // box * box + (c % n) // box for c in range(nc)]
    for c, v in enumerate(grid):
        if v:
            b = 1 << v
            if (row_m[cell_row[c]] | col_m[cell_col[c]] | box_m[cell_box[c]]) & b:
                return SolveResult(0, None, 0)
            row_m[cell_row[c]] |= b
            col_m[cell_col[c]] |= b
            box_m[cell_box[c]] |= b
    empties = [c for c in range(nc) if not grid[c]]
    state: dict[str, Any] = {"count": 0, "solution": None, "nodes": 0}

    def rec(empties):
        state["nodes"] += 1
        if not empties:
            state["count"] += 1
            if state["solution"] is None:
                state["solution"] = tuple(grid)
            return state["count"] >= limit
        best, best_cand, best_n = -1, 0, 99
        for idx, c in enumerate(empties):
            cand = full & ~(row_m[cell_row[c]] | col_m[cell_col[c]] | box_m[cell_box[c]])
            k = cand.bit_count()
            if k < best_n:
                best, best_cand, best_n = idx, cand, k
                if k <= 1:
                    break
        if best_n == 0:
            return False
        c = empties[best]
        rest = empties[:best] + empties[best + 1 :]
        digits = [v for v in range(1, n + 1) if best_cand >> v & 1]
        if rng is not None:
            rng.shuffle(digits)
        r, co, bx = cell_row[c], cell_col[c], cell_box[c]
        for v in digits:
            b = 1 << v
            grid[c] = v
            row_m[r] |= b
            col_m[co] |= b
            box_m[bx] |= b
            stop = rec(rest)
            row_m[r] ^= b
            col_m[co] ^= b
            box_m[bx] ^= b
            grid[c] = 0
            if stop:
                return True
        return False

    rec(empties)
    return SolveResult(state["count"], state["solution"], state["nodes"])


def count_solutions(board, limit: int = 2, box: int = 3) -> int:
    return solve(board, limit=limit, box=box).count


def all_solutions(box: int = 2) -> list[tuple[int, ...]]:
    """Every complete grid (only sensible for box 2: 288 grids)."""
    return _all_solutions(box)


@cache
def _all_solutions(box):
    if box > 2:
        raise ValueError("enumerating all grids is only feasible for box 2 (4x4)")
    n = box * box
    out = []
    grid = [0] * (n * n)
    _, _, _, _, peers = geometry(box)

    def rec(c):
        if c == n * n:
            out.append(tuple(grid))
            return
        for v in range(1, n + 1):
            if all(grid[p] != v for p in peers[c] if p < c):
                grid[c] = v
                rec(c + 1)
                grid[c] = 0

    rec(0)
    return out


# --------------------------------------------------------------------------- generators


def random_grid(rng: random.Random, box: int = 3) -> tuple[int, ...]:
    """A random complete grid (randomised backtracking from an empty board)."""
    n = box * box
    res = solve([0] * (n * n), limit=1, box=box, rng=rng)
    assert res.solution is not None
    return res.solution


def make_puzzle(solution, rng: random.Random, box: int = 3, min_givens: int = 0) -> tuple[int, ...]:
    """A minimal-ish puzzle with a unique solution: remove givens in random order,
    keeping a removal only if the solution stays unique."""
    board = list(solution)
    order = list(range(len(board)))
    rng.shuffle(order)
    givens = len(board)
    for c in order:
        if givens <= min_givens:
            break
        v = board[c]
        board[c] = 0
        if count_solutions(board, 2, box) != 1:
            board[c] = v
        else:
            givens -= 1
    return tuple(board)
