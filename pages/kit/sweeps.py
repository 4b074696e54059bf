"""The comparison pages' sweep tab, written once: a grid of settings over a few inputs, one
run_bench per setting (the benchmarks' own code path) with a progress bar, scored as the domain
scores a set, drawn beside the committed sweep; the result kept in the session. A view says only
what is its own (SweepPlan: its inputs, its judge, its metric, its extra widgets)."""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from mi_viz.core.bench import BenchResult, run_bench
from mi_viz.core.errors import UserError
from mi_viz.core.order import order_map
from mi_viz.core.plots import SweepStyle, order_figure, sweep_figure
from mi_viz.core.protocol import AppDomain
from mi_viz.core.samplers import Batching, SamplerConfig, decode, row_label
from mi_viz.core.sweep import parse_grid

from .caches import head_kinds, rule_head, seconds_per_pass
from .models import head_model
from .widgets import cancel_button, cancelled, chart, grid_or_error, uploaded_text


@dataclass
class SweepPlan:
    """What one domain's sweep tab reads from its view; sweep_tab draws the rest."""

    intro: str  # what a sweep does here (Markdown)
    noun: str  # what the inputs are called ("puzzles", "proteins", "chains")
    n: tuple[int, int, int, int]  # the N slider: low, high, default, step
    grid: str  # the grid a user starts from
    metric: tuple[str, str, str]  # the column drawn, its axis label, the chart's title
    inputs: Callable[[int], list]  # the first n inputs; a UserError is shown as a message
    file_name: str  # the CSV download's name
    tag: str = ""  # what the inputs are drawn from: a kept result with another tag is not shown
    # the domain's set scoring, built on Run from the inputs: (score a set's rows, what to keep beside the result)
    judge: Callable[[list], tuple[Callable[[list], dict], dict]] | None = None
    temperature: float | None = None  # every setting's temperature (generation is judged as sampled)
    committed: tuple[Path, str] | None = None  # the committed sweep drawn beside, and its curve's name
    order: tuple[str, list[str]] | None = None  # decode order: drawing kind and position names
    # the cost stated before a run: (a sequential row's backbone passes, the judge's) for N inputs,
    # priced by one pass of this backbone timed on this machine on probe() (a typical state's tokens)
    passes: Callable[[int], tuple[int, int]] | None = None
    probe: Callable[[], tuple] | None = None
    after: Callable[[dict], None] | None = None  # under the table: what the judge kept (a floor)
    markers: Callable[[], tuple[list[dict], str]] | None = None  # points drawn on the chart, their caption
    paper: list[dict] | None = None  # the paper's points on the same axes
    scale: float = 1.0  # the metric's display scale (100: a share as %)
    caption: str = ""  # under the chart
    # the user's own inputs: an uploaded file's text -> (the inputs, a note per input set aside); None: none taken
    upload: Callable[[str], tuple[list, list[str]]] | None = None


def sweep_tab(plan: SweepPlan, key: str, b, dom: AppDomain, model, head, head_path: str | None = None) -> None:
    """The sweep tab of any view: N, the grid, its cost, Run; the table, decode order, chart. A rule
    reads its own head: the page's MI head, or the TV (DEMASK) head shipped beside it."""
    owner = b.key
    st.markdown(plan.intro)
    own = own_inputs(plan, key)  # the user's file, read and numbered (None: the shipped set)
    c1, c2 = st.columns(2)
    lo, hi, start, step = plan.n
    if own is None:
        n = int(c1.slider(f"N {plan.noun}", lo, hi, start, step, key=f"{key}_n", help=f"the first N {plan.noun}"))
    else:
        n = len(own)
        c1.caption(f"{n} {plan.noun} from your file")
    grid = c2.text_input("Grid", plan.grid, key=f"{key}_grid", help=GRID_HELP)
    if plan.passes and plan.probe:
        st.caption(cost_text(plan.passes(n), seconds_per_pass(b, plan.probe(), 1e-2), settings_in(grid)))
    cancelled("Sweep", f"{key}_cancel", keeps=KEEPS)
    slot = st.empty()
    tag = plan.tag if own is None else f"{plan.tag}:yours"
    if slot.button("Run sweep", key=f"{key}_run"):
        slot.button("Running the sweep ...", disabled=True, key=f"{key}_running")  # not clicked twice
        cfgs = grid_or_error(
            grid, "Grid", head_kinds(b, head_path) if head is not None else set(), dom.sampler_defaults
        )
        try:
            items = (plan.inputs(n) if own is None else own) if cfgs else []
            judge, kept = plan.judge(items) if cfgs and plan.judge else (None, {})
        except UserError as e:
            st.error(f"Cannot run the sweep: {e}")
            cfgs = None
        if cfgs:
            if plan.temperature is not None:
                cfgs = [c.replace(temperature=plan.temperature) for c in cfgs]
            score = (lambda r: judge(r.rows)) if judge else None

            def keep(rows: list[dict], done: bool) -> None:  # every finished setting kept: a Cancel loses none
                kept_sweep(key, owner, (tag, n, rows, kept, None if done else f"{len(rows)} of {len(cfgs)} settings"))

            def head_for(cfg: SamplerConfig):
                path = rule_head(b, head_path, cfg)
                return head if cfg.head_kind == "mi" else head_model(path, f"{b.label} TV head") if path else None

            run_sweep_now(dom, model, head_for, cfgs, items, score, key, keep)
            st.rerun()  # the finished sweep drawn without its running state (the disabled button, the Cancel)
    curves = {}
    result = kept_sweep(key, owner)
    if result and result[0] == tag:
        _, r_n, out, kept, partial = (*result, None)[:5]
        if partial:
            st.warning(f"A partial sweep: cancelled after {partial}; the rows below are the settings it finished.")
        curves[f"this sweep, {r_n} {plan.noun}" + (" (partial)" if partial else "")] = out
        sweep_table(out, plan.file_name)
        if plan.order:
            decode_order_view(out, plan.order[0], plan.order[1], key)
        if plan.after:
            plan.after(kept)
    if plan.committed and plan.committed[0].exists():
        curves[plan.committed[1]] = committed_rows(plan.committed[0])
    elif plan.committed:
        st.caption(f"No committed sweep here yet ({plan.committed[0].name}): run one to draw it.")
    markers, marked = plan.markers() if plan.markers else ([], "")
    if curves or markers:
        column, ylabel, title = plan.metric
        style = SweepStyle(metric=column, scale=plan.scale, ylabel=ylabel, paper=plan.paper)
        fig = sweep_figure(curves, style, title, markers=markers)
        chart(fig, f"{key}_plot")
        if any(e.error_y is not None and e.error_y.array is not None for e in fig.data):
            st.caption("Bars: each point's 90 % interval (its mean over the inputs, as its row's standard error says). "
                       "Two rules on the same inputs differ by less noise than their bars: the paired comparisons "
                       "in the docs read the inputs side by side.")  # fmt: skip
    for text in (marked, plan.caption):
        if text:
            st.caption(text)


GRID_HELP = (
    "Settings separated by ';', each a sampler with its parameters, a parameter's values separated by ','; "
    "e.g. 'sequential; topk:k=2,4; mi:gamma=4,8:lam=1' is five settings."
)


def settings_in(grid: str) -> int | None:
    """How many settings a grid holds (None while it does not parse: the Run says why)."""
    try:
        return len(parse_grid(grid))
    except UserError:
        return None


def cost_text(passes: tuple[int, int], spp: float, settings: int | None = None) -> str:
    """A sweep's cost before it runs: passes a setting, seconds from one measured pass, and the whole grid's."""
    decode, judge = passes
    each = (decode + judge) * spp
    total = f"; the grid's {settings} settings, up to about {settings * each:,.0f} s in all" if settings else ""
    return (
        f"Cost before you run: up to {decode:,} backbone passes a setting (a sequential row; parallel rows take "
        f"fewer){f' plus {judge:,} for the judge' if judge else ''}: about {each:,.0f} s a "
        f"setting at {1000 * spp:.0f} ms a pass, timed on this machine{total}. A progress bar follows the run; "
        "Cancel keeps the settings already finished."
    )


def own_inputs(plan: SweepPlan, key: str) -> list | None:
    """The user's uploaded inputs (plan.upload), with what was set aside said; None: the shipped set."""
    if plan.upload is None:
        return None
    src = st.radio("Inputs", [f"the shipped {plan.noun}", "your own FASTA"], horizontal=True, key=f"{key}_src")
    if src.startswith("the shipped"):
        return None
    label, why = f"A FASTA of {plan.noun} (at most 64 KB)", f"a sweep here is for a few dozen {plan.noun}"
    text, name = uploaded_text(label, f"{key}_file", 64, ("fasta", "fa", "txt"), why=why)
    if text is None:
        if name is None:
            st.info(f"Upload a FASTA of {plan.noun} to sweep over them.")
        else:
            st.error(name)  # too large, and why
        st.stop()
    try:
        items, notes = plan.upload(text)
    except UserError as e:
        st.error(f"Cannot read {name}: {e}")
        st.stop()
    for note in notes:
        st.caption(note)
    return items


def run_sweep_now(
    dom: AppDomain,
    model,
    head_for: Callable[[SamplerConfig], Any],
    cfgs: list[SamplerConfig],
    items: list,
    score: Callable[[BenchResult], dict] | None = None,
    key: str = "sweep",
    keep: Callable[[list[dict], bool], None] | None = None,
) -> list[dict]:
    """Every setting over the items (each rule reading head_for(its setting)): run_bench's summary plus
    score(result) (set-level metrics),
    with a progress bar that moves within a setting and a Cancel button beside it: a click stops
    the run at its next step (Streamlit interrupts a script at its next call); keep(rows, done) is
    called as each setting finishes, so what was finished stays."""
    cancel_button("sweep", f"{key}_cancel", keeps=KEEPS)
    bar = st.progress(0.0, text="sweep")
    out = []
    last = [0.0]
    warm = warm_up(dom, model, items, cfgs, head_for)
    st.caption(f"Warm-up before the first row: {warm:.1f} s (a pass of each rule's first state, with its head; "
               "in no row's seconds)")  # fmt: skip
    try:
        for k, cfg in enumerate(cfgs):

            def progress(done: int, total: int, k: int = k, cfg: SamplerConfig = cfg) -> None:
                now = time.perf_counter()
                if now - last[0] > 0.25:  # a few updates a second: each is a message to the browser
                    last[0] = now
                    share = (k + done / max(total, 1)) / len(cfgs)
                    bar.progress(
                        min(1.0, share), text=f"{cfg.label()} ({k + 1}/{len(cfgs)}): {done} of {total} written"
                    )

            progress(0, 1)
            head = head_for(cfg) if cfg.needs_head else None
            res = run_bench(dom, model, items, cfg, head, run=Batching(progress=progress))
            out.append({**res.summary, **(score(res) if score else {}), ORDER: res.revealed})
            if keep is not None:
                keep(list(out), k + 1 == len(cfgs))
    finally:
        bar.empty()
    return out


def warm_up(dom, model, items, cfgs: list[SamplerConfig], head_for) -> float:
    """One pass of each distinct rule on the first input, untimed by the rows: the first pass a process
    makes at a shape, and a head's first read, cost seconds that the first row's `seconds` would
    otherwise absorb (a rule with a head first took many times what it took second). Returns its seconds."""
    t0 = time.perf_counter()
    x = dom.encode(items[:1])  # (1, L): the app's models live on the CPU
    for cfg in {c.name: c for c in cfgs}.values():
        decode(model, x, cfg, head=head_for(cfg) if cfg.needs_head else None, max_steps=1)
    return time.perf_counter() - t0


KEEPS = "the settings it finished are kept (below, marked partial)"
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
        except UserError as e:
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
