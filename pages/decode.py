"""The decode page of any view: step through one decode, with the entropy and the estimated and
ground-truth MI side by side. Instant (the default): the whole decode goes to the browser once;
step by step on the server: the same with exports and the difference map."""

from __future__ import annotations

import re

import numpy as np
import streamlit as st

from mi_viz.core.plots import PALETTE_NAME, mi_map_figure, offline_html
from mi_viz.core.samplers import SamplerConfig
from mi_viz.core.viewer import viewer_payload

from .kit import caches
from .kit.models import backbone_model
from .kit.viewer import mount_viewer
from .kit.widgets import chart, instant_view, sampler_picker, step_controls, twin_picker
from .views.base import Hint, View, open_page


def render(view: View, title: str) -> None:
    key = view.keys["decode"]
    page = open_page(view, title, key)
    scope = "" if page.view is view else page.backbone.domain  # a specialised backbone: its own sampler values
    view, b, head_path, head, dom = page.view, page.backbone, page.head_path, page.head, page.dom
    with st.sidebar:
        item, problem = view.decode_input(key, dom)
        if problem:
            (st.info if isinstance(problem, Hint) else st.error)(problem)
        st.subheader("Sampler")
        cfg = sampler_picker(
            key,
            has_head=head is not None,
            default="mi" if head is not None else "eb",
            temperature=view.default_temperature,
            domain_defaults=dom.sampler_defaults,
            scope=scope,
        )
        eps = st.select_slider("ground-truth pruning eps", [1e-4, 1e-3, 1e-2], value=1e-3, key=f"{key}_eps")
        try:
            twin = twin_picker(key, cfg, head is not None, dom.sampler_defaults)
        except ValueError as e:
            st.error(str(e))
            twin = None
    if item is None:
        (st.info if isinstance(problem, Hint) else st.error)(problem or "Choose an input in the sidebar.")
        st.stop()
    if head is None:
        st.info(
            "No MI head for this backbone: the estimated MI map and the MI samplers are off; the exact ground "
            "truth is available on demand."
        )
    trace = caches.trace_for(b, head_path, item.key, item.value, cfg)
    tkey = caches.trace_key(b, head_path, item.key, cfg)
    caption = f"{item.label} · {b.label} · {cfg.label()}" + (
        f" · temperature {cfg.temperature:g}, seed {cfg.seed}" if cfg.temperature > 0 else ""
    )
    stem = export_stem(
        view.name, item.label, cfg.label() + (f" T{cfg.temperature:g} seed{cfg.seed}" if cfg.temperature > 0 else "")
    )
    if instant_view(f"{key}_view", view.unit):
        instant(view, b, dom, item, trace, tkey, head_path, eps, caption, key, twin, stem)
    else:
        if twin is not None:
            st.info("Side by side runs in the instant view (one timeline in the browser).")
        server_steps(view, b, dom, item, trace, head_path, eps, caption, key, cfg, stem)
    view.decode_extras(dom, key)


def instant(view: View, b, dom, item, trace, tkey, head_path, eps, caption, key, twin=None, stem="decode") -> None:
    """Every step of the decode packed once for the in-browser viewer; with a twin setting, its
    decode of the same input beside it on one timeline of passes."""

    def payload_of(tr, k, title=""):
        def pack():
            with st.spinner("Packing the decode for the browser ..."):
                return viewer_payload(
                    tr,
                    kind=view.kind,
                    labels=view.labels(dom, item, len(tr.initial)),
                    symbols=view.symbols(dom),
                    value_tokens=backbone_model(b).value_tokens.tolist(),
                    mask_id=dom.mask_id,
                    est=caches.estimates_for(b, head_path, k, tr),
                    att=caches.attention_for(b, k, tr),
                    contacts=view.contacts(dom),
                    title=title,
                    gt_eps=eps,
                )

        return caches.cached("payload", (k, head_path, title, eps, PALETTE_NAME.get()), pack, max_entries=32)

    twin_tokens_of = None
    if twin is None:
        payload = payload_of(trace, tkey)
    else:
        tr2 = caches.trace_for(b, head_path, item.key, item.value, twin)
        twin_tokens_of = lambda t: tr2.steps[t].tokens  # noqa: E731
        payload = {
            **payload_of(trace, tkey, SamplerConfig.from_dict(trace.sampler).label()),
            "twin": payload_of(tr2, caches.trace_key(b, head_path, item.key, twin), twin.label()),
        }
    mount_viewer(
        payload,
        f"{key}_viewer",
        tokens_of=lambda t: trace.steps[t].tokens,
        twin_tokens_of=twin_tokens_of,
        gt_for=lambda tokens, compute: (
            caches.ground_truth(b, tokens, eps, view.unit) if compute else caches.stored_ground_truth(b, tokens, eps)
        ),
        cost_for=lambda tokens: caches.gt_cost(b, tokens, eps),
        pass_seconds=lambda tokens: caches.seconds_per_pass(b, tokens, eps),
        caption=f"{caption} · {len(trace.steps)} pass{'' if len(trace.steps) == 1 else 'es'} · estimated maps "
        "from the same passes",
        export_name=stem + (f"_vs_{export_stem(twin.label())}" if twin is not None else ""),
    )


def server_steps(view: View, b, dom, item, trace, head_path, eps, caption, key, cfg, stem="decode") -> None:
    """One step at a time on the server: metrics, the state, entropy, maps, the focus row, exports."""
    n = len(trace.steps)
    t = step_controls(key, n, (b.key, item.key, cfg.label(), cfg.temperature, cfg.seed))
    rec = trace.steps[t]
    tokens = tuple(rec.tokens)
    masked = np.array(rec.masked)
    m = st.columns(2 + len(view.metrics(dom, item, trace, t)))
    m[0].metric("Step", f"{t + 1} / {n}")
    m[1].metric("Passes so far", f"{rec.passes}" + (f" (+{rec.oracle_passes} oracle)" if rec.oracle_passes else ""))
    for c, (label, value) in zip(m[2:], view.metrics(dom, item, trace, t)):
        c.metric(label, value)
    st.caption(f"{caption} · {view.legend}")

    est = caches.estimate_of(b, head_path, tokens) if head_path is not None else None
    gt = ground_truth_control(view, b, tokens, masked, eps, key)
    positions = [i for i in range(len(tokens)) if masked[i]]
    focus = focus_control(view, key, positions, gt["mi"] if gt else est, (b.key, item.key, cfg.label()))

    # a board beside its entropy; a track (a sequence, wide) above it
    c1, c2 = st.columns(2) if view.kind == "board" else (st.container(), st.container())
    with c1:
        chart(
            view.state_figure(
                dom, item, trace, t + 1, focus=focus, title=f"After step {t + 1} (click a masked {view.unit})"
            ),
            f"{key}_state",
            on_select="rerun",
            selection_mode="points",
        )
    scale = st.select_slider(
        "Colour scale of the MI maps (nats)",
        list(view.map_scales),
        value=view.map_scale,
        key=f"{key}_scale",
        help="A fixed top keeps colours comparable across steps; 'per step' stretches each step's maps to their "
        "own largest value.",
    )
    with c2:
        chart(view.entropy_figure(dom, item, trace, t, fixed=scale != "per step"), f"{key}_ent_{t}")
    zmax = (
        scale
        if scale != "per step"
        else max([float(x.max()) for x in (est, gt and gt["mi"]) if x is not None] + [1e-6])
    )
    dots = None
    if view.has_contacts and view.contacts(dom) is not None:
        if st.toggle("Show the structure's contacts on the maps", value=True, key=f"{key}_dots"):
            dots = view.contacts(dom)
        st.caption(view.contact_caption(dom, masked, {"estimated": est, "ground truth": gt["mi"] if gt else None}))
    order, groups = view.map_order(len(tokens))
    labels = view.map_labels(dom, item, trace, t)
    kw = dict(order=order, groups=groups, batch=rec.selected, focus=focus, dots=dots)
    maps = st.columns(2)  # two maps a row: each wide enough to read
    with maps[0]:
        if est is not None:
            chart(mi_map_figure(est, masked, labels, zmax, "Estimated MI (head, same pass)", **kw), f"{key}_est_{t}")
        else:
            st.info("No MI head for this backbone.")
    with maps[1]:
        if gt is not None:
            chart(
                mi_map_figure(
                    gt["mi"],
                    masked,
                    labels,
                    zmax,
                    f"Ground-truth MI ({gt['passes']:,} passes, {gt['seconds']:.2f} s)",
                    **kw,
                ),
                f"{key}_gt_{t}",
            )
            st.caption(
                f"max pruned mass per {view.unit} {gt['dropped']:.2e}; max asymmetry {float(gt['asym'].max()):.3f} nats"
            )
    att = caches.attention_of(b, tokens)
    diff = st.columns(2)
    with diff[0]:
        if est is not None and gt is not None:
            chart(
                mi_map_figure(est - gt["mi"], masked, labels, None, "Estimated minus true MI", diverging=True, **kw),
                f"{key}_diff_{t}",
            )
    with diff[1]:
        if att is not None:
            chart(
                mi_map_figure(
                    att,
                    masked,
                    labels,
                    None,
                    "Attention (last block, sinks removed; a share)",
                    **{**kw, "unit": "share"},
                ),
                f"{key}_att_{t}",
            )
            st.caption(
                "The backbone's own attention, the dependency proxy DAWN decodes on: where it and the MI maps "
                "disagree is where the two proxies would batch differently (results: docs/samplers.md)."
            )
    view.state_extras(dom, key, masked, {"ground truth": gt["mi"] if gt else None, "estimated": est}, focus)
    if focus is not None:
        rows = {name: v[focus] for name, v in (("Estimated", est), ("True", gt["mi"] if gt else None)) if v is not None}
        figs = view.row_figures(dom, item, trace, t, rows, focus, zmax) if rows else []
        for col, fig in zip(st.columns(len(figs)) if len(figs) > 1 else [st.container()], figs):
            with col:
                chart(fig, f"{key}_row_{t}_{figs.index(fig)}")
    with st.expander("Export"):
        st.download_button(
            "Trace (JSON)",
            trace.to_json(),
            file_name=f"{stem}_trace.json",
            mime="application/json",
            key=f"{key}_trace",
            on_click="ignore",  # no rerun: a second export clicked meanwhile keeps its file
        )

        def view_html() -> str:
            """Built on click (not every rerun): plotly.js is embedded once, so the file opens offline."""
            figs = [view.state_figure(dom, item, trace, t + 1), view.entropy_figure(dom, item, trace, t, False)]
            figs += [
                mi_map_figure(mp, masked, labels, zmax, name, **kw)
                for name, mp in (("Estimated MI", est), ("Ground-truth MI", gt["mi"] if gt else None))
                if mp is not None
            ]
            return offline_html(figs, f"mi-viz: step {t + 1}")

        st.download_button(
            "Current view (HTML, opens offline)", view_html, file_name=f"{stem}_step{t + 1}.html", mime="text/html",
            key=f"{key}_html", on_click="ignore",  # no rerun: a second export clicked meanwhile keeps its file
        )  # fmt: skip
        view.exports(dom, item, trace, t, cfg)


def export_stem(*parts: str) -> str:
    """A download's file name from what was decoded: domain, input, sampler and its settings
    ("Sudoku", "Hard test set (ours, 1,000) #0", "mi gamma=0.04 lam=10" ->
    "Sudoku_Hard-test-set-ours-1000-0_mi-gamma=0.04-lam=10"), safe on every file system."""
    slug = [re.sub(r"[^A-Za-z0-9.=+-]+", "-", p.replace(",", "")).strip("-.") for p in parts]
    return "_".join(x for x in slug if x)[:150] or "decode"


def ground_truth_control(view: View, b, tokens: tuple, masked, eps: float, key: str):
    """The state's ground truth: shown when some session computed it; else its cost, and a toggle
    that computes it at every step the user visits (refused past the cap)."""
    if caches.has_ground_truth(b, tokens, eps):
        return caches.ground_truth(b, tokens, eps, view.unit)
    if int(masked.sum()) < 2:
        return None
    cost = caches.gt_cost(b, tokens, eps)
    msg = (
        f"{cost['total_passes']:,} passes, about {cost['seconds']:.0f} s on this machine ({int(masked.sum())} masked "
        f"{view.unit}s; one pass per {view.unit} and kept value)"
    )
    want = st.toggle(f"Show ground-truth MI ({msg}; cached)", key=f"{key}_gt_toggle")
    if not want:
        return None
    if cost["seconds"] > caches.GT_SECONDS_CAP:
        st.warning(
            f"The ground truth of this state would take about {cost['seconds']:.0f} s, over this page's cap of "
            f"{caches.GT_SECONDS_CAP:.0f} s: step further into the decode (fewer masked {view.unit}s) or use "
            "`python -m mi_viz mi-report` offline."
        )
        return None
    return caches.ground_truth(b, tokens, eps, view.unit)


def focus_control(view: View, key: str, positions: list[int], source, ident) -> int | None:
    """The focus position (its MI row is drawn): the user's while it stays masked, else the
    position of largest total MI; a click on the state picks it (read before the selector is
    drawn, so both show the same position); another input starts from its own default."""
    default = int(np.argmax(source.sum(1))) if source is not None and positions and source.sum() > 0 else None
    default = default if default in positions else (positions[0] if positions else None)
    if st.session_state.get(f"{key}_focus_puzzle") != ident:
        st.session_state[f"{key}_focus_puzzle"] = ident
        st.session_state[f"{key}_focus"] = default
    click = st.session_state.get(f"{key}_state")
    points = [p for p in (click.selection.points if click else []) if "customdata" in p]
    clicked = int(points[0]["customdata"]) if points else None
    if clicked is not None and clicked != st.session_state.get(f"{key}_last_click"):
        st.session_state[f"{key}_last_click"] = clicked
        if clicked in positions:
            st.session_state[f"{key}_focus"] = clicked
    if st.session_state.get(f"{key}_focus") not in positions:
        st.session_state[f"{key}_focus"] = default
    if not positions:
        return None
    st.session_state[f"{key}_focus_sel"] = st.session_state[f"{key}_focus"]
    return st.selectbox(
        f"Focus {view.unit} (its MI row is drawn below; clicking a masked {view.unit} selects it too)",
        positions,
        format_func=view.focus_name,
        key=f"{key}_focus_sel",
        on_change=lambda: st.session_state.update({f"{key}_focus": st.session_state[f"{key}_focus_sel"]}),
    )
