"""The results tables of the README and docs/, made from the committed files under results/.

    python -m benchmarks.tables            # print every table
    python -m benchmarks.tables --write    # rewrite the generated blocks of README.md and docs/*.md
    python -m benchmarks.tables --check    # exit 1 if a block differs from what the files give (CI)

A generated block sits between `<!-- tables:NAME -->` and `<!-- /tables -->`; the prose around
it is written by hand, the numbers inside it never are, so they cannot drift from results/.
A figure quoted in a sentence sits between `<!-- v:NAME -->` and `<!-- /v -->` (figures.py),
checked the same way; a paragraph that opens with `<!-- from: PATH -->` has every figure it quotes
found in PATH (sources.py); any other sentence is a reading, not a result.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import re
import sys

from .common import ROOT, block
from .figures import FIGURES
from .sources import check as check_sources

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _blocks() -> dict:
    """Every module of this package that writes blocks declares them in its `BLOCKS`; a new domain's
    tables are one module here, with nothing to add to this file. A name declared twice is an error."""
    out: dict = {}
    for mod in pkgutil.iter_modules(__path__):
        if mod.name.startswith("_"):  # __main__ would run the CLI
            continue
        for name, fn in getattr(importlib.import_module(f"{__name__}.{mod.name}"), "BLOCKS", {}).items():
            if name in out:
                raise RuntimeError(f"generated block {name!r} declared twice (second in {mod.name}.py)")
            out[name] = fn
    return out


BLOCKS = _blocks()
BLOCK = re.compile(r"(<!-- tables:(\w+) -->\n)(.*?)(<!-- /tables -->)", re.S)
FIGURE = re.compile(r"(<!-- v:(\w+) -->)(.*?)(<!-- /v -->)", re.S)


def render(text: str) -> str:
    def sub(m):
        if m.group(2) not in BLOCKS:
            raise SystemExit(f"unknown generated block {m.group(2)!r}; known: {sorted(BLOCKS)}")
        return m.group(1) + block(BLOCKS[m.group(2)]) + "\n" + m.group(4)

    def figure(m):
        if m.group(2) not in FIGURES:
            raise SystemExit(f"unknown figure {m.group(2)!r}; known: {sorted(FIGURES)}")
        return m.group(1) + FIGURES[m.group(2)]() + m.group(4)

    return FIGURE.sub(figure, BLOCK.sub(sub, text))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args(argv)
    if not (a.write or a.check):
        for name, fn in BLOCKS.items():
            print(f"### {name}\n\n{block(fn)}\n")
        return 0
    stale = []
    for doc in DOCS:
        text = doc.read_text()
        new = render(text)
        if new != text:
            stale.append(str(doc.relative_to(ROOT)) if doc.is_relative_to(ROOT) else str(doc))
            if a.write:
                doc.write_text(new)
    unsourced = [bad for doc in DOCS for bad in check_sources(doc)]
    for bad in unsourced:
        print(f"figure not in its file: {bad}", file=sys.stderr)
    if a.check and stale:
        print(f"stale generated tables in {stale}: run `python -m benchmarks.tables --write`", file=sys.stderr)
    if a.check and (stale or unsourced):
        return 1
    print(f"{'rewrote' if a.write else 'checked'}: {stale or 'all up to date'}")
    return 0
