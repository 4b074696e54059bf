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

A figure can also name its own source, right after it: `-1.495<!--= results/x/sweep.csv sequential pll -->`
(a CSV: the file, the row by its label as samplers.row_label writes it with spaces as `_`, the
column) or `0.265<!--= results/x/fronts.json budgets/2.5/vs_sequential/pll/diff -->` (a JSON: the
file and the key path, `/` between keys, list indices as numbers, a key's spaces as `_`). It is compared with that one
number at the precision shown, the sign too where the figure shows one (a figure written without a
sign is a magnitude: "trails by 0.265"), as a percentage where a `%` follows. A paragraph holding
one such mark must mark every figure it quotes: its figures are then each checked against their own
cell, not against any number of its files.
"""

from __future__ import annotations

import csv
import functools
import json
import re
from pathlib import Path

from mi_viz.core.samplers import row_label

from .common import ROOT

MARK = re.compile(r"<!-- from: ([^>]+?) -->")
OWN = re.compile(r"<!--= ([^>]+?) -->")  # a figure's own source, right after it
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


class SourceError(LookupError):
    """A figure's own source names a file, a row or a key that is not there."""


@functools.cache
def _csv_rows(path: str) -> tuple[dict, ...]:
    with open(ROOT / path, newline="") as f:
        return tuple(csv.DictReader(f))


def cell(spec: str):
    """The one value a figure's own source names (OWN): 'PATH ROW COLUMN' (CSV) or 'PATH KEY/PATH' (JSON)."""
    parts = spec.split()
    path = parts[0]
    if not (ROOT / path).exists():
        raise SourceError(f"{path} does not exist")
    if path.endswith(".csv"):
        if len(parts) != 3:
            raise SourceError(f"{spec!r}: a CSV source is 'PATH ROW_LABEL COLUMN'")
        rows = [r for r in _csv_rows(path) if row_label(r).replace(" ", "_") == parts[1]]
        if len(rows) != 1:
            raise SourceError(f"{path} has {len(rows)} rows labelled {parts[1]!r}")
        if parts[2] not in rows[0]:
            raise SourceError(f"{path} has no column {parts[2]!r}")
        return rows[0][parts[2]]
    if len(parts) != 2:
        raise SourceError(f"{spec!r}: a JSON source is 'PATH KEY/PATH'")
    v = json.loads((ROOT / path).read_text())
    for key in parts[1].split("/"):
        if isinstance(v, list) and key.lstrip("-").isdigit() and -len(v) <= int(key) < len(v):
            v = v[int(key)]
        elif isinstance(v, dict) and key in v:
            v = v[key]
        elif isinstance(v, dict) and [k for k in v if k.replace(" ", "_") == key]:  # a label's spaces as `_`
            v = v[next(k for k in v if k.replace(" ", "_") == key)]
        else:
            raise SourceError(f"{path} has no key {parts[1]!r} (stops at {key!r})")
    return v


def own_figures(paragraph: str) -> list[tuple[str, str, int]]:
    """(figure as written, its source, its position) for every figure followed by its own source mark."""
    out = []
    for m in OWN.finditer(paragraph):
        before = HIDDEN.sub(lambda h: " " * len(h.group(0)), paragraph[: m.start()])
        last = list(NUMBER.finditer(before))
        shown = last[-1].group(0) if last and last[-1].end() == len(before) else ""
        pct = paragraph[m.end() :].lstrip().startswith("%")
        out.append((shown + (" %" if pct else ""), m.group(1), m.start()))
    return out


def check_own(doc: Path, para: str) -> list[str]:
    """A paragraph whose figures name their own sources: each checked against its cell; an unmarked one named."""
    bad = []
    marked = own_figures(para)
    for shown, spec, _ in marked:
        where = f"{doc.name}: {shown or '(no figure)'!r} <- {spec}"
        if not shown:
            bad.append(f"{where}: the mark follows no figure")
            continue
        try:
            v = cell(spec)
            value = float(v)
        except SourceError as e:
            bad.append(f"{where}: {e}")
            continue
        except (TypeError, ValueError):
            bad.append(f"{where}: the cell holds {v!r}, not a number")
            continue
        text = shown.removesuffix(" %")
        value = 100 * value if shown.endswith("%") else value
        decimals = len(text.split(".")[1]) if "." in text else 0
        signed = text[0] in "+-−"
        want = float(text.replace("−", "-").replace(",", ""))
        got = round(value if signed else abs(value), decimals)
        if f"{got:.{decimals}f}" != f"{(want if signed else abs(want)):.{decimals}f}":
            bad.append(f"{where}: the file holds {value:g}")
    computed = re.sub(r"<!-- v:\w+ -->.*?<!-- /v -->", " ", para, flags=re.S)  # figures.py's, checked as tables
    unmarked = [f[0] for f in figures(re.sub(r"[-+−]?[\d.,]+<!--= [^>]+? -->", " ", computed))]
    if unmarked:
        bad.append(f"{doc.name}: figures without their own source in a paragraph that marks its figures: {unmarked}")
    return bad


def check(doc: Path) -> list[str]:
    """Every figure of every marked paragraph of one document that its files do not hold."""
    bad = []
    for para in re.split(r"\n\s*\n", doc.read_text()):
        if OWN.search(re.sub(r"`[^`]*`", " ", para)):
            bad += check_own(doc, para)
            continue
        m = MARK.search(re.sub(r"`[^`]*`", " ", para))  # a mark quoted in code is not one
        if m is None:
            continue
        numbers = tuple(x for path in m.group(1).split() for x in file_numbers(path))
        line = para.strip().splitlines()[0][:60]
        for shown, value, decimals in figures(para):
            if not found(value, decimals, numbers):
                bad.append(f"{doc.name}: {shown!r} is not in {m.group(1)} (paragraph '{line}...')")
    return bad
