"""The benchmarks' timer."""

from __future__ import annotations

import statistics
import time


def median_seconds(fn, repeats: int) -> float:
    """Median wall time of fn() over `repeats` calls, after one warm-up call (the benchmarks' timer)."""
    fn()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)
