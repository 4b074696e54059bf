"""The learning-rate schedule every trainer shares (the two MDM trainers and train_head.py)."""

from __future__ import annotations

import math
from typing import Any


def progress_of(step: int, wall: float, tc: Any) -> float:
    """Fraction of the training budget used: steps (tc.max_steps) or minutes (tc.max_minutes),
    whichever runs out first. The schedule follows it, so a time-boxed run (a GPU lease, a CPU
    run in the background) still ends its decay."""
    p = step / tc.max_steps
    if tc.max_minutes > 0:
        p = max(p, wall / (60 * tc.max_minutes))
    return min(1.0, p)


def lr_at(step: int, progress: float, tc: Any) -> float:
    """Linear warm-up over tc.warmup steps, then cosine decay to tc.lr_floor of tc.lr (10 % unless
    the config says otherwise: the MI heads decay to 5 %)."""
    if step < tc.warmup:
        return tc.lr * (step + 1) / tc.warmup
    floor = getattr(tc, "lr_floor", 0.1)
    return tc.lr * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress)))
