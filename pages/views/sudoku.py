"""The Sudoku view: the MDM and the MI head a user picks, puzzles from the test sets or pasted,
boards, and the solve rate as the sweeps' measure."""

from __future__ import annotations

import csv
import json
import os
import random
from pathlib import Path

import streamlit as st
import torch

from mi_viz.core.samplers import SamplerConfig, Trace, config_for
from mi_viz.domains.sudoku import PAPER_TABLE1, SudokuDomain, solver
from mi_viz.domains.sudoku import board as S
from mi_viz.domains.sudoku.drawing import CELL_NAMES, board_figure

from ..kit.models import Backbone
from ..kit.runtime import ROOT
from ..kit.sweeps import SweepPlan
from ..kit.widgets import kept
from .base import Hint, Item, PagePlan, View
from .sudoku_estimator import estimator_page, tv_head_report
from .sudoku_sets import COMMITTED, HEAD_SCORES, PUZZLE_SETS, head_options, load_puzzle_set, puzzle_boards, stars


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


def digits(dom: SudokuDomain, tokens) -> list[int]:
    return list(dom.decode(torch.tensor([list(tokens)]))[0])


class SudokuView(View[SudokuDomain]):
    def __init__(self):
        super().__init__(
            name="Sudoku",
            unit="cell",
            kind="board",
            keys={"decode": "dec", "compare": "cmp", "sweep": "sw", "estimator": "mie"},
            pages=(
                PagePlan("pages/sudoku_decode.py", "Sudoku decode", ":material/grid_on:"),
                PagePlan("pages/sudoku_comparison.py", "Sampler comparison", ":material/compare_arrows:"),
                PagePlan("pages/mi_estimator.py", "MI estimator", ":material/insights:"),
            ),
            compare_columns=3,
            states_name="boards",
            timeline=("Cells filled vs passes", "cells filled"),
        )

    # --- the backbone and its head ------------------------------------------------------------
    def backbone(self) -> Backbone:
        heads = tuple(head_options().items())
        return Backbone(
            "Sudoku MDM",
            "sudoku",
            spec=os.environ.get("MI_VIZ_MDM", str(SudokuDomain.default_model)),
            heads=heads,
            help="Train one with `python training/train_sudoku_mdm.py` or point MI_VIZ_MDM at a checkpoint.",
        )

    def backbones(self) -> list[Backbone]:
        return [self.backbone()]

    def backbone_picker(self, key: str) -> Backbone:
        return self.backbone()  # one MDM (MI_VIZ_MDM or the shipped one); the head is picked in sidebar_extras

    def head_path(self, b: Backbone) -> str | None:
        opts = dict(b.heads)
        return opts.get(st.session_state.get("mi_head", "shipped"), opts.get("shipped"))

    def sidebar_extras(self) -> None:
        """The Sudoku pages' MI head, with what it scored on the report's test states."""
        opts = head_options()
        name = st.sidebar.selectbox(
            "Sudoku MI head",
            list(opts),
            help="Every Sudoku page's estimated MI and MI samplers read this head: the shipped one, or one "
            "of yours named in MI_VIZ_HEADS (README, Python API).",
            **kept("mi_head", "shipped", list(opts)),  # kept while a protein page (no picker there) is open
        )
        rows = list(csv.DictReader(HEAD_SCORES.read_text().splitlines())) if HEAD_SCORES.exists() else []
        row = next((r for r in rows if (ROOT / r["head"]).resolve() == Path(opts[name]).resolve()), None)
        if row:
            st.sidebar.caption(
                f"{int(row['n_params']):,} parameters, {row['mix_layers']} mix blocks; Pearson "
                f"{float(row['pearson']):.3f} with the truth on the report's test states "
                f"({HEAD_SCORES.relative_to(ROOT)})."
            )
        elif Path(opts[name] + ".json").exists():
            config = json.loads(Path(opts[name] + ".json").read_text()).get("config", {})
            st.sidebar.caption(
                f"{config.get('mix_layers', 0)} mix blocks; not scored yet: the MI estimator page "
                "scores it on the report's test states."
            )

    # --- inputs ----------------------------------------------------------------------------------
    def decode_input(self, key: str, dom: SudokuDomain) -> tuple[Item | None, str | None]:
        """A puzzle from a set (by index, or at random) or pasted."""
        st.subheader("Puzzle")
        src = st.radio("Puzzle source", list(PUZZLE_SETS) + ["Paste your own"], key=f"{key}_src")
        if src == "Paste your own":
            text = st.text_area(
                "81 characters, row by row; '.' or '0' for blanks (line breaks are fine)",
                key=f"{key}_paste",
                height=120,
                placeholder="..8...5......3.....1.....96...49..21.7...8.....41..8.5.....73...9......83...869..",
            )
            if not text.strip():
                return None, Hint("Paste a puzzle to start.")
            try:
                board = S.parse_board(text)
            except S.BoardError as e:
                return None, f"Invalid puzzle: {e}"
            res = solver.solve(board, limit=2)
            if res.count == 0:
                return None, "This puzzle has no solution: the givens contradict each other further down the search."
            if res.count > 1:
                st.warning("This puzzle has more than one solution: wrong-cell marks use one of them.")
            return Item(S.board_to_string(board), board, "pasted puzzle", res.solution), None
        rows = load_puzzle_set(str(PUZZLE_SETS[src]))
        if not rows:
            return None, f"Puzzle file missing: {PUZZLE_SETS[src]}"
        st.button(
            "Random puzzle",
            icon=":material/shuffle:",
            key=f"{key}_rand",
            on_click=lambda: st.session_state.update({f"{key}_idx": random.randrange(len(rows))}),
        )
        idx = st.number_input(
            f"Index (0..{len(rows) - 1})", 0, len(rows) - 1, key=f"{key}_idx", help="Which puzzle of the set."
        )
        row = rows[int(idx)]
        board = S.parse_board(row["puzzle"])
        sol = S.parse_board(row["solution"]) if row.get("solution") else None
        st.caption(rating_text(row))
        return Item(S.board_to_string(board), board, f"{src} #{idx}", sol), None

    editable = True

    def edited(self, dom: SudokuDomain, item: Item, tokens: list[int], pos: int, value: int | None, step: int) -> Item:
        """The board after `step` passes with one cell set (or blanked), checked as a pasted puzzle is:
        a digit its row, column or box holds already, or a board with no solution, is refused by name."""
        board = list(dom.decode(torch.tensor([tokens]))[0])  # 0 = blank
        board[pos] = 0 if value is None else value + 1
        try:
            board_t = S.parse_board(S.board_to_string(board))
        except S.BoardError as e:
            raise S.BoardError(f"that edit breaks the rules: {e}") from None
        res = solver.solve(board_t, limit=2)
        if res.count == 0:
            raise S.BoardError("after that edit the board has no solution: the givens contradict each other further on")
        what = f"{CELL_NAMES[pos]} = {value + 1}" if value is not None else f"{CELL_NAMES[pos]} blanked"
        label = f"{item.label}, after step {step} with {what}"
        solution = res.solution if res.count == 1 else None
        return Item(S.board_to_string(board_t) + f" edited {label}", board_t, label, solution)

    # --- drawings --------------------------------------------------------------------------------
    def labels(self, dom: SudokuDomain, item: Item, L: int) -> list[str]:
        return list(CELL_NAMES)

    def symbols(self, dom: SudokuDomain) -> list[str]:
        return [str(d) for d in range(1, 10)]

    def _wrong(self, item: Item, after) -> list[int]:
        return [i for i in range(81) if item.solution is not None and after[i] and after[i] != item.solution[i]]

    def state_figure(
        self, dom: SudokuDomain, item: Item, trace: Trace, t: int, focus=None, title: str = "", small: bool = False
    ):
        after = digits(dom, trace.tokens_at(t))
        sel = trace.steps[t - 1].selected if 0 < t <= len(trace.steps) else []
        givens = [v != 0 for v in item.value]
        return board_figure(
            after,
            givens,
            selected=sel,
            wrong=self._wrong(item, after),
            focus=focus,
            title=title,
            size=300 if small else 360,
        )

    def presets(self, dom: SudokuDomain, has_head: bool) -> tuple[dict, list[str]]:
        mi = config_for("mi", dom.sampler_defaults)
        mi_label = f"MI gamma={mi.gamma:g} lam={mi.lam:g} (default)"
        presets = {
            "sequential": SamplerConfig("sequential"),
            "top-k k=4": SamplerConfig("topk", k=4),
            "EB gamma=1e-4": SamplerConfig("eb", gamma=1e-4),
            "EB gamma=0.01": SamplerConfig("eb", gamma=0.01),
            "EB gamma=0.2": SamplerConfig("eb", gamma=0.2),
            mi_label: mi,
            "MI gamma=0.3 lam=1 (paper gamma)": SamplerConfig("mi", gamma=0.3, lam=1.0),
            "MI with MI=0 (ablation) gamma=0.04": SamplerConfig("mi-zero", gamma=0.04),
            "MI, release 0.3's rule: mi-pairs gamma=0.01 lam=0.25": SamplerConfig("mi-pairs", gamma=0.01, lam=0.25),
            "Fast-dLLM threshold tau=0.9": SamplerConfig("threshold", tau=0.9),
            "top-2 margin k=4": SamplerConfig("margin", k=4),
        }
        if not has_head:
            presets = {k: v for k, v in presets.items() if not v.needs_head}
        return presets, ["sequential", "EB gamma=1e-4", mi_label]

    def compare_row(self, dom: SudokuDomain, item: Item, trace: Trace, t: int) -> dict:
        final = digits(dom, trace.final)
        return {
            "solved": S.is_solution(final, item.value),
            "wrong cells at this pass": len(self._wrong(item, digits(dom, trace.tokens_at(t)))),
            "max cells per pass": max(len(s.selected) for s in trace.steps),
        }

    def decode_extras(
        self, dom: SudokuDomain, key: str, item=None, trace=None, b=None, cfg=None, twin=None, twin_trace=None
    ) -> None:
        """The verdict a Sudoku decode ends on, where the eye looks for it: solved, or how many cells are
        wrong (each half's, side by side)."""
        if item is None or trace is None:
            return
        halves = [("", trace)] if twin_trace is None else [("left: ", trace), ("right: ", twin_trace)]
        cols = st.columns(len(halves))
        for col, (side, tr) in zip(cols, halves):
            final = digits(dom, tr.final)
            wrong = len(self._wrong(item, final))
            if S.is_solution(final, item.value):
                col.success(f"{side}solved in {len(tr.steps)} passes", icon=":material/check_circle:")
            else:
                col.error(f"{side}not solved: {wrong} cell{'s' * (wrong != 1)} wrong after {len(tr.steps)} passes",
                          icon=":material/cancel:")  # fmt: skip

    def exports(self, dom: SudokuDomain, item: Item, trace: Trace, cfg, stem: str) -> list:
        final = "".join(map(str, digits(dom, trace.final))).replace("0", ".")
        return [("The final board (81 digits)", final + "\n", f"{stem}_board.txt", "text/plain")]

    # --- sweeps -----------------------------------------------------------------------------------
    def sweep_plan(self, key: str, b: Backbone, model, head, head_path, rows: dict) -> SweepPlan | None:
        """N puzzles of a set under a grid; the committed sweep of the set beside it, the paper's
        Table 1 and, on demand, each compared row's current setting as a star."""
        dom = b.dom()
        src = st.selectbox("Puzzle set", list(PUZZLE_SETS), key=f"{key}_set")
        boards = puzzle_boards(str(PUZZLE_SETS[src]), 200)  # the slider's most
        return SweepPlan(
            intro="Decode the first N puzzles of a set with a grid of samplers; each point is one setting. Grid "
            "syntax: `sampler:param=v1,v2:param=v1; ...` (each sampler's parameters: the sidebar's help, "
            "docs/samplers.md).",
            noun="puzzles",
            n=(5, 200, 20, 1),
            grid="sequential; topk:k=4; eb:gamma=1e-4,0.01; mi-zero:gamma=0.04,0.4"
            + ("; mi:gamma=0.04,0.4:lam=4" if head is not None else ""),
            metric=("solved_frac", "solved (%)", f"Solve rate vs average passes: {src}"),
            inputs=lambda n: boards[:n],
            passes=lambda n: (sum(v == 0 for board in boards[:n] for v in board), 0),  # a pass a blank at most
            probe=lambda: tuple(dom.encode(boards[:1])[0].tolist()),
            file_name="sweep.csv",
            tag=src,
            committed=COMMITTED.get(src),
            order=("board", list(CELL_NAMES)),
            markers=lambda: stars(key, b, head_path, src, rows),
            paper=PAPER_TABLE1 if src.startswith("Hard test set") else None,
            scale=100.0,
            caption="Crosses: the paper's Table 1 (its own 1,000 hard puzzles; ours are a little harder-looking)."
            if src.startswith("Hard test set")
            else "",
        )

    # --- the estimator ------------------------------------------------------------------------------
    def estimator(self, key: str) -> None:
        estimator_page(self, key)  # its own module (sudoku_estimator.py)
        tv_head_report(key)


VIEW = SudokuView()
