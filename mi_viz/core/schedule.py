"""The learning-rate schedule both MDM trainers share (training/train_sudoku_mdm.py, train_protein_mdm.py)."""

from __future__ import annotations

import math


def progress_of(step: int, wall: float, tc) -> float:
    """Fraction of the training budget used: steps (tc.max_steps) or minutes (tc.max_minutes),
    whichever runs out first. The schedule follows it, so a time-boxed run (a GPU lease, a CPU
    run in the background) still ends its decay."""
    p = step / tc.max_steps
    if tc.max_minutes > 0:
        p = max(p, wall / (60 * tc.max_minutes))
    return min(1.0, p)


def lr_at(step: int, progress: float, tc) -> float:
    """Linear warm-up over tc.warmup steps, then cosine decay to 10 % of tc.lr."""
    if step < tc.warmup:
        return tc.lr * (step + 1) / tc.warmup
    return tc.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))
