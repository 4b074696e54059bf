"""The estimator page: how well an MI head matches the ground truth, for each view that has a report."""

from __future__ import annotations

import streamlit as st

from .kit.runtime import through_app
from .views.base import View


def render(views: dict[str, View]) -> None:
    through_app()
    st.title("MI estimator")
    names = {v.name: v for v in views.values()}
    pick = st.radio("Domain", list(names), horizontal=True, key="mie_domain")
    view = names[pick]
    view.sidebar_extras()  # the picked domain's sidebar only (no "Sudoku MI head" beside a protein report)
    view.estimator(view.keys["estimator"])
