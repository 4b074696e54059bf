"""The app's own measurements: the decode viewer at long lengths, its exports, side by side."""

from __future__ import annotations

import json

from .common import R, need


def viewer_table() -> str:
    """results/app/viewer.json (`python -m benchmarks.app_latency --viewer`) against issue 42's targets."""
    r = json.loads(need(R / "app" / "viewer.json", "python -m benchmarks.app_latency --viewer").read_text())
    rows = [
        "| measure | this viewer | the previous viewer | target |",
        "|---|---|---|---|",
    ]
    mb = lambda b: f"{b / 1e6:.2f} MB"  # noqa: E731
    for L, v in r["long"].items():
        rows.append(
            f"| a step at L = {int(L):,} (median of 7; slowest) | {v['step_ms']:.0f} ms ({v['step_ms_max']:.0f} ms) "
            f"| {v['previous_step_ms']:.0f} ms | {'<= 200 ms' if L == '1024' else ''} |"
        )
        rows.append(f"| its offline page, 8 steps | {mb(v['page_bytes'])} | {mb(v['previous_page_bytes'])} | |")
    s = r["sudoku"]
    rows += [
        f"| Sudoku: a step of the whole decode ({s['steps']} steps) | {s['step_ms']:.0f} ms | | <= 50 ms |",
        f"| Sudoku: a step side by side (shared pass slider) | {s['pair_step_ms']:.0f} ms | | <= 50 ms |",
        f"| Sudoku: the whole decode as an offline page (pair) | {mb(s['page_bytes'])} ({mb(s['pair_page_bytes'])}) "
        "| | <= 6 MB |",
        f"| Sudoku: the whole decode as a GIF (pair) | {mb(s['gif_bytes'])} ({mb(s['pair_gif_bytes'])}) | | <= 5 MB |",
    ]
    return "\n".join(rows)
