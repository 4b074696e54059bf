"""What every table module shares: where the results are, reading a sweep's rows, a row's label,
interpolation along a curve and a difference with its interval."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd

from mi_viz.core.samplers import row_label

ROOT = Path(__file__).resolve().parents[2]
R = ROOT / "results"


def md_table(head: list[str], rows: list[list]) -> str:
    """Rows of formatted cells under a header, as a Markdown table (through `markdown`)."""
    return markdown(pd.DataFrame([[str(c) for c in r] for r in rows], columns=head))


def rows_of(path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


label = row_label  # the library's: every table labels a row as a SamplerConfig would


def sweep_rows(dirs, keep=lambda d, r: True) -> list[tuple[Path, dict]]:
    """Several sweeps of the same inputs read as one (a rule swept apart, as DEMASK's test rows beside
    Table 1's): (folder, row) in folder order, a setting whose label an earlier folder already gave
    (and `keep` took) skipped."""
    seen: set[str] = set()
    out = []
    for d in map(Path, dirs):
        for r in rows_of(d / "sweep.csv"):
            if label(r) in seen or not keep(d, r):
                continue
            seen.add(label(r))
            out.append((d, r))
    return out


def interpolate(points, x):
    """Solve rate of a curve [(passes, solved)] at `x` passes, linear between its points; None outside."""
    pts = sorted(points)
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if x0 <= x <= x1:
            return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return None


def lead(diff: float, sd_a: float, sd_b: float, vs: str = "") -> str:
    """A difference of two rows' pair-correlation Pearson with its 90 % interval from their bootstrap
    sds, the rows treated as independent (conservative: the samplers share their seeds)."""
    half = 1.645 * (sd_a**2 + sd_b**2) ** 0.5
    return f"{diff:+.3f} ({diff - half:+.3f} .. {diff + half:+.3f}{f'; vs {vs}' if vs else ''})"


class Missing(Exception):
    """A block's results file is not there yet; the block then reads as this message."""


def need(path, how: str) -> Path:
    """`path` if it exists, else Missing naming it and `how` to make it (`{rel}`: the path, relative)."""
    p = Path(path)
    if not p.exists():
        rel = p.relative_to(ROOT)
        raise Missing(f"(no {rel} yet: `{how.format(rel=rel)}`)")
    return p


def block(fn) -> str:
    """A block's text: what `fn` renders, or why it cannot yet."""
    try:
        return fn()
    except Missing as e:
        return str(e)


def read_json(path) -> dict | None:
    p = Path(path)
    return json.loads(p.read_text()) if p.exists() else None


def markdown(df) -> str:
    """A DataFrame of formatted cells as a Markdown table (pandas' to_markdown through tabulate):
    the analysis is done before, this only renders."""
    return df.to_markdown(index=False, disable_numparse=True)


MARGIN = 0.05  # nats a residue: the equivalence margin of the antibody verdicts (two one-sided tests at 90 %)
Z_POWER = 1.6449 + 0.8416  # one-sided 5 % test at 80 % power: the smallest effect a comparison can detect


def verdict(ci: list[float], margin: float = MARGIN) -> str:
    """The word a 90 % interval of (rule minus other) earns: "ahead" / "behind" (it excludes 0), else
    "level" (two one-sided tests: inside +-margin), "no worse" (above -margin only), "no better" (below
    +margin only) or "no difference detected" (non-significance, not equivalence)."""
    lo, hi = ci
    if lo > 0:
        return "ahead"
    if hi < 0:
        return "behind"
    if -margin < lo and hi < margin:
        return "level"
    if -margin < lo:
        return "no worse"
    if hi < margin:
        return "no better"
    return "no difference detected"
