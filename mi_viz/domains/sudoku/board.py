"""Sudoku boards: geometry, parsing, validation and puzzle files (the exact solver and the
generators: solver.py; the difficulty ratings: rating.py).

A board is a tuple of N*N ints, 0 for a blank and 1..N for a digit, read row by
row. N = box**2: 9 for the real game (box 3) and 4 for the toy game (box 2) that
the exact oracle tests enumerate. Everything here is pure Python: it has to run
anywhere the app runs and be easy to audit, and a bitmask solver with the
minimum-remaining-values rule is fast enough (milliseconds per puzzle).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

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
