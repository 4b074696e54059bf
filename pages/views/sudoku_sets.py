"""The Sudoku pages' data: the puzzle sets a user picks from, the committed sweeps drawn beside a
live one and the live stars on them, the heads a user can pick (shared by the decode, comparison
and estimator views)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import streamlit as st

from mi_viz.core.bench import run_bench
from mi_viz.core.paths import open_text
from mi_viz.core.samplers import SamplerConfig
from mi_viz.domains.sudoku import DOMAIN as SUDOKU
from mi_viz.domains.sudoku import board as S

from ..kit import caches
from ..kit.models import Backbone, backbone_model, head_model
from ..kit.runtime import RESULTS, ROOT
from ..kit.widgets import wilson

SHIPPED_HEAD = SUDOKU.default_head()  # the domain declares its checkpoints; the view reads them
HEAD_SCORES = RESULTS / "sudoku" / "head_scores.csv"  # benchmarks/sudoku_head_scores.py
PUZZLE_SETS = {
    "Hard test set (ours, 1,000)": ROOT / "data" / "sudoku" / "test_hard.csv.gz",
    "Singles-solvable test set (200)": ROOT / "data" / "sudoku" / "test_medium.csv.gz",
    "Kaggle hard/expert (external, 2,000)": ROOT / "data" / "external" / "kaggle3m_curated_hard_expert_ratings.csv.gz",
}
COMMITTED = {  # the committed sweep drawn beside a sweep on the same set
    "Hard test set (ours, 1,000)": (RESULTS / "sudoku" / "test_hard" / "sweep.csv", "committed, all 1,000 hard"),
    "Kaggle hard/expert (external, 2,000)": (
        RESULTS / "sudoku" / "kaggle" / "sweep.csv",
        "committed, all 2,000 Kaggle",
    ),
}


@st.cache_data
def puzzle_boards(path: str, n: int) -> list[tuple[int, ...]]:
    """The first n puzzles of a set as boards (0 = blank)."""
    return [S.parse_board(r["puzzle"]) for r in load_puzzle_set(path)[:n]]


@st.cache_data
def load_puzzle_set(path: str) -> list[dict]:
    """Rows with at least 'puzzle' (and 'solution' and rating columns where known)."""
    p = Path(path)
    if not p.exists():
        return []
    with open_text(p) as f:
        return list(csv.DictReader(f))


def head_options() -> dict[str, str]:
    """The MI heads a user can pick: the shipped one (MI_VIZ_HEAD replaces it) and the user's own,
    named in MI_VIZ_HEADS (paths joined by the system's path separator; each listed by its name),
    e.g. a head trained with training/train_head.py, to compare with the shipped one."""
    opts = {"shipped": os.environ.get("MI_VIZ_HEAD", str(SHIPPED_HEAD))}
    for path in filter(None, os.environ.get("MI_VIZ_HEADS", "").split(os.pathsep)):
        opts[Path(path).name] = path
    return opts


def stars(key: str, b: Backbone, head_path, src: str, rows: dict) -> tuple[list[dict], str]:
    """Each compared row's current setting measured live on the first N puzzles of the set, with
    a 90 % Wilson interval (off by default: a slider move would wait for it)."""
    live = st.toggle(
        "Stars: each compared row's current setting, measured live on the first N puzzles of the set",
        key=f"{key}_live_on",
        help="Off by default: measuring runs every row on N puzzles, which a slider move would wait for.",
    )
    n_live = (
        st.slider(
            "N puzzles behind the stars",
            5,
            100,
            20,
            key=f"{key}_live",
            disabled=not live,
            help="How many test puzzles the live points (stars, with their intervals) decode.",
        )  # fmt: skip
        if live
        else 0
    )
    markers = []
    for name, c in rows.items() if n_live else ():
        pt = live_point(b, head_path, str(PUZZLE_SETS[src]), n_live, c)
        lo, hi = wilson(pt["solved_frac"], n_live)
        markers.append(
            {
                "label": f"{name} (now, {n_live} puzzles)",
                "family": c.name,
                "avg_passes": pt["avg_passes"],
                "y": 100 * pt["solved_frac"],
                "lo": 100 * lo,
                "hi": 100 * hi,
            }
        )
    caption = (
        f"Stars: the rows of the first tab at their current settings, on the first {n_live} puzzles of "
        f"{src.split(' (')[0]}, with a 90 % Wilson interval of the solve rate (a small sample: the "
        "committed curve is the measured front)."
    )
    return markers, caption if markers else ""


def live_point(b: Backbone, head_path, puzzle_file: str, n: int, cfg: SamplerConfig) -> dict:
    """One setting on the first n puzzles of a set (cached per setting: a row's slider measures that row)."""

    def run():
        boards = puzzle_boards(puzzle_file, n)
        path = caches.rule_head(b, head_path, cfg)  # the MI head, or the TV head beside it (demask)
        head = head_model(path, f"{b.label} {cfg.head_kind.upper()} head") if path else None
        with st.spinner(f"Measuring {cfg.label()} on {n} puzzles ..."):
            return run_bench(b.dom(), backbone_model(b), boards, cfg, head).summary

    return caches.cached("live", (b.key, head_path, puzzle_file, n, cfg.label()), run, max_entries=256)
