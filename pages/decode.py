"""The decode page of any view: step through one decode, with the entropy and the estimated and
ground-truth MI side by side. One viewer: the whole decode goes to the browser once (stepping,
playing, focusing a position and the difference map run there; a step's ground truth is computed
here on request, its cost stated first), with the decode's exports under it."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from mi_viz.core.attention import LAST, Site
from mi_viz.core.errors import UserError
from mi_viz.core.plots import PALETTE_NAME
from mi_viz.core.protocol import AppDomain
from mi_viz.core.samplers import SamplerConfig
from mi_viz.core.viewer import Layout, MadeBy, ViewerMaps, ground_truth_record, trace_meta, viewer_payload

from .kit import caches
from .kit.models import backbone_model
from .kit.viewer import mount_viewer
from .kit.widgets import chart, sampler_picker, twin_picker
from .views.base import Hint, View, open_page


def render(view: View, title: str) -> None:
    key = view.keys["decode"]
    page = open_page(view, title, key)
    scope = "" if page.view is view else page.backbone.domain  # a specialised backbone: its own sampler values
    view, b, head_path, head, dom = page.view, page.backbone, page.head_path, page.head, page.dom
    kinds = caches.head_kinds(b, head_path)  # the maps this backbone has heads for: the rules offered
    with st.sidebar:
        item, problem = view.decode_input(key, dom)
        if problem:
            (st.info if isinstance(problem, Hint) else st.error)(problem)
        st.subheader("Sampler")
        cfg = sampler_picker(
            key,
            has_head=kinds,
            default="mi" if head is not None else "eb",
            temperature=dom.default_temperature,  # the domain's: one default, the CLI's too
            domain_defaults=dom.sampler_defaults,
            scope=scope,
        )
        eps = st.select_slider(
            "ground-truth pruning eps", [1e-4, 1e-3, 1e-2], value=1e-3, key=f"{key}_eps",
            help="The exact map conditions on each masked position's values of probability at least eps (and its "
            "most likely one): smaller is more exact and costs more passes; the dropped mass is reported.",
        )  # fmt: skip
        measure = MEASURE_KEYS[
            st.radio(
                "Dependence drawn",
                list(MEASURE_KEYS),
                horizontal=True,
                key=f"{key}_measure",
                help="The maps' measure, estimated and exact: the pairwise MI (the paper's), or DEMASK's expected "
                "total-variation influence (Ringel et al. 2026), both from the same conditioned passes; side by "
                "side: the MI maps with the TV head's estimate of the same pass beside them.",
            )
        ]
        site = attention_picker(key, b)
        try:
            twin = twin_picker(key, cfg, kinds, dom.sampler_defaults)
        except UserError as e:
            st.error(str(e))
            twin = None
    if item is None:
        (st.info if isinstance(problem, Hint) else st.error)(problem or "Choose an input in the sidebar.")
        st.stop()
    root = item.key  # the sidebar's input: an edit made below replaces it until undone or the input changes
    item = edited_input(key, item)
    if head is None:
        st.info(
            "No MI head for this backbone: the estimated MI map and the MI samplers are off; the exact ground "
            "truth is available on demand."
        )
    trace = caches.trace_for(b, head_path, item.key, item.value, cfg)
    caption = f"{item.label} · {b.label} · {setting_name(cfg)}" + (
        f" (left) beside {setting_name(twin)} (right)" if twin is not None else ""
    )
    stem = export_stem(view.name, item.label, setting_name(cfg, short=True))
    map_head = head_path  # the head whose estimates are drawn; the decodes always read the MI head (head_path)
    beside_head = None
    if measure == "mi+tv":  # the MI maps, and the TV head's estimate of the same pass beside them
        measure, beside_head = "mi", caches.tv_head(b)
        if beside_head is None:
            st.info("No TV (DEMASK) head for this backbone: only the MI maps are drawn.")
    if measure != "mi":  # the estimated maps from a head trained on that measure, where the backbone has one
        map_head = caches.tv_head(b)
        if map_head is None:
            st.info(f"No {MEASURE_NAMES[measure]} head for this backbone: its estimated map is off; the exact one is "
                    "on demand.")  # fmt: skip
    show_decode(
        view,
        b,
        dom,
        item,
        trace,
        caches.trace_key(b, head_path, item.key, cfg),
        head_path,
        map_head,
        eps,
        caption,
        key,
        twin,
        stem,
        measure,
        site,
        beside_head,
    )
    if twin is None:
        exports(view, dom, item, trace, cfg, stem, key, b, eps)
    else:  # both halves' files, each row named by its setting
        for side, c in (("left", cfg), ("right", twin)):
            st.caption(f"The {side} half's files: {setting_name(c)}")
            tr = trace if c is cfg else caches.trace_for(b, head_path, item.key, item.value, c)
            s_ = stem if c is cfg else export_stem(view.name, item.label, setting_name(c, short=True))
            exports(view, dom, item, tr, c, s_, f"{key}_{side}", b, eps)
    if view.editable:
        edit_section(view, dom, item, trace, key, root)
    if view.has_structure:
        structure_section(view, b, dom, trace, head_path, eps, key)
    if view.kind == "track" and twin is None:
        attention_section(view, b, dom, item, trace, caches.trace_key(b, head_path, item.key, cfg), key, site)
    twin_trace = caches.trace_for(b, head_path, item.key, item.value, twin) if twin is not None else None
    view.decode_extras(dom, key, item, trace, b, cfg, twin, twin_trace)


def show_decode(
    view: View,
    b,
    dom: AppDomain,
    item,
    trace,
    tkey,
    head_path,
    map_head,
    eps,
    caption,
    key,
    twin=None,
    stem="decode",
    measure="mi",
    site: Site = LAST,
    beside_head=None,
) -> None:
    """Every step of the decode packed once for the in-browser viewer; with a twin setting, its
    decode of the same input beside it on one timeline of passes. head_path: the MI head the decodes
    read (the trace's key); map_head: the head whose estimates are drawn (the measure's); beside_head:
    a TV head whose estimates are drawn beside them (MI and TV side by side), or None."""

    def payload_of(tr, k, title=""):
        def pack():
            with st.spinner("Packing the decode for the browser ..."):
                layout = Layout(
                    view.kind,
                    view.labels(dom, item, len(tr.initial)),
                    view.symbols(dom),
                    backbone_model(b).value_tokens.tolist(),
                    dom.mask_id,
                    regions=view.regions(dom, item),
                    contacts=view.contacts(dom),
                )
                maps = ViewerMaps(
                    est=caches.estimates_for(b, map_head, k, tr, measure),
                    measure=measure,
                    att=caches.attention_for(b, k, tr, site),
                    attention_name=site_name,
                    beside=beside_of(tr, k),
                    gt_eps=eps,
                )
                return viewer_payload(tr, layout, maps, title=title)

        return caches.cached("payload", payload_key(k, title), pack, max_entries=32)

    def beside_of(tr, k):  # the TV head's map of every step beside the MI ones, or None
        tv = caches.estimates_for(b, beside_head, k, tr, "tv") if beside_head is not None else None
        return ("tv", tv) if tv is not None and any(m is not None for m in tv) else None

    def payload_key(k, title=""):  # what a payload depends on: its decode, head, title, eps, palette, measure, site
        return (k, map_head, title, eps, PALETTE_NAME.get(), measure, site, beside_head)

    shape = caches.attention_sites(b)
    site_name = site.name(shape[0]) if shape is not None else ""

    twin_tokens_of = None
    if twin is None:
        payload, ident = payload_of(trace, tkey), payload_key(tkey)
    else:
        tr2 = caches.trace_for(b, head_path, item.key, item.value, twin)
        twin_tokens_of = lambda t: tr2.steps[t].tokens  # noqa: E731
        k2, title, title2 = (
            caches.trace_key(b, head_path, item.key, twin),
            SamplerConfig.from_dict(trace.sampler).label(),
            twin.label(),
        )
        payload = {**payload_of(trace, tkey, title), "twin": payload_of(tr2, k2, title2)}
        ident = (payload_key(tkey, title), payload_key(k2, title2))
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
        ident=ident,
        measure=measure,
    )


def exports(view: View, dom: AppDomain, item, trace, cfg, stem: str, key: str, b=None, eps: float = 1e-3) -> None:
    """The decode's own files beside the viewer's (HTML, GIF): its trace, carrying what reads it
    without the app (the vocabulary, the positions' names, the input, the backbone and its weights'
    fingerprint, and every ground truth computed for its steps: `mi_viz.show(path)` draws it), and
    what the domain writes of a result (a sequence as FASTA, a board as digits)."""
    files = [("The trace (JSON; with any ground truth computed)",
              lambda: traced(view, dom, item, trace, b, eps).to_json(),  # on the click, not every run (a second, long)
              f"{stem}_trace.json", "application/json")]  # fmt: skip
    files += view.exports(dom, item, trace, cfg, stem)
    for i, (col, (label, data, name, mime)) in enumerate(zip(st.columns(len(files)), files)):
        col.download_button(
            label, data, file_name=name, mime=mime, key=f"{key}_file{i}",
            on_click="ignore",  # no rerun: a second export clicked meanwhile keeps its file
        )  # fmt: skip


def edited_input(key: str, item):
    """The edited state the user decodes from, when one was made from this input (else the input),
    with a line saying so and a way back."""
    made = st.session_state.get(f"{key}_edit")
    if not made or made[0] != item.key:
        return item
    c = st.columns([4, 1])
    c[0].info(f"Decoding an edited state: {made[1].label}.")
    c[1].button("Back to the input", key=f"{key}_edit_undo", on_click=lambda: st.session_state.pop(f"{key}_edit", None))
    return made[1]


def edit_section(view: View, dom: AppDomain, item, trace, key: str, root: str) -> None:
    """Edit one position of a step's state (set a value, or mask it again) and decode from there with
    the same setting: the decode above is replaced by the decode of the edited state. An edit that
    makes the input invalid (a Sudoku contradiction) is refused by name; nothing else changes."""
    n = len(trace.steps)
    with st.expander("Edit a step and decode from there"):
        c = st.columns(3)
        t = c[0].number_input(f"after step (0..{n})", 0, n, min(1, n), key=f"{key}_edit_t",
                              help="The state after this many steps of the decode above is edited.")  # fmt: skip
        tokens = list(trace.tokens_at(int(t)))
        given = {i for i, v in enumerate(trace.initial) if v != dom.mask_id}
        labels = view.labels(dom, item, len(tokens))
        free = [i for i in range(len(tokens)) if i not in given]
        if not free:
            st.caption("Every position is given: nothing to edit.")
            return
        pos = c[1].selectbox("position", free, format_func=lambda i: labels[i], key=f"{key}_edit_pos",
                             help="A position the decode writes (the givens stay).")  # fmt: skip
        symbols = view.symbols(dom)
        choice = c[2].selectbox("set it to", ["(mask it again)", *symbols], key=f"{key}_edit_val",
                                help="A value to fix there, or mask it so the decode writes it again.")  # fmt: skip
        value = None if choice == "(mask it again)" else symbols.index(choice)
        if not st.button("Decode from this edited state", key=f"{key}_edit_go", icon=":material/edit:"):
            return
        try:
            new = view.edited(dom, item, tokens, int(pos), value, int(t))
        except UserError as e:
            st.error(f"Not decoded: {e}")
            return
        st.session_state[f"{key}_edit"] = (root, new)
        st.rerun()


def attention_section(view: View, b, dom: AppDomain, item, trace, tkey: tuple, key: str, site: Site) -> None:
    """One masked position's attention to the whole chain at a step (the map in the viewer reads the
    masked positions alone): every position's weight, given residues and masked ones told apart, the
    chain's regions shaded; the backbone's own attention as DAWN reads it (sinks removed, either
    direction), from the same passes. Nothing for a backbone that exposes no attention. tkey: the
    decode's cache key (the viewer read the same maps under it)."""
    att = caches.attention_for(b, tkey, trace, site)  # the viewer's own read: cached, not a second pass
    if att is None:
        return
    with st.expander("Attention of a masked position to the whole chain"):
        n = len(trace.steps)
        c = st.columns(2)
        t = (  # a decode of one step has no slider: its one state is read
            c[0].slider("Step", 1, n, 1, key=f"{key}_attw_step", help="The decode's step whose state is read.") - 1
            if n > 1
            else 0
        )
        masked = [i for i, m in enumerate(trace.steps[t].masked) if m]
        labels = view.labels(dom, item, len(trace.initial))
        pos = c[1].selectbox("masked position", masked, format_func=lambda i: labels[i], key=f"{key}_attw_pos")
        if pos is None:
            st.caption("Nothing is masked at this step.")
            return
        row = np.asarray(att[t])[pos]  # (L,) its attention to every position (either direction, sinks removed)
        is_masked = np.asarray(trace.steps[t].masked, bool)
        colour = ["#d62728" if i == pos else "#1f77b4" if is_masked[i] else "#7f7f7f" for i in range(len(row))]
        fig = go.Figure(go.Bar(x=list(range(len(row))), y=row, marker_color=colour,
                               hovertext=[f"{labels[i]}: {row[i]:.3f}" + (" (masked)" if is_masked[i] else "")
                                          for i in range(len(row))], hoverinfo="text"))  # fmt: skip
        for name, a, z in view.regions(dom, item) or []:
            fig.add_vrect(x0=a - 0.5, x1=z - 0.5, fillcolor="#ffbf00" if "CDR" in name.upper() else "#cccccc",
                          opacity=0.12, line_width=0, annotation_text=name, annotation_position="top left")  # fmt: skip
        step = max(1, len(row) // 20)
        fig.update_layout(
            xaxis=dict(tickmode="array", tickvals=list(range(0, len(row), step)), ticktext=labels[::step]),
            yaxis_title="attention weight", height=320, showlegend=False, margin=dict(t=30),
            title=f"{labels[pos]} at step {t + 1}: grey given or written, blue still masked",
        )  # fmt: skip
        chart(fig, f"{key}_attw")


def structure_section(view: View, b, dom: AppDomain, trace, head_path, eps, key: str) -> None:
    """A step's MI on the structure (a family's): the contact precision of its maps among its
    masked columns and its top pairs in 3D; the maps of the step the slider names (the head's,
    and the ground truth's once computed in the viewer)."""
    n = len(trace.steps)
    with st.expander("A step of this decode on the structure (its top MI pairs, contact precision)"):
        t = (
            st.slider("Step", 1, n, 1, key=f"{key}_3d_step", help="The decode's step whose maps are shown.") - 1
            if n > 1
            else 0
        )
        tokens, masked = tuple(trace.steps[t].tokens), np.array(trace.steps[t].masked)
        gt = caches.stored_ground_truth(b, tokens, eps)
        maps = {
            "estimated": caches.estimate_of(b, head_path, tokens) if head_path is not None else None,
            "ground truth": gt["mi"] if gt else None,
        }
        st.caption(view.contact_caption(dom, masked, maps))
        view.state_extras(dom, key, masked, maps, None)


MEASURE_KEYS = {"MI": "mi", "TV influence (DEMASK)": "tv", "MI and TV side by side": "mi+tv"}
MEASURE_NAMES = {v: k for k, v in MEASURE_KEYS.items()}


def attention_picker(key: str, b) -> Site:
    """The attention map's block and head (the last block, its heads averaged: DAWN's, by default);
    only the chosen one is computed and sent to the browser."""
    shape = caches.attention_sites(b) if b is not None else None
    if shape is None:
        return LAST
    n_layers, n_heads = shape
    own = f"{key}_att_{b.label}"  # per backbone: a pick (or the last block) never carries over to another's blocks
    with st.expander("Attention map: block and head"):
        block = st.select_slider(
            "block", list(range(1, n_layers + 1)), value=n_layers, key=f"{own}_block",
            help="Which transformer block's attention the viewer's attention map shows (DAWN reads the last).",
        )  # fmt: skip
        head = st.selectbox(
            "head", ["mean of the heads", *(f"head {h}" for h in range(1, n_heads + 1))], key=f"{own}_head",
            help="One attention head, or the mean over the block's heads (DAWN's).",
        )  # fmt: skip
    return Site(block - 1 - n_layers if block == n_layers else block - 1,
                None if head.startswith("mean") else int(head.split()[1]) - 1)  # fmt: skip


def traced(view: View, dom: AppDomain, item, trace, b=None, eps: float = 1e-3):
    """The trace with its meta filled (a copy: the cached trace is shared by every session), and the
    ground truth (MI and TV, from the same passes) of every step some session computed: what was paid
    for is kept (meta["ground_truth"][step]: the masked positions, both maps over them, its cost)."""
    model = backbone_model(b) if b is not None else None
    meta = trace_meta(
        kind=view.kind,
        labels=view.labels(dom, item, len(trace.initial)),
        symbols=view.symbols(dom),
        value_tokens=model.value_tokens.tolist() if model is not None else [],
        mask_id=dom.mask_id,
        made_by=MadeBy(
            input=item.label,
            domain=dom.name,
            backbone=b.label if b is not None else "",
            weights_fingerprint=caches.weights_fingerprint(b) if b is not None else "",
        ),
    )
    truths = {}
    for t, step in enumerate(trace.steps):
        gt = caches.stored_ground_truth(b, tuple(step.tokens), eps) if b is not None else None
        if gt is not None:
            truths[str(t)] = ground_truth_record(gt, step.masked, eps)
    if truths:
        meta["ground_truth"] = truths
    return dataclasses.replace(trace, meta={**trace.meta, **meta})


def setting_name(cfg: SamplerConfig, short: bool = False) -> str:
    """A sampler setting as captions and file names give it: its label, and its temperature and seed
    when it samples."""
    if cfg.temperature <= 0:
        return cfg.label()
    return cfg.label() + (
        f" T{cfg.temperature:g} seed{cfg.seed}" if short else f" · temperature {cfg.temperature:g}, seed {cfg.seed}"
    )


def export_stem(*parts: str) -> str:
    """A download's file name from what was decoded: domain, input, sampler and its settings
    ("Sudoku", "Hard test set (ours, 1,000) #0", "mi gamma=0.04 lam=10" ->
    "Sudoku_Hard-test-set-ours-1000-0_mi-gamma=0.04-lam=10"), safe on every file system."""
    slug = [re.sub(r"[^A-Za-z0-9.=+-]+", "-", p.replace(",", "")).strip("-.") for p in parts]
    return "_".join(x for x in slug if x)[:150] or "decode"
