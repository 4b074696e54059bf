"""Sudoku decode: step through one decode, with entropy, estimated and true MI side by side."""

import json

import numpy as np
import streamlit as st

from mi_viz.core.plots import ENTROPY_COLORSCALE, mi_matrix_figure
from mi_viz.domains.sudoku import board as S
from mi_viz.domains.sudoku.drawing import board_figure
from pages._shared import (
    decode_trace,
    estimated_mi,
    ground_truth_for,
    models_or_error,
    puzzle_picker,
    sampler_picker,
    tokens_to_digits,
)

st.title("Sudoku decode")
loaded = models_or_error()
if loaded is None:
    st.stop()
model, head = loaded

with st.sidebar:
    st.subheader("Puzzle")
    picked = puzzle_picker("dec")
    st.subheader("Sampler")
    cfg = sampler_picker("dec", has_head=head is not None)
    eps = st.select_slider("ground-truth pruning eps", [1e-4, 1e-3, 1e-2], value=1e-3, key="dec_eps")

if picked is None:
    st.stop()
board, solution, label = picked
if cfg.name == "mi-gt":
    st.info("mi-gt runs the exact ground truth at every step (an oracle): the first decode takes a while.")
trace = decode_trace(board, cfg)
n_steps = len(trace.steps)

# the session's position; reset when the puzzle or sampler changes
key = (S.board_to_string(board), cfg.label(), cfg.temperature, cfg.seed)
if st.session_state.get("dec_key") != key:
    st.session_state.dec_key = key
    st.session_state.dec_step = 0
    st.session_state.dec_playing = False


def _set(step):
    st.session_state.dec_step = max(0, min(n_steps - 1, step))


def _toggle_play():
    st.session_state.dec_playing = not st.session_state.dec_playing
    st.session_state.dec_last_tick = 0.0


# buttons act through callbacks: they run before the script, so the slider below can
# share the same session-state key without "modified after instantiation" errors
c = st.columns([1, 1, 1, 1, 1, 6])
c[0].button(
    "Reset",
    icon=":material/first_page:",
    key="dec_reset",
    on_click=lambda: (_set(0), st.session_state.update(dec_playing=False)),
)
c[1].button(
    "Back", icon=":material/chevron_left:", key="dec_back", on_click=lambda: _set(st.session_state.dec_step - 1)
)
c[2].button(
    "Step", icon=":material/chevron_right:", key="dec_fwd", on_click=lambda: _set(st.session_state.dec_step + 1)
)
c[3].button("End", icon=":material/last_page:", key="dec_end", on_click=lambda: _set(n_steps - 1))
c[4].button(
    "Pause" if st.session_state.dec_playing else "Play",
    key="dec_play",
    on_click=_toggle_play,
    icon=":material/pause:" if st.session_state.dec_playing else ":material/play_arrow:",
)


@st.fragment(run_every=0.8)
def _autoplay():
    """While playing, advance one step every 0.8 s (time-guarded: full reruns don't double-step)."""
    import time

    if not st.session_state.get("dec_playing"):
        return
    now = time.time()
    if now - st.session_state.get("dec_last_tick", 0.0) < 0.7:
        return
    st.session_state.dec_last_tick = now
    if st.session_state.dec_step < n_steps - 1:
        st.session_state.dec_step += 1
        st.rerun(scope="app")
    else:
        st.session_state.dec_playing = False


_autoplay()
if n_steps > 1:
    st.slider("Step", 0, n_steps - 1, key="dec_step")
t = st.session_state.dec_step
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
    f"{label} · {cfg.label()} · orange outline: the batch unmasked at this step · red digits: wrong "
    "(solution known) · bold: givens"
)

# MI maps (estimated from the head, ground truth on demand) on one colour scale
est = estimated_mi(tuple(tokens)) if head is not None else None
gt = None
gt_key = ("gt_on", key, t, eps)
want_gt = st.toggle("Show ground-truth MI (one pass per cell and candidate value; cached)", key="dec_gt_toggle")
if want_gt:
    gt = ground_truth_for(tuple(tokens), eps)
zmax = max([float(x.max()) for x in (est, gt["mi"] if gt else None) if x is not None] + [1e-6])

# the cell whose MI row is drawn back on the board
sel_cells = [i for i in range(81) if masked[i]]
default_focus = int(np.argmax((gt["mi"] if gt else est).sum(1))) if (est is not None or gt) and sel_cells else None
if st.session_state.get("dec_focus_key") != (key, t):
    st.session_state.dec_focus_key = (key, t)
    st.session_state.dec_focus = default_focus if default_focus in sel_cells else (sel_cells[0] if sel_cells else None)

row1 = st.columns(2)
with row1[0]:
    fig = board_figure(
        after,
        givens,
        selected=rec.selected,
        wrong=wrong,
        focus=st.session_state.dec_focus,
        title=f"Board after step {t + 1} (click a masked cell to focus it)",
    )
    ev = st.plotly_chart(
        fig, key=f"board_{t}", on_select="rerun", selection_mode="points", config={"displayModeBar": False}
    )
    try:
        pts = [p for p in (ev.selection.points if ev else []) if "customdata" in p]  # the cell layer only
        if pts:
            cell = int(pts[0]["customdata"])
            if masked[cell]:
                st.session_state.dec_focus = cell
    except (AttributeError, KeyError, TypeError):
        pass
with row1[1]:
    H = np.array(rec.entropy)
    st.plotly_chart(
        board_figure(
            digits,
            givens,
            heat=H,
            heat_name="H (nats)",
            selected=rec.selected,
            colorscale=ENTROPY_COLORSCALE,
            title="Marginal entropy before this step",
        ),
        key=f"ent_{t}",
        config={"displayModeBar": False},
    )

if sel_cells:
    focus = st.selectbox(
        "Focus cell (its MI row is drawn on the board below)",
        sel_cells,
        index=sel_cells.index(st.session_state.dec_focus) if st.session_state.dec_focus in sel_cells else 0,
        format_func=lambda i: f"r{i // 9 + 1}c{i % 9 + 1}",
        key=f"focus_sel_{t}",
    )
    st.session_state.dec_focus = focus
else:
    focus = None

row2 = st.columns(3)
with row2[0]:
    if est is not None:
        st.plotly_chart(
            mi_matrix_figure(est, masked, zmax, "Estimated MI (head, same pass)"),
            key=f"est_{t}",
            config={"displayModeBar": False},
        )
    else:
        st.info("No MI head loaded.")
with row2[1]:
    if gt:
        st.plotly_chart(
            mi_matrix_figure(gt["mi"], masked, zmax, f"Ground-truth MI ({gt['passes']} passes, {gt['seconds']:.2f}s)"),
            key=f"gt_{t}",
            config={"displayModeBar": False},
        )
        st.caption(f"max pruned mass per cell {gt['dropped']:.2e}; max asymmetry {float(gt['asym'].max()):.3f} nats")
    else:
        st.info("Switch on 'Show ground-truth MI' to compute it for this step.")
with row2[2]:
    if focus is not None:
        src = gt["mi"] if gt else est
        name = "true" if gt else "estimated"
        if src is not None:
            st.plotly_chart(
                board_figure(
                    after,
                    givens,
                    heat=src[focus],
                    heat_name="MI",
                    zmax=zmax,
                    focus=focus,
                    colorscale="Viridis",
                    title=f"{name} MI with r{focus // 9 + 1}c{focus % 9 + 1}",
                ),
                key=f"row_{t}",
                config={"displayModeBar": False},
            )

with st.expander("Export"):
    st.download_button("Trace (JSON)", trace.to_json(), file_name="sudoku_trace.json", mime="application/json")
    html = fig.to_html(include_plotlyjs="cdn")
    if est is not None:
        html += mi_matrix_figure(est, masked, zmax, "Estimated MI").to_html(include_plotlyjs=False)
    if gt:
        html += mi_matrix_figure(gt["mi"], masked, zmax, "Ground-truth MI").to_html(include_plotlyjs=False)
    st.download_button("Current view (HTML)", html, file_name=f"sudoku_step{t + 1}.html", mime="text/html")
    st.code(
        json.dumps(
            {
                "step": t + 1,
                "selected": [f"r{i // 9 + 1}c{i % 9 + 1}" for i in rec.selected],
                "values": [v + 1 for v in rec.values],
            }
        ),
        language="json",
    )
