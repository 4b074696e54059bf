"""The comparison page of any view: one input under several samplers on a shared pass timeline
(each sampler a row with its own sliders: a slider re-decodes that row only), and sweeps."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from mi_viz.core.plots import timeline_figure
from mi_viz.core.protocol import AppDomain
from mi_viz.core.samplers import config_for

from .kit import caches
from .kit.sweeps import sweep_tab
from .kit.widgets import chart, sampler_rows
from .views.base import Hint, View, open_page


def render(view: View, title: str, tab_title: str) -> None:
    key = view.keys["compare"]
    page = open_page(view, title, key)
    view, b, head_path, model, head, dom = page.view, page.backbone, page.head_path, page.model, page.head, page.dom
    kinds = caches.head_kinds(b, head_path)
    presets, start = view.presets(dom, head is not None)
    if "tv" in kinds:  # a DEMASK head beside the MI head: its rule compared from the first visit, tau its slider
        demask = config_for("demask", dom.sampler_defaults)
        presets[f"DEMASK (tau={demask.tau:g})"] = demask
        start = [*start, f"DEMASK (tau={demask.tau:g})"]
    tab1, tab2 = st.tabs([tab_title, "Sweep"])
    with tab1:
        item, problem, overrides = view.compare_input(key, dom)
        st.caption("Each row is one sampler with its own settings; a slider re-decodes that row only.")
        rows = sampler_rows(view.rows_key(key), presets, start, kinds, dom.sampler_defaults)
        if item is None:
            (st.info if isinstance(problem, Hint) else st.error)(problem or "Choose an input.")
        elif not rows:
            st.info("Choose at least one sampler, or type your own settings.")
        else:
            side_by_side(view, key, b, dom, item, head_path, {name: c.replace(**overrides) for name, c in rows.items()})
    with tab2:
        plan = view.sweep_plan(view.keys["sweep"], b, model, head, head_path, rows)
        if plan is None:
            st.info("No sweep for this backbone.")
        else:
            sweep_tab(plan, view.keys["sweep"], b, dom, model, head, head_path)
            view.sweep_extras(view.keys["sweep"], dom)


def side_by_side(view: View, key: str, b, dom: AppDomain, item, head_path, rows: dict) -> None:
    traces = {name: caches.trace_for(b, head_path, item.key, item.value, cfg) for name, cfg in rows.items()}
    longest = max(len(tr.steps) for tr in traces.values())
    t = st.slider(
        f"Shared pass (the {view.states_name} after this many passes)",
        0,
        longest,
        min(5 if view.compare_columns > 1 else 10, longest),
        key=f"{key}_step",
        help="Every row shown after the same number of backbone passes (a row that finished earlier shows its end).",
    )
    cols = st.columns(min(view.compare_columns, len(rows)))
    table = []
    for k, (name, tr) in enumerate(traces.items()):
        tt = min(t, len(tr.steps))
        with cols[k % len(cols)]:
            chart(
                view.state_figure(dom, item, tr, tt, title=f"{name}: pass {tt} / {len(tr.steps)}", small=True),
                f"{key}_state_{k}",
            )
        table.append({"sampler": name, "passes": len(tr.steps), **view.compare_row(dom, item, tr, tt)})
    df = pd.DataFrame(table)
    st.dataframe(df, hide_index=True)
    st.download_button("The table (CSV)", df.to_csv(index=False), file_name=f"{key}_comparison.csv", mime="text/csv",
                       key=f"{key}_table_csv", on_click="ignore")  # fmt: skip
    title, ylabel = view.timeline
    chart(timeline_figure(traces, {n: c.name for n, c in rows.items()}, title, ylabel), f"{key}_timeline")
