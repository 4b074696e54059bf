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
import functools
import re
import sys

from .antibody import (
    antibody_cdr3_pairs_table,
    antibody_fronts_table,
    antibody_mi_table,
    antibody_natural_fronts_table,
    antibody_natural_table,
    antibody_paired_table,
    antibody_recovery_table,
    antibody_sets_table,
    antibody_species_table,
    antibody_table,
    antibody_val_table,
)
from .app import attention_vs_mi_table, viewer_table
from .common import ROOT, R, block
from .demask import oracle_rows_table, tv_overhead_table
from .family import (
    FAMILIES,
    family_anchors_table,
    family_ceiling_table,
    family_contact_classes_table,
    family_contacts_full_table,
    family_contacts_table,
    family_head_table,
    family_matched_table,
    family_models_table,
    family_oracle_table,
    family_pairs_table,
    family_targets_table,
)
from .figures import FIGURES
from .models import float16_table, models_table
from .protein import (
    figure3_table,
    protein_backbones_table,
    protein_head_baselines_table,
    protein_mi_table,
    protein_oracle_table,
    protein_separation_table,
    protein_table,
    protein_table_short,
)
from .sources import check as check_sources
from .sudoku import (
    fronts_table,
    headline_table,
    latency_table,
    matched_passes,
    mi_report_table,
    mi_short_table,
    sweep_table,
)

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

BLOCKS = {
    "headline": headline_table,
    "table1": lambda: sweep_table(R / "sudoku" / "test_hard" / "sweep.csv", paper=True),
    "matched": lambda: matched_passes(R / "sudoku" / "test_hard" / "sweep.csv"),
    "fronts": fronts_table,
    "kaggle_fronts": lambda: fronts_table(R / "sudoku" / "kaggle_fronts.json"),
    "kaggle": lambda: sweep_table(R / "sudoku" / "kaggle" / "sweep.csv"),
    "mi_report": lambda: mi_report_table(R / "sudoku" / "mi_report.json"),
    "mi_short": mi_short_table,
    "latency": latency_table,
    "table2": protein_table,
    "table2_short": protein_table_short,
    "protein_backbones": protein_backbones_table,
    "protein_mi": protein_mi_table,
    "table2_oracle": protein_oracle_table,
    "protein_separation": protein_separation_table,
    "protein_head_baselines": protein_head_baselines_table,
    "protein_figure3": figure3_table,
    "family_figure3": lambda: figure3_table(
        R / "family" / "PF00072" / "figure3.json", "python -m benchmarks.family_figure3 --families PF00072"
    ),
    "family_contacts": family_contacts_table,
    "family_contacts_full": family_contacts_full_table,
    "family_contact_classes": family_contact_classes_table,
    "family_anchors": family_anchors_table,
    "family_ceiling": family_ceiling_table,
    "family_head": family_head_table,
    "family_matched": family_matched_table,
    "family_matched_val": lambda: family_matched_table(sweep="val_sweep/sweep.csv"),
    "family_models": family_models_table,
    "family_targets": family_targets_table,
    "family_oracle": family_oracle_table,
    "antibody_cdr3": antibody_table,
    "antibody_cdrs": lambda: antibody_table("cdrs"),
    "antibody_fronts": antibody_fronts_table,
    "antibody_fronts_cdr3": lambda: antibody_fronts_table(("cdr3",)),
    "antibody_mi": antibody_mi_table,
    "antibody_paired": antibody_paired_table,
    "antibody_cdr3_pairs": antibody_cdr3_pairs_table,
    "antibody_sets": antibody_sets_table,
    "antibody_val": antibody_val_table,
    "antibody_sabdab": antibody_natural_table,
    "antibody_sabdab_fronts": antibody_natural_fronts_table,
    "antibody_sabdab_species": antibody_species_table,
    "antibody_rabd": lambda: antibody_natural_table("rabd_test"),
    "antibody_rabd_fronts": lambda: antibody_natural_fronts_table("rabd_test"),
    "antibody_recovery": antibody_recovery_table,
    "antibody_mi_natural": lambda: antibody_mi_table("mi_report.json", "make results/antibody/mi_report.json"),
    "antibody_mi_sapiens": lambda: antibody_mi_table(
        "sapiens/mi_report.json", "make results/antibody/sapiens/mi_report.json"
    ),
    "antibody_sapiens_val": lambda: antibody_val_table("sapiens"),
    "antibody_sapiens_sabdab": lambda: antibody_natural_table("sabdab_test", "sapiens"),
    "antibody_sapiens_fronts": lambda: antibody_natural_fronts_table("sabdab_test", "sapiens"),
    "tv_overhead": tv_overhead_table,
    "demask_oracles": oracle_rows_table,
    "demask_oracle_fronts": lambda: fronts_table(R / "sudoku" / "demask" / "oracles" / "fronts.json"),
    "demask_tv_sapiens": lambda: antibody_mi_table(
        "sapiens/tv_report.json", "make results/antibody/sapiens/tv_report.json", unit="a share, 0..1"
    ),
    "models": models_table,
    "float16": float16_table,
    "viewer": viewer_table,
    "attention_vs_mi": attention_vs_mi_table,
    **{f"family_pairs_{f}": functools.partial(family_pairs_table, f) for f in FAMILIES},
}
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
