"""A small sweep in the app: a grid of settings over a few inputs, one run_bench per setting
(the benchmarks' own code path), with a progress bar; the result kept in the session."""

from __future__ import annotations

import io
from collections.abc import Callable

import numpy as np
import pandas as pd
import streamlit as st

from mi_viz.core.bench import BenchResult, run_bench
from mi_viz.core.order import order_map
from mi_viz.core.plots import order_figure
from mi_viz.core.samplers import SamplerConfig, row_label

from .widgets import chart


def run_sweep_now(
    dom, model, head, cfgs: list[SamplerConfig], items: list, score: Callable[[BenchResult], dict] | None = None
) -> list[dict]:
    """Every setting over the items: run_bench's summary plus score(result) (set-level metrics)."""
    bar = st.progress(0.0, text="sweep")
    out = []
    try:
        for k, cfg in enumerate(cfgs):
            bar.progress(k / len(cfgs), text=f"{cfg.label()} ({k + 1}/{len(cfgs)})")
            res = run_bench(dom, model, items, cfg, head if cfg.needs_head else None)
            out.append({**res.summary, **(score(res) if score else {}), ORDER: res.revealed})
    finally:
        bar.empty()
    return out


ORDER = "_revealed"  # a row's per-input decode order (not a column of the table or the CSV)


INTERNAL = ("rule_version",)  # bookkeeping of the CSV (which version of a rule made a row), not a reading


def sweep_table(out: list[dict], file_name: str) -> None:
    """The sweep's rows as a table (without columns no row fills, or bookkeeping ones), with a CSV
    download of every column."""
    df = pd.DataFrame([{k: v for k, v in r.items() if k != ORDER} for r in out])
    shown = df.drop(columns=[c for c in INTERNAL if c in df]).replace({None: np.nan}).dropna(axis=1, how="all")
    st.dataframe(shown, hide_index=True)
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    st.download_button("Download CSV", buf.getvalue(), file_name=file_name, mime="text/csv", on_click="ignore")


def committed_rows(path) -> list[dict]:
    """A committed sweep.csv as rows (empty cells as None)."""
    return pd.read_csv(path).replace({np.nan: None}).to_dict("records")


def decode_order_view(out: list[dict], kind: str, labels: list[str], key: str) -> None:
    """The sweep's decode order per setting, averaged over its inputs (core.order.order_map)."""
    orders = {}
    for r in out:
        try:
            orders[row_label(r)] = order_map(r.get(ORDER) or [])
        except ValueError as e:
            st.caption(f"Decode order: {e}.")
            return
    if orders:
        n = len(out[0].get(ORDER) or [])
        chart(order_figure(orders, kind, labels, f"Decode order, averaged over {n} inputs"), f"{key}_order")
        st.caption(
            "Each position's colour: when it was revealed, as a share of its decode (purple: among the first steps; "
            "yellow: among the last), averaged over the inputs where it was masked."
        )


def kept_sweep(key: str, owner: object, result: tuple | None = None) -> tuple | None:
    """The sweep tab's result, kept in the session (KEY_result) with its owner (the backbone's key):
    the protein pages' backbones share one tab, so a result is read back only by the backbone that
    made it (another's would be shown as this one's, or unpacked as the wrong shape). With
    `result`: keep it; -> the kept result of this owner, or None."""
    if result is not None:
        st.session_state[f"{key}_result"], st.session_state[f"{key}_result_owner"] = result, owner
    if st.session_state.get(f"{key}_result_owner") != owner:
        return None
    return st.session_state.get(f"{key}_result")
