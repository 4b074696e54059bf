"""Sudoku's validity-preserving symmetries, batched: for training under them and for
checking that MI maps move with their cells (equivariance)."""

from __future__ import annotations

import torch

from .mdm import MASK_TOKEN, N_CELLS


def random_symmetries(B: int, generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """B random validity-preserving Sudoku symmetries: (cells (B, 81), digits (B, 9)).

    Digit relabelling, row swaps inside bands, band swaps, the same for columns /
    stacks, and transpose. A transformed board reads new[k] = digits[old[cells[k]]]
    (apply_symmetry); a pairwise map transforms as new[k, l] = old[cells[k], cells[l]]
    (permute_pairs): relabelling digits changes no MI. Drawn on the CPU generator.
    """
    digits = torch.rand(B, 9, generator=generator).argsort(1)  # (B, 9)

    def line_perm():
        band = torch.rand(B, 3, generator=generator).argsort(1)  # (B, 3)
        inner = torch.rand(B, 3, 3, generator=generator).argsort(2)  # (B, 3, 3)
        return (band[:, :, None] * 3 + inner).reshape(B, 9)  # (B, 9)

    rows, cols = line_perm(), line_perm()  # (B, 9) each: new row r reads old row rows[r]
    cells = rows[:, :, None] * 9 + cols[:, None, :]  # (B, 9, 9): new (r, c) reads old (rows[r], cols[c])
    transpose = torch.rand(B, generator=generator) < 0.5  # (B,)
    cells = torch.where(transpose[:, None, None], cells.transpose(1, 2), cells)
    return cells.reshape(B, N_CELLS), digits


def apply_symmetry(tokens: torch.Tensor, cells: torch.Tensor, digits: torch.Tensor) -> torch.Tensor:
    """tokens (B, 81) -> the transformed boards (B, 81); MASK stays MASK."""
    table = torch.cat([digits, torch.full_like(digits[:, :1], MASK_TOKEN)], 1).to(tokens.device)  # (B, 10)
    return table.gather(1, tokens.gather(1, cells.to(tokens.device)))


def permute_pairs(m: torch.Tensor, cells: torch.Tensor) -> torch.Tensor:
    """A pairwise map (B, 81, 81) of the old boards -> that of the transformed ones."""
    B, L, _ = m.shape
    cells = cells.to(m.device)
    m = m.gather(1, cells[:, :, None].expand(B, L, L))  # rows
    return m.gather(2, cells[:, None, :].expand(B, L, L))  # columns
