"""Decode order: which step revealed each position, averaged over many decodes.

A decode records, per sequence, the step that wrote each position (DecodeResult.revealed: 0 for
what was given). Averaged over inputs of one length (Sudoku's 81 cells, a family's columns), it
shows where a sampler starts and what it leaves for last: a rule that waits for dependent
positions reveals them later than one that does not.
"""

from __future__ import annotations

import numpy as np

from .errors import InputError


def order_map(revealed: list[np.ndarray]) -> np.ndarray:
    """(L,) the mean share of its decode at which each position was revealed (step / the decode's
    steps: 1/steps for the first step, 1 for the last), over the inputs where it was masked; nan
    where it never was. ValueError when the inputs differ in length (no position to average)."""
    if not revealed:
        raise InputError("no decode to average")
    lengths = {len(r) for r in revealed}
    if len(lengths) > 1:
        raise InputError(f"decode order is averaged per position: the inputs have lengths {sorted(lengths)}")
    R = np.stack([np.asarray(r, dtype=np.float64) for r in revealed])  # (N, L)
    steps = R.max(1, keepdims=True)  # (N, 1)
    share = np.where(R > 0, R / np.maximum(steps, 1), np.nan)  # (N, L)
    with np.errstate(invalid="ignore"):
        counts = (R > 0).sum(0)
        return np.where(counts > 0, np.nansum(share, 0) / np.maximum(counts, 1), np.nan)
