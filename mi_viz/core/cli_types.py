"""Argument types every command line of the project shares (mi_viz, training/, benchmarks/)."""

from __future__ import annotations

import argparse
import math


def finite_float(text: str) -> float:
    """A float that is a number: 'nan', 'inf' and overflowing literals (1e400) are bad input,
    which argparse reports as `error: argument --x: ...` with exit status 2."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, not {text!r}") from None
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"must be a finite number, not {text!r}")
    return v
