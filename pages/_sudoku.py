"""The Sudoku pages' models and inputs: the MDM and the head the sidebar picks, the puzzle sets and
pickers, cached decodes, the head's maps, the viewer's payload."""

from __future__ import annotations

import csv
import os
import random
from pathlib import Path

import numpy as np
import streamlit as st
import torch

from mi_viz.core.checkpoints import CheckpointError
from mi_viz.core.estimator import check_head_fits, load_head
from mi_viz.core.reading import read_state
from mi_viz.core.samplers import SAMPLERS, SamplerConfig, Trace, decode
from mi_viz.domains import get_domain
from mi_viz.domains.sudoku import board as S
from pages._shared import LOAD_COUNT, RESULTS, ROOT, _estimates_for, _lock
from pages._widgets import kept

SUDOKU = get_domain("sudoku")


def mdm_path() -> str:
    """The MDM checkpoint: MI_VIZ_MDM if set (read on every run), else the shipped one."""
    return os.environ.get("MI_VIZ_MDM", str(SUDOKU.default_model))


SHIPPED_HEAD = ROOT / "checkpoints" / "sudoku_mi_head"

BASELINE_HEAD = ROOT / "checkpoints" / "sudoku_mi_head_baseline"


def head_options() -> dict[str, str]:
    """The MI heads a user can pick, by name: the shipped one (MI_VIZ_HEAD if set) and the
    previous release's head, kept as a baseline (README, Models)."""
    opts = {"shipped": os.environ.get("MI_VIZ_HEAD", str(SHIPPED_HEAD))}
    if Path(str(BASELINE_HEAD) + ".json").exists():
        opts["baseline (previous release)"] = str(BASELINE_HEAD)
    return opts


def head_path() -> str:
    """The head the Sudoku pages read: the sidebar's choice (head_picker), else the shipped one."""
    opts = head_options()
    choice = st.session_state.get("mi_head", "shipped")
    return opts.get(choice, opts["shipped"])


def head_is_reported() -> bool:
    """Whether the committed MI report (results/sudoku/mi_report*) is this head's own."""
    return Path(head_path()).resolve() == SHIPPED_HEAD.resolve()


def head_picker() -> None:
    """Sidebar choice of the MI head, with what it scored on the report's test states."""
    opts = head_options()
    if len(opts) < 2:
        return
    name = st.sidebar.selectbox(
        "Sudoku MI head",
        list(opts),
        **kept(
            "mi_head", "shipped" if "shipped" in opts else list(opts)[0], list(opts)
        ),  # kept while a protein page (no picker there) is open
        help="Every page's estimated MI and 'mi' sampler read this head. The baseline is "
        "the previous release's head (no mix blocks), kept for comparison.",
    )
    scores = RESULTS / "sudoku" / "head_scores.csv"  # benchmarks/sudoku_head_scores.py
    rel = Path(opts[name]).resolve()
    rows = list(csv.DictReader(scores.read_text().splitlines())) if scores.exists() else []
    row = next((r for r in rows if (ROOT / r["head"]).resolve() == rel), None)
    if row:
        st.sidebar.caption(
            f"{int(row['n_params']):,} parameters, {row['mix_layers']} mix blocks; "
            f"Pearson {float(row['pearson']):.3f} "
            f"with the truth on the report's test states ({scores.relative_to(ROOT)})."
        )


PUZZLE_SETS = {
    "Hard test set (ours, 1,000)": ROOT / "data" / "sudoku" / "test_hard.csv",
    "Singles-solvable test set (200)": ROOT / "data" / "sudoku" / "test_medium.csv",
    "Kaggle hard/expert (external, 2,000)": ROOT / "data" / "external" / "kaggle3m_curated_hard_expert_ratings.csv",
}


@st.cache_resource(show_spinner="Loading the Sudoku MDM ...")
def get_mdm(path: str):
    with _lock:
        LOAD_COUNT["mdm"] += 1
        return SUDOKU.load_model(path)


@st.cache_resource(show_spinner="Loading the MI head ...")
def get_head(path: str):
    with _lock:
        LOAD_COUNT["head"] += 1
        return load_head(path)


def models_or_error(need_head: bool = True):
    """(model, head) or None after showing a clear message (no traceback)."""
    try:
        model = get_mdm(mdm_path())
    except CheckpointError as e:
        st.error(f"Cannot load the Sudoku MDM: {e}")
        st.info("Train one with `python training/train_mdm.py` or point MI_VIZ_MDM at a checkpoint.")
        return None
    head = None
    if need_head:
        try:
            head, _ = get_head(head_path())
            check_head_fits(head, model)
        except CheckpointError as e:
            head = None
            st.warning(f"MI head not available ({e}); estimated MI and the 'mi' sampler are disabled.")
    return model, head


@st.cache_data
def load_puzzle_set(path: str) -> list[dict]:
    """Rows with at least 'puzzle' (and 'solution' and rating columns where known)."""
    p = Path(path)
    if not p.exists():
        return []
    with open(p) as f:
        return list(csv.DictReader(f))


def rating_text(row: dict) -> str:
    parts = []
    if "singles_solvable" in row:
        parts.append("singles-solvable" if row["singles_solvable"] == "1" else "hard (singles get stuck)")
        parts.append(
            f"{row.get('givens')} givens, {row.get('singles_rounds')} singles rounds, "
            f"{row.get('search_nodes')} search nodes"
        )
    if "kaggle_difficulty" in row:
        parts.append(f"Kaggle difficulty {row['kaggle_difficulty']} ({row.get('level')}), {row.get('clues')} clues")
    return "; ".join(parts)


def _problem(key: str, message: str, show=None):
    """A puzzle-picker problem, named in the sidebar and kept for the page's main area
    (show_puzzle_problem), where a user looking at the maps will see it."""
    show = show or st.error
    show(message)
    st.session_state[f"{key}_problem"] = (message, show is st.error)
    return None


def show_puzzle_problem(key: str) -> None:
    """In the main area: why the puzzle picker of `key` returned nothing."""
    message, is_error = st.session_state.get(f"{key}_problem", ("Choose or paste a puzzle in the sidebar.", False))
    (st.error if is_error else st.info)(message)


def puzzle_picker(key: str):
    """Widgets to choose a puzzle. Returns (board tuple, solution tuple|None, label) or None."""
    src = st.radio("Puzzle source", list(PUZZLE_SETS) + ["Paste your own"], key=f"{key}_src")
    if src == "Paste your own":
        text = st.text_area(
            "81 characters, row by row; '.' or '0' for blanks (line breaks are fine)",
            key=f"{key}_paste",
            height=120,
            placeholder="..8...5......3.....1.....96...49..21.7...8.....41..8.5.....73...9......83...869..",
        )
        if not text.strip():
            return _problem(key, "Paste a puzzle to start.", st.info)
        try:
            board = S.parse_board(text)
        except S.BoardError as e:
            return _problem(key, f"Invalid puzzle: {e}")
        res = S.solve(board, limit=2)
        if res.count == 0:
            return _problem(
                key, "This puzzle has no solution: the givens contradict each other further down the search."
            )
        if res.count > 1:
            st.warning("This puzzle has more than one solution: wrong-cell marks use one of them.")
        return board, res.solution, "pasted puzzle"
    rows = load_puzzle_set(str(PUZZLE_SETS[src]))
    if not rows:
        return _problem(key, f"Puzzle file missing: {PUZZLE_SETS[src]}")
    st.button(
        "Random puzzle",
        icon=":material/shuffle:",
        key=f"{key}_rand",
        on_click=lambda: st.session_state.update({f"{key}_idx": random.randrange(len(rows))}),
    )
    idx = st.number_input(f"Index (0..{len(rows) - 1})", 0, len(rows) - 1, key=f"{key}_idx")
    row = rows[int(idx)]
    board = S.parse_board(row["puzzle"])
    sol = S.parse_board(row["solution"]) if row.get("solution") else None
    st.caption(rating_text(row))
    return board, sol, f"{src} #{idx}"


@st.cache_data(show_spinner="Decoding ...", max_entries=64)
def decode_trace_json(puzzle: str, cfg: dict, mdm: str, head_ckpt: str) -> str:
    model = get_mdm(mdm)
    head = get_head(head_ckpt)[0] if SAMPLERS[cfg["name"]].needs_head else None
    x = SUDOKU.encode([S.parse_board(puzzle)])
    res = decode(model, x, SamplerConfig.from_dict(cfg), head=head, record=True)
    return res.traces[0].to_json()


def decode_trace(board, cfg: SamplerConfig) -> Trace:

    return Trace.from_json(decode_trace_json(S.board_to_string(board), cfg.to_dict(), mdm_path(), head_path()))


@st.cache_data(show_spinner="Measuring the current settings ...", max_entries=256)
def live_point(puzzle_file: str, n: int, cfg: dict, mdm: str, head_ckpt: str) -> dict:
    """One setting on the first n puzzles of a set: run_bench's summary (cached per setting, so
    moving one row's slider measures that row only)."""
    from mi_viz.core.bench import run_bench

    rows = load_puzzle_set(puzzle_file)[:n]
    model = get_mdm(mdm)
    head = get_head(head_ckpt)[0] if SAMPLERS[cfg["name"]].needs_head else None
    return run_bench(
        SUDOKU, model, [S.parse_board(r["puzzle"]) for r in rows], SamplerConfig.from_dict(cfg), head
    ).summary


def estimated_mi(tokens: tuple) -> np.ndarray:
    return _estimated_mi(tokens, mdm_path(), head_path())


@st.cache_data(max_entries=512)
def _estimated_mi(tokens: tuple, mdm: str, head_ckpt: str) -> np.ndarray:
    model = get_mdm(mdm)
    head, _ = get_head(head_ckpt)
    with torch.inference_mode():
        return read_state(model, torch.tensor([tokens]), head).mi[0].numpy()


def report_estimates() -> np.ndarray:
    """The chosen head's estimates at the committed report's pairs (fidelity.head_at_pairs)."""
    return _report_estimates(mdm_path(), head_path())


@st.cache_data(show_spinner="Reading the report's states with this head ...", max_entries=16)
def _report_estimates(mdm: str, head_ckpt: str) -> np.ndarray:
    from mi_viz.core.fidelity import head_at_pairs, read_pairs

    pt, tokens = read_pairs(RESULTS / "sudoku" / "mi_report_pairs.npz")
    model = get_mdm(mdm)
    return head_at_pairs(model, get_head(head_ckpt)[0], tokens, pt)


@st.cache_data(show_spinner="Packing the decode for the browser ...", max_entries=32)
def sudoku_viewer_payload(puzzle: str, cfg: dict, mdm: str, head_ckpt: str) -> dict:
    from mi_viz.core.viewer import viewer_payload

    trace = Trace.from_json(decode_trace_json(puzzle, cfg, mdm, head_ckpt))
    model, head = get_mdm(mdm), get_head(head_ckpt)[0]
    return viewer_payload(
        trace,
        kind="board",
        labels=[SUDOKU.position_name(i) for i in range(81)],
        symbols=[str(d) for d in range(1, 10)],
        value_tokens=model.value_tokens.tolist(),
        mask_id=model.mask_id,
        est=_estimates_for(trace, model, head),
    )


def tokens_to_digits(tokens) -> list[int]:
    return list(SUDOKU.decode(torch.tensor([tokens]))[0])
