"""The Sudoku pages' data: the puzzle sets a user picks from, the committed sweeps drawn beside a
live one, the shipped head (shared by the decode, comparison and estimator views)."""

from __future__ import annotations

import csv
from pathlib import Path

import streamlit as st

from ..kit.runtime import RESULTS, ROOT

SHIPPED_HEAD = ROOT / "checkpoints" / "sudoku_mi_head"
HEAD_SCORES = RESULTS / "sudoku" / "head_scores.csv"  # benchmarks/sudoku_head_scores.py
PUZZLE_SETS = {
    "Hard test set (ours, 1,000)": ROOT / "data" / "sudoku" / "test_hard.csv",
    "Singles-solvable test set (200)": ROOT / "data" / "sudoku" / "test_medium.csv",
    "Kaggle hard/expert (external, 2,000)": ROOT / "data" / "external" / "kaggle3m_curated_hard_expert_ratings.csv",
}
COMMITTED = {  # the committed sweep drawn beside a sweep on the same set
    "Hard test set (ours, 1,000)": (RESULTS / "sudoku" / "test_hard" / "sweep.csv", "committed, all 1,000 hard"),
    "Kaggle hard/expert (external, 2,000)": (
        RESULTS / "sudoku" / "kaggle" / "sweep.csv",
        "committed, all 2,000 Kaggle",
    ),
}


@st.cache_data
def load_puzzle_set(path: str) -> list[dict]:
    """Rows with at least 'puzzle' (and 'solution' and rating columns where known)."""
    p = Path(path)
    if not p.exists():
        return []
    with open(p) as f:
        return list(csv.DictReader(f))
