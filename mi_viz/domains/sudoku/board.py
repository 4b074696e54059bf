"""Sudoku boards: parsing, validation, an exact solver, generators and ratings.

A board is a tuple of N*N ints, 0 for a blank and 1..N for a digit, read row by
row. N = box**2: 9 for the real game (box 3) and 4 for the toy game (box 2) that
the exact oracle tests enumerate. Everything here is pure Python: it has to run
anywhere the app runs and be easy to audit, and a bitmask solver with the
minimum-remaining-values rule is fast enough (milliseconds per puzzle).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from ...core.errors import UserError
from ...core.paths import open_text

BLANK_CHARS = ".0"


class BoardError(UserError, ValueError):
    """A puzzle string that is not a valid Sudoku board; the message says why."""


# --------------------------------------------------------------------------- geometry


@cache
def geometry(box: int = 3):
    """Units (rows, columns, boxes) and each cell's peers for a box*box grid.

    Returns (n, rows, cols, boxes, peers): rows/cols/boxes are lists of n cell
    lists; peers[c] is the sorted tuple of cells sharing a unit with c.
    """
    n = box * box
    rows = [[r * n + c for c in range(n)] for r in range(n)]
    cols = [[r * n + c for r in range(n)] for c in range(n)]
    boxes = []
    for br in range(box):
        for bc in range(box):
            boxes.append([(br * box + r) * n + bc * box + c for r in range(box) for c in range(box)])
    peers = []
    for cell in range(n * n):
        s = set()
        for unit in rows + cols + boxes:
            if cell in unit:
                s.update(unit)
        s.discard(cell)
        peers.append(tuple(sorted(s)))
    return n, rows, cols, boxes, tuple(peers)


def cell_name(cell: int, box: int = 3) -> str:
    """Human name of a cell, 1-based: 'r3c7'."""
    n = box * box
    return f"r{cell // n + 1}c{cell % n + 1}"


def relation(i: int, j: int, box: int = 3) -> str:
    """How two cells are related: 'row', 'col', 'box' (box only, not line) or 'none'."""
    n = box * box
    ri, ci, rj, cj = i // n, i % n, j // n, j % n
    if ri == rj:
        return "row"
    if ci == cj:
        return "col"
    if (ri // box, ci // box) == (rj // box, cj // box):
        return "box"
    return "none"


# --------------------------------------------------------------------------- parsing


def parse_board(text: str, box: int = 3, check_rules: bool = True) -> tuple[int, ...]:
    """Parse an N*N-character puzzle ('.' or '0' blank) into a board tuple.

    Whitespace inside the string is ignored so that a pasted 9-line grid works.
    Raises BoardError naming the problem: wrong length, a bad character (with
    its position), or givens that break a rule (which row / column / box).
    """
    n = box * box
    s = "".join(str(text).split())
    if len(s) != n * n:
        raise BoardError(f"a {n}x{n} puzzle needs {n * n} cells, got {len(s)}")
    cells = []
    for k, ch in enumerate(s):
        if ch in BLANK_CHARS:
            cells.append(0)
        elif ch.isdigit() and 1 <= int(ch) <= n:
            cells.append(int(ch))
        else:
            raise BoardError(
                f"bad character {ch!r} at position {k + 1} ({cell_name(k, box)}): "
                f"use digits 1-{n}, '.' or '0' for blanks"
            )
    board = tuple(cells)
    if check_rules:
        conflicts = rule_conflicts(board, box)
        if conflicts:
            raise BoardError("givens break the rules: " + "; ".join(conflicts[:5]))
    return board


def board_to_string(board, blank: str = ".") -> str:
    return "".join(str(v) if v else blank for v in board)


def rule_conflicts(board, box: int = 3) -> list[str]:
    """Every duplicate digit in a row, column or box, as readable strings."""
    n, rows, cols, boxes, _ = geometry(box)
    out = []
    for kind, units in (("row", rows), ("column", cols), ("box", boxes)):
        for u, unit in enumerate(units):
            seen: dict[int, int] = {}
            for cell in unit:
                v = board[cell]
                if not v:
                    continue
                if v in seen:
                    out.append(
                        f"digit {v} twice in {kind} {u + 1} ({cell_name(seen[v], box)} and {cell_name(cell, box)})"
                    )
                else:
                    seen[v] = cell
    return out


def conflict_cells(board, box: int = 3) -> set[int]:
    """Cells whose digit also appears among their peers (for marking in the app)."""
    _, _, _, _, peers = geometry(box)
    return {c for c, v in enumerate(board) if v and any(board[p] == v for p in peers[c])}


def is_solution(board, puzzle=None, box: int = 3) -> bool:
    """Complete, obeys every rule, and keeps the givens of `puzzle` if given."""
    n = box * box
    if len(board) != n * n or any(not (1 <= v <= n) for v in board):
        return False
    if rule_conflicts(board, box):
        return False
    if puzzle is not None and any(g and g != v for g, v in zip(puzzle, board)):
        return False
    return True


# --------------------------------------------------------------------------- puzzle files


@dataclass
class PuzzleFileResult:
    puzzles: list[tuple[int, ...]]
    line_numbers: list[int]
    errors: list[str]  # "line 12: <reason>"


def read_puzzle_file(path: str | Path, box: int = 3) -> PuzzleFileResult:
    """Read one puzzle per line: first whitespace-separated field is the puzzle.

    Blank lines and lines starting with '#' are ignored; a bad line is reported
    by line number and skipped so that one typo does not lose a whole run.
    A header line whose first field is 'puzzle' (as in CSVs) is skipped too, and
    a comma-separated line uses its first field.
    """
    puzzles, lines, errors = [], [], []
    with open_text(path) as f:  # NAME.gz read as it is
        for lineno, line in enumerate(f, 1):
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            field = s.split()[0].split(",")[0]
            if field.lower() == "puzzle":
                continue
            try:
                puzzles.append(parse_board(field, box))
                lines.append(lineno)
            except BoardError as e:
                # name the whole line, not just its first field: "hello world" is not a puzzle of 5 cells
                shown = s if len(s) <= 60 else s[:57] + "..."
                more = f" (its first field {field[:20]!r}: {e})" if field != s else f": {e}"
                errors.append(f"line {lineno}: {shown!r} is not a puzzle{more}")
    return PuzzleFileResult(puzzles, lines, errors)


# --------------------------------------------------------------------------- solver


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


# --------------------------------------------------------------------------- rating


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
