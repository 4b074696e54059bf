"""Paragraphs checked against the files they quote: a paragraph of README.md or docs/*.md that
opens with `<!-- from: PATH [PATH ...] -->` must quote only figures those files hold.

The figures checked are every number with a decimal point and every whole number of 100 or more
(counts below 100 are mostly of things: layers, families, cores); a number glued to a name
(PF00595, esm2_t6, 2H3L) or inside `code` is not a figure. A figure shown with d decimals is found
when some number x of the files gives it at that precision, as x or as a percentage (100 x); the
sign is not compared (a range "0.2-0.5" reads as 0.2 and 0.5). Files: JSON (every number and
numeric string, at any depth) and CSV (every cell). A paragraph without the mark is a reading
written by hand; a figure that is a difference or a ratio of the file's numbers belongs in a
`<!-- v:NAME -->` figure (figures.py) instead.
"""

from __future__ import annotations

import csv
import functools
import json
import re
from pathlib import Path

from .common import ROOT

MARK = re.compile(r"<!-- from: ([^>]+?) -->")
NUMBER = re.compile(r"(?:(?<![A-Za-z_.,/])[-+−]|(?<![\w.,/+−-]))(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w]|\.\d|,\d{3})")
HIDDEN = re.compile(r"`[^`]*`|<!--.*?-->|\]\([^)]*\)", re.S)  # code, comments, link targets


@functools.cache
def file_numbers(path: str) -> tuple[float, ...]:
    """Every number a results file holds (JSON leaves and numeric strings, CSV cells)."""
    p = ROOT / path
    if not p.exists():
        raise FileNotFoundError(f"{path} (named by a `from:` mark) does not exist")
    out: list[float] = []

    def add(v):
        if isinstance(v, bool):
            return
        if isinstance(v, (int, float)):
            out.append(float(v))
        elif isinstance(v, str):
            try:
                out.append(float(v))
            except ValueError:
                pass
        elif isinstance(v, dict):
            for k, x in v.items():
                add(k)
                add(x)
        elif isinstance(v, list):
            for x in v:
                add(x)

    if p.suffix == ".json":
        add(json.loads(p.read_text()))
    elif p.suffix == ".csv":
        with open(p, newline="") as f:
            for row in csv.reader(f):
                for c in row:
                    add(c)
    else:
        raise ValueError(f"{path}: a `from:` mark names JSON or CSV files")
    return tuple(out)


def figures(paragraph: str) -> list[tuple[str, float, int]]:
    """The checked figures of a paragraph: (as written, value, decimals shown)."""
    text = HIDDEN.sub(" ", paragraph)
    out = []
    for m in NUMBER.finditer(text):
        whole, frac = m.group(1).replace(",", ""), m.group(2) or ""
        if not frac and int(whole) < 100:
            continue
        out.append((m.group(0), float(whole + frac), len(frac) - 1 if frac else 0))
    return out


def found(value: float, decimals: int, numbers: tuple[float, ...]) -> bool:
    want = f"{value:.{decimals}f}"
    return any(f"{abs(x):.{decimals}f}" == want or f"{abs(100 * x):.{decimals}f}" == want for x in numbers)


def check(doc: Path) -> list[str]:
    """Every figure of every marked paragraph of one document that its files do not hold."""
    bad = []
    for para in re.split(r"\n\s*\n", doc.read_text()):
        m = MARK.search(re.sub(r"`[^`]*`", " ", para))  # a mark quoted in code is not one
        if m is None:
            continue
        numbers = tuple(x for path in m.group(1).split() for x in file_numbers(path))
        line = para.strip().splitlines()[0][:60]
        for shown, value, decimals in figures(para):
            if not found(value, decimals, numbers):
                bad.append(f"{doc.name}: {shown!r} is not in {m.group(1)} (paragraph '{line}...')")
    return bad
