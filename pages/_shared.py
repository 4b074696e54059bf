"""App plumbing every page shares: entering through app.py, the results folder, the ground-truth
store (one per process, keyed by domain, backbone and state) and the head's estimates of a
decode's every step.

Models load once per process (st.cache_resource) and are shared by every browser session;
decodes are cached per input (st.cache_data); each session's own position in a decode lives
in st.session_state (or in the browser, for the viewer), so two users never see each other's
state. Errors become st.error messages, never tracebacks. The widgets are in pages/_widgets.py,
each domain's inputs and models in pages/_sudoku.py and pages/_protein.py.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import streamlit as st
import torch

from mi_viz.core.mi import ground_truth_mi
from mi_viz.core.reading import read_state
from mi_viz.core.samplers import Trace

ROOT = Path(__file__).resolve().parents[1]


def through_app() -> None:
    """Make sure this page runs inside app.py's navigation. Why: while a pages/ folder sits
    next to app.py, Streamlit starts in its old folder-based mode (PagesManager.
    uses_pages_directory) until some run calls st.navigation; so the first request after a
    server start, if it is a deep link (/sudoku_decode), would run the page file alone, with
    the folder list as navigation. Every page calls this first: in that mode it clears the flag
    and reruns, and the rerun goes through app.py. Not under AppTest (its mock runtime runs
    page files directly on purpose, and a rerun there would drop the widget values a test set)."""
    from streamlit.runtime import Runtime
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory and type(Runtime._instance) is Runtime:
        PagesManager.uses_pages_directory = False
        st.rerun()


RESULTS = ROOT / "results"
torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))

LOAD_COUNT = {"mdm": 0, "head": 0}  # how often each model was built in this process (tests read it)

_lock = threading.Lock()

GT_SECONDS_CAP = 90.0  # the app refuses a ground truth estimated to take longer


@st.cache_resource
def _gt_store() -> dict:
    return {}


def ground_truth_for(
    tokens: tuple, eps: float = 1e-3, show_progress: bool = True, domain: str = "sudoku", spec: str | None = None
):
    """Ground-truth MI for one state, with a progress bar; cached for every session. domain /
    spec name the backbone (Sudoku: the MDM the pages read; proteins: a get_protein_model spec)."""
    store = _gt_store()
    if domain == "sudoku":
        from pages._sudoku import get_mdm, mdm_path

        spec = spec or mdm_path()
    key = (tokens, eps, domain, spec or "protein_mdm")
    if key not in store:
        if domain == "sudoku":
            model = get_mdm(spec)
        else:
            from pages._protein import get_protein_model

            model = get_protein_model(spec or "protein_mdm")
        unit = "cell" if domain == "sudoku" else "position"
        bar = (
            st.progress(0.0, text=f"Ground-truth MI: one forward pass per ({unit}, value) ...")
            if show_progress
            else None
        )

        def cb(done, total):
            if bar is not None:  # the base pass counted, as the map title counts it (GroundTruthMI.passes)
                bar.progress(done / max(total, 1), text=f"Ground-truth MI: {done + 1}/{total + 1} passes")

        with torch.inference_mode():
            gt = ground_truth_mi(model, torch.tensor([tokens]), eps=eps, chunk=128, progress=cb)
        if bar is not None:
            bar.empty()
        store[key] = {
            "mi": gt.mi[0].numpy(),
            "asym": gt.asymmetry[0].numpy(),
            "passes": int(gt.passes[0]),
            "seconds": gt.seconds,
            "dropped": float(gt.dropped_mass[0].max()),
        }
    return store[key]


def has_ground_truth(tokens: tuple, eps: float, domain: str, spec: str) -> bool:
    return (tokens, eps, domain, spec) in _gt_store()


def _estimates_for(trace: Trace, model, head) -> list | None:
    """Every step's estimated map: the trace's own (the mi sampler read it) or one batched pass of
    the head over all the steps' states (another sampler): never once per step and rerun."""
    if not trace.steps:
        return None
    if trace.steps[0].mi is not None:
        return None  # viewer_payload reads rec.mi
    if head is None:
        return None
    x = torch.tensor([s.tokens for s in trace.steps])
    out = []
    with torch.inference_mode():
        for b in range(0, len(x), 64):
            mi = read_state(model, x[b : b + 64], head).mi
            out += [m.numpy() for m in mi] if mi is not None else [None] * len(x[b : b + 64])
    return out
