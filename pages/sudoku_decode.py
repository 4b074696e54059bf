"""Sudoku decode: step through one decode, with entropy, estimated and true MI side by side."""

import numpy as np
import streamlit as st

from mi_viz.core import strict_json
from mi_viz.core.plots import ENTROPY_COLORSCALE, mi_map_figure, offline_html
from mi_viz.domains.sudoku import board as S
from mi_viz.domains.sudoku.drawing import CELL_NAMES, board_figure, map_order
from pages._shared import ground_truth_for, has_ground_truth, through_app
from pages._sudoku import (
    SUDOKU,
    decode_trace,
    estimated_mi,
    head_path,
    head_picker,
    mdm_path,
    models_or_error,
    puzzle_picker,
    show_puzzle_problem,
    sudoku_viewer_payload,
    tokens_to_digits,
)
from pages._widgets import instant_view, mount_viewer, sampler_picker, step_controls

through_app()
head_picker()  # the Sudoku pages' MI head (the protein pages read their backbone's own)
st.title("Sudoku decode")
loaded = models_or_error()
if loaded is None:
    st.stop()
model, head = loaded

with st.sidebar:
    st.subheader("Puzzle")
    picked = puzzle_picker("dec")
    st.subheader("Sampler")
    cfg = sampler_picker("dec", has_head=head is not None, domain_defaults=SUDOKU.sampler_defaults)
    eps = st.select_slider("ground-truth pruning eps", [1e-4, 1e-3, 1e-2], value=1e-3, key="dec_eps")

if picked is None:
    show_puzzle_problem("dec")
    st.stop()
board, solution, label = picked
if cfg.name == "mi-gt":
    st.info("mi-gt runs the exact ground truth at every step (an oracle): the first decode takes a while.")
trace = decode_trace(board, cfg)
n_steps = len(trace.steps)
if instant_view("dec_view", "cell"):
    payload = sudoku_viewer_payload(S.board_to_string(board), cfg.to_dict(), mdm_path(), head_path())

    def gt_for(tokens, compute):
        if compute or has_ground_truth(tokens, eps, "sudoku", mdm_path()):
            return ground_truth_for(tokens, eps)
        return None

    mount_viewer(
        payload,
        "dec_viewer",
        tokens_of=lambda t: trace.steps[t].tokens,
        gt_for=gt_for,
        caption=f"{label} · {cfg.label()} · {n_steps} passes · estimated maps from the same passes",
        export_name="sudoku_decode",
    )
    st.stop()
puzzle_id = (S.board_to_string(board), cfg.label(), cfg.temperature, cfg.seed)
t = step_controls("dec", n_steps, puzzle_id)
rec = trace.steps[t]
tokens = rec.tokens
digits = tokens_to_digits(tokens)
after = tokens_to_digits(trace.tokens_at(t + 1))
givens = np.array([v != 0 for v in board])
masked = np.array(rec.masked)
wrong = [i for i in range(81) if solution is not None and after[i] and after[i] != solution[i]]
conflicts = S.conflict_cells(after)

m = st.columns(5)
m[0].metric("Step", f"{t + 1} / {n_steps}")
m[1].metric("Passes so far", f"{rec.passes}" + (f" (+{rec.oracle_passes} oracle)" if rec.oracle_passes else ""))
m[2].metric("Cells this step", len(rec.selected))
m[3].metric("Rule conflicts", len(conflicts))
m[4].metric("Wrong cells", len(wrong) if solution is not None else "n/a")
st.caption(
    f"{label} · {cfg.label()} · step t shows the board after the t-th pass: orange outline, the cells it "
    "unmasked; red digits, wrong (solution known); bold black, the givens"
)

# MI maps (estimated from the head, ground truth on demand); the focus cell's MI row goes back on the board
est = estimated_mi(tuple(tokens)) if head is not None else None
want_gt = st.toggle("Show ground-truth MI (one pass per cell and candidate value; cached)", key="dec_gt_toggle")
gt = ground_truth_for(tuple(tokens), eps) if want_gt else None
cells = [i for i in range(81) if masked[i]]

# the focus: the user's cell while it stays masked; else the cell of largest total MI. A click on
# the board moves it (the click is read before the selector is drawn, so both show the same cell)
source = gt["mi"] if gt else est
default = int(np.argmax(source.sum(1))) if source is not None and cells and source.sum() > 0 else None
default = default if default in cells else (cells[0] if cells else None)
if st.session_state.get("dec_focus_puzzle") != puzzle_id:
    st.session_state.dec_focus_puzzle = puzzle_id
    st.session_state.dec_focus = default
click = st.session_state.get("dec_board")
points = [p for p in (click.selection.points if click else []) if "customdata" in p]
clicked = int(points[0]["customdata"]) if points else None
if clicked is not None and clicked != st.session_state.get("dec_last_click"):
    st.session_state.dec_last_click = clicked
    if masked[clicked]:
        st.session_state.dec_focus = clicked
if st.session_state.get("dec_focus") not in cells:
    st.session_state.dec_focus = default
focus = st.session_state.dec_focus
if cells:
    st.session_state.dec_focus_sel = focus
c1, c2 = st.columns(2)
with c1:
    st.plotly_chart(
        board_figure(
            after,
            givens,
            selected=rec.selected,
            wrong=wrong,
            focus=focus,
            title=f"Board after step {t + 1} · red outline: the focus cell (click a masked cell)",
        ),
        key="dec_board",
        on_select="rerun",
        selection_mode="points",
        config={"displayModeBar": False},
    )
with c2:
    H = np.array(rec.entropy)
    fixed_h = st.session_state.get("dec_scale", 1.0) != "per step"
    st.plotly_chart(
        board_figure(
            digits,
            givens,
            heat=H,
            heat_name="H (nats)",
            selected=rec.selected,
            zmax=float(np.log(9)) if fixed_h else None,
            colorscale=ENTROPY_COLORSCALE,
            title="Marginal entropy before this step" + (" (scale 0..ln 9)" if fixed_h else ""),
        ),
        key=f"ent_{t}",
        config={"displayModeBar": False},
    )

if cells:

    def _pick():
        st.session_state.dec_focus = st.session_state.dec_focus_sel

    st.selectbox(
        "Focus cell (its MI row is drawn on the board below; clicking a masked cell on the board selects it too)",
        cells,
        format_func=lambda i: CELL_NAMES[i],
        key="dec_focus_sel",
        on_change=_pick,
    )
scale = st.select_slider(
    "Colour scale of the MI maps (nats)",
    ["per step", 0.1, 0.3, 1.0, 2.0],
    value=1.0,
    key="dec_scale",
    help="A fixed top keeps colours comparable across steps (and fixes the "
    "entropy map at 0..ln 9); 'per step' stretches this step's maps to their own largest value.",
)
zmax = (
    scale
    if scale != "per step"
    else max([float(x.max()) for x in (est, gt["mi"] if gt else None) if x is not None] + [1e-6])
)
order, groups = map_order()
kw = dict(order=order, groups=groups, batch=rec.selected, focus=focus)


def mi_row_board(row, which: str) -> None:
    """The focus cell's MI row (81,) drawn on the board."""
    st.plotly_chart(
        board_figure(
            after,
            givens,
            heat=row,
            heat_name="MI",
            zmax=zmax,
            focus=focus,
            colorscale="Viridis",
            title=f"{which} MI with {CELL_NAMES[focus]}",
        ),
        key=f"row_{t}",
        config={"displayModeBar": False},
    )


maps = st.columns(2)  # two maps a row: each wide enough to read (about 500 px)
with maps[0]:
    if est is not None:
        st.plotly_chart(
            mi_map_figure(est, masked, CELL_NAMES, zmax, "Estimated MI (head, same pass)", **kw),
            key=f"est_{t}",
            config={"displayModeBar": False},
        )
    else:
        st.info("No MI head loaded.")
with maps[1]:
    if gt is not None:
        st.plotly_chart(
            mi_map_figure(
                gt["mi"],
                masked,
                CELL_NAMES,
                zmax,
                f"Ground-truth MI ({gt['passes']} passes, {gt['seconds']:.2f} s)",
                **kw,
            ),
            key=f"gt_{t}",
            config={"displayModeBar": False},
        )
        st.caption(f"max pruned mass per cell {gt['dropped']:.2e}; max asymmetry {float(gt['asym'].max()):.3f} nats")
    elif focus is not None and est is not None:
        mi_row_board(est[focus], "Estimated")
if gt is not None:
    below = st.columns(2)
    if est is not None:
        with below[0]:
            st.plotly_chart(
                mi_map_figure(
                    est - gt["mi"], masked, CELL_NAMES, None, "Estimated minus true MI", diverging=True, **kw
                ),
                key=f"diff_{t}",
                config={"displayModeBar": False},
            )
    if focus is not None:
        with below[1]:
            mi_row_board(gt["mi"][focus], "True")
st.caption(
    "Maps: masked cells only, ordered by box, then row (white lines between boxes); orange rows and "
    "columns: this step's batch; red: the focus cell. Hover names both cells."
)

with st.expander("Export"):
    st.download_button("Trace (JSON)", trace.to_json(), file_name="sudoku_trace.json", mime="application/json")

    def view_html() -> str:
        """Built on click (not every rerun): plotly.js is embedded once, so the file opens offline."""
        figs = [board_figure(after, givens, selected=rec.selected, wrong=wrong)]
        if est is not None:
            figs.append(mi_map_figure(est, masked, CELL_NAMES, zmax, "Estimated MI", **kw))
        if gt:
            figs.append(mi_map_figure(gt["mi"], masked, CELL_NAMES, zmax, "Ground-truth MI", **kw))
        return offline_html(figs, f"mi-viz: Sudoku step {t + 1}")

    st.download_button(
        "Current view (HTML, opens offline)", view_html, file_name=f"sudoku_step{t + 1}.html", mime="text/html"
    )
    st.code(
        strict_json.dumps(
            {"step": t + 1, "selected": [CELL_NAMES[i] for i in rec.selected], "values": [v + 1 for v in rec.values]}
        ),
        language="json",
    )
