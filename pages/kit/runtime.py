"""The app's place on disk and its entry through app.py."""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st
import torch
from streamlit.runtime import Runtime
from streamlit.runtime.pages_manager import PagesManager

from .widgets import palette_toggle

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"
torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))


def through_app() -> None:
    """Make sure this page runs inside app.py's navigation. Why: while a pages/ folder sits
    next to app.py, Streamlit starts in its old folder-based mode (PagesManager.
    uses_pages_directory) until some run calls st.navigation; so the first request after a
    server start, if it is a deep link (/sudoku_decode), would run the page file alone, with
    the folder list as navigation. Every page calls this first: in that mode it clears the flag
    and reruns, and the rerun goes through app.py. Not under AppTest (its mock runtime runs
    page files directly on purpose, and a rerun there would drop the widget values a test set).
    Then what every page's sidebar holds: the palette of the marks (widgets.palette_toggle)."""
    if PagesManager.uses_pages_directory and type(Runtime._instance) is Runtime:
        PagesManager.uses_pages_directory = False
        st.rerun()
    palette_toggle()  # every page's sidebar: the marks' palette, remembered across pages
