"""The widgets every page shares: a sampler and its parameters (generated from the registry's
declarations), the compared samplers as rows, grid text."""

from __future__ import annotations

import json
import traceback
from pathlib import Path

import numpy as np
import streamlit as st

from mi_viz.core.errors import InputError, UserError
from mi_viz.core.paths import read_text
from mi_viz.core.plots import PALETTE_NAME, pca_figure
from mi_viz.core.samplers import PARAMS, SAMPLERS, SamplerConfig, defaults_for
from mi_viz.core.sweep import parse_grid


def kept(widget_key: str, default, options=None) -> dict:
    """Widget kwargs whose value outlives the widget (Streamlit's persist_state="session"): a
    sampler's sliders keep the user's values while another sampler is shown, and a value the
    user never touched keeps its default. options: for a radio or selectbox (index, not value)."""
    kw: dict = {"key": widget_key, "persist_state": "session"}
    if options is None:
        kw["value"] = default
    else:
        kw["index"] = list(options).index(default)
    return kw


def usable(name: str, heads: set[str]) -> bool:
    """A sampler this backbone can run: it reads no head, or a head of the map it reads is loaded
    (heads: the kinds loaded, {"mi", "tv"}: caches.head_kinds)."""
    rule = SAMPLERS[name]
    return not rule.needs_head or rule.head_kind in heads


def sampler_params(own: str, name: str, start: dict) -> dict:
    """The widgets of one rule's parameters, generated from its declaration (samplers.PARAMS and
    the rule's own help), starting at `start` (its defaults, or a row's preset); keys OWN_PARAM,
    so each rule (or each compared row) keeps its own values. -> {param: value}."""
    rule = SAMPLERS[name]
    kw: dict = {}
    for p in rule.params:
        spec, v = PARAMS[p], start.get(p)
        label, key = f"{spec.shown} ({rule.param_help(p)})", f"{own}_{p}"
        about = f"{name}: {rule.summary}. {spec.shown}: {rule.param_help(p)} (docs/samplers.md)"  # every slider's help
        if v is None:  # an optional parameter, unset by default (margin's tau): a switch turns it on
            if not st.toggle(f"set {spec.shown}", help=about, **kept(f"{key}_on", False)):
                kw[p] = None
                continue
            v = spec.ladder[len(spec.ladder) // 2] if spec.ladder else (spec.lo or 0)
        if spec.kind == "choice":
            kw[p] = st.radio(spec.shown, spec.choices, horizontal=True, help=about, **kept(key, v, spec.choices))
        elif spec.ladder:  # log-spaced values: a ladder, with the starting value on it
            kw[p] = st.select_slider(label, sorted(set(spec.ladder) | {float(v)}), help=about, **kept(key, float(v)))
        elif spec.kind == "int":
            lo = int(spec.lo or 0)
            kw[p] = st.slider(label, lo, max(spec.widget_hi, int(v)), help=about, **kept(key, int(v)))
        else:
            kw[p] = st.slider(label, float(spec.lo or 0.0), float(spec.hi or 1.0), help=about, **kept(key, float(v)))
    return kw


def sampler_help() -> str:
    """Every rule in one line each, from the registry (the pickers' help)."""
    return "; ".join(f"{n}: {r.summary}" for n, r in SAMPLERS.items()) + " (docs/samplers.md)"


def sampler_picker(
    key: str,
    has_head: set[str],
    default: str = "mi",
    temperature: float = 0.0,
    domain_defaults=None,
    scope: str = "",
) -> SamplerConfig:
    """The sampler and its parameters, starting at the domain's defaults (Domain.sampler_defaults).
    Each sampler keeps its own parameters (keys KEY[_SCOPE]_NAME_PARAM): switching mi -> eb -> mi
    leaves mi where the user put it; scope (a backbone of another domain on the page, AntiBERTy on
    the protein pages) gives that domain its own values, starting at its own defaults."""
    names = [n for n in SAMPLERS if usable(n, has_head)]
    name = st.selectbox(
        "Sampler",
        names,
        index=names.index(default) if default in names else 0,
        key=f"{key}_sampler",
        help=sampler_help(),
    )
    kw = sampler_params(f"{key}_{scope + '_' if scope else ''}{name}", name, defaults_for(name, domain_defaults))
    t = st.slider(
        "temperature (0 = argmax)", 0.0, 2.0, temperature, 0.1, key=f"{key}_temp",
        help="The values are drawn from each position's marginal at this temperature (0: its most likely value); "
        "which positions a pass writes is the rule's choice either way.",
    )  # fmt: skip
    seed = (
        st.number_input(
            "seed", 0, 10_000, 0, key=f"{key}_seed", help="The draws' seed: the same seed, the same decode."
        )
        if t > 0
        else 0
    )
    return SamplerConfig(name, temperature=t, seed=int(seed), **kw)


def palette_toggle() -> None:
    """Colour-blind-safe marks for the batch and the focus on every figure and the viewer (Okabe-Ito
    blue and orange, told apart in greyscale too), remembered across pages; sets this run's palette."""
    with st.sidebar:
        safe = st.toggle(
            "Colour-blind-safe marks",
            help="The batch in blue and the focus in light orange (Okabe-Ito), instead of orange and red: "
            "distinct for every colour vision and in greyscale. The maps' viridis scale is safe either way.",
            **kept("look_palette", False),
        )
    PALETTE_NAME.set("safe" if safe else "classic")


def twin_picker(key: str, first: SamplerConfig, has_head: set[str], domain_defaults=None) -> SamplerConfig | None:
    """A second sampler decoding the same input side by side, at the first one's temperature and
    seed (one timeline of passes in the viewer); None when off. ValueError when it is the same
    setting as the first (nothing to compare)."""
    about = "The same input and seed, one shared timeline of backbone passes; each decode keeps its own maps."
    if not st.toggle("Side by side: a second sampler", help=about, **kept(f"{key}_twin_on", False)):
        return None
    names = [n for n in SAMPLERS if usable(n, has_head)]
    default = "dawn" if first.name != "dawn" else "eb"
    name = st.selectbox("Second sampler", names, **kept(f"{key}_twin", default, names))
    kw = sampler_params(f"{key}_twin_{name}", name, defaults_for(name, domain_defaults))
    twin = SamplerConfig(name, temperature=first.temperature, seed=first.seed, **kw)
    if twin.label() == first.label():
        raise InputError(f"the second sampler is the first one's setting ({first.label()}): choose another")
    return twin


def grid_text(cfgs) -> str:
    """SamplerConfigs as one line of grid syntax (parse_grid reads it back to the same settings)."""
    return "; ".join(c.grid_text() for c in cfgs)


def sampler_rows(key: str, presets: dict, start: list[str], has_head: set[str], domain_defaults=None) -> dict:
    """The samplers a comparison page compares, each a row with its own controls (its sampler and
    parameters, kept per row), added from the presets and removed freely; the presets are starting
    values. The rows as grid text can be copied out, and grid text read in. -> {row label: config}.

    A row's widgets are keyed by its own id, so moving one row's slider changes only that row's
    config: the page's cached decodes of the other rows are reused."""
    rows_key = f"{key}_rows"
    if rows_key not in st.session_state:
        st.session_state[rows_key] = [[k, presets[name]] for k, name in enumerate(start) if name in presets]
    rows = st.session_state[rows_key]
    names = [n for n in SAMPLERS if usable(n, has_head)]
    out = {}
    for rid, preset in list(rows):
        with st.container(border=True):
            c = st.columns([2, 6, 1])
            name = c[0].selectbox(
                "sampler", names, **kept(f"{key}_r{rid}_name", preset.name if preset.name in names else names[0], names)
            )
            with c[1]:
                start_vals = defaults_for(name, domain_defaults)
                if name == preset.name:  # the preset's own values are the row's starting point
                    start_vals.update(preset.params)
                kw = sampler_params(f"{key}_r{rid}_{name}", name, start_vals)
            if c[2].button("remove", key=f"{key}_r{rid}_rm", help="drop this sampler from the comparison"):
                st.session_state[rows_key] = [r for r in rows if r[0] != rid]
                st.rerun()
        cfg = SamplerConfig(name, **kw)
        label = cfg.label()
        out[label if label not in out else f"{label} (row {rid + 1})"] = cfg
    c = st.columns([3, 1, 4])
    pick = c[0].selectbox("add a sampler, starting from", list(presets), key=f"{key}_add_pick")
    if c[1].button("add", key=f"{key}_add"):
        st.session_state[rows_key] = rows + [[max([r[0] for r in rows], default=-1) + 1, presets[pick]]]
        st.rerun()
    with c[2].popover("as grid text"):
        st.code(grid_text(out.values()) or "(no sampler)", language=None)
        text = st.text_input("replace the rows with", "", key=f"{key}_grid_in", placeholder="eb:gamma=0.01; topk:k=6")
        if st.button("replace", key=f"{key}_grid_go") and text.strip():
            cfgs = grid_or_error(text, "Grid text", has_head, domain_defaults)
            if cfgs:
                base = max([r[0] for r in rows], default=-1) + 1
                st.session_state[rows_key] = [[base + k, cfg] for k, cfg in enumerate(cfgs)]
                st.rerun()
    return out


def grid_or_error(text: str, widget: str, has_head: set[str], domain_defaults=None):
    """parse_grid (parameters not named take the domain's defaults), or None after a message
    naming the problem (unknown sampler or parameter, an empty grid, the mi sampler without a head)."""
    try:
        cfgs = parse_grid(text, domain_defaults)
    except UserError as e:
        st.error(f"{widget}: {e}")
        return None
    if missing := [c for c in cfgs if not usable(c.name, has_head)]:
        st.error(f"{widget}: '{missing[0].name}' reads a {missing[0].head_kind.upper()} head, and none is loaded for "
                 "this backbone.")  # fmt: skip
        return None
    return cfgs


def wilson(p: float, n: int, z: float = 1.645) -> tuple[float, float]:
    """The Wilson interval of a proportion p out of n (90 % by default)."""
    if n <= 0:
        return 0.0, 1.0
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


def figure_config(name: str) -> dict:
    """Plotly's toolbar on every chart, its camera saving the chart as an SVG named after it: a
    vector figure for a paper, drawn by plotly.js in the browser (no kaleido, no network)."""
    return {
        "displaylogo": False,
        "toImageButtonOptions": {"format": "svg", "filename": f"mi-viz_{name}"},
        "modeBarButtonsToRemove": ["select2d", "lasso2d", "autoScale2d"],
    }


def chart(fig, key: str, layout: dict | None = None, **kw):
    """Every plotly figure of the app goes through here (one toolbar, SVG export); layout: the
    figure's own (title, axes, height); kw as st.plotly_chart's (a clickable board's on_select).
    Ticks, axis titles and legends in the page's text colour: Streamlit's chart theme draws them pale."""
    fig.update_layout(**(layout or {}))
    ink = dict(color="#31333F")
    fig.update_xaxes(tickfont=ink, title_font=ink)
    fig.update_yaxes(tickfont=ink, title_font=ink)
    fig.update_layout(legend_font=ink)
    return st.plotly_chart(fig, key=key, config=figure_config(key), **kw)


def pca_panel(path, key: str, command: str, natural: str) -> None:
    """A committed Figure-3 run (benchmarks/protein_figure3.py, family_figure3.py): each generated
    set in the natural set's own two principal components, settings picked by the user, and each
    set's centroid shift; the command that makes it when it is not there."""
    if not Path(path).exists():
        st.caption(f"Not run yet: `{command}` ({Path(path).name}).")
        return
    res = json.loads(read_text(path))
    gen = [k for k in res["sets"] if not k.startswith("natural")]
    shown = st.multiselect("Settings shown", gen, default=gen[:2], key=f"{key}_fig3")
    ev = res["explained_variance"]
    axes = (f"PC1 ({ev[0]:.0%})", f"PC2 ({ev[1]:.0%})")
    chart(pca_figure(res["sets"], shown, f"{res['embedding']}: PCA fitted on {natural}", axes), f"{key}_fig3_plot")
    st.caption(
        "Centroid shift from the natural set (in units of its spread over these two components): "
        + "; ".join(f"{k} {v['centroid_shift']:.2f}" for k, v in res["sets"].items() if k in gen)
        + f". Grey: {natural}."
    )


def tv_measure(unit: str) -> str:
    """What a TV head reads, in the words every estimator caption uses (unit: "cell", "residue")."""
    return (
        f"DEMASK's expected total-variation influence D (how far fixing one {unit} moves another's conditional, "
        "a share 0..1; arXiv 2604.02560); exact D comes from the same conditioned passes as the exact MI"
    )


def report_metrics(rep: dict, last: tuple[str, str]) -> None:
    """An MI report's headline in one row: states, Pearson, Spearman, top-pair recall, and `last`
    (label, value): what the estimator page shows first for every backbone."""
    c = st.columns(5)
    c[0].metric("states", rep["n_states"])
    c[1].metric("Pearson", f"{rep['pearson']:.3f}")
    c[2].metric("Spearman", f"{rep['spearman']:.3f}")
    c[3].metric("top-pair recall", f"{rep['top_pair_recall']:.3f}")
    c[4].metric(*last)


def sampling_row(cols, key: str) -> dict:
    """The comparison pages' temperature and seed, every row's override (two columns given)."""
    temperature = cols[0].slider(
        "temperature", 0.1, 2.0, 1.0, 0.1, key=f"{key}_temp",
        help="Every row samples its values at this temperature (a comparison of samplers, not of argmax paths).",
    )  # fmt: skip
    seed = cols[1].number_input("seed", 0, 10_000, 0, key=f"{key}_seed", help="The draws' seed, shared by every row.")
    return {"temperature": float(temperature), "seed": int(seed)}


def uploaded_text(
    label: str, key: str, max_kb: int, types=("fasta", "fa", "faa", "txt"), col=None, why="upload the one record"
):
    """(text, file name) of an uploaded file, (None, None) when none, or (None, a message) when it is
    over max_kb (why: what the limit is for): the one upload block of the input widgets and the sweep
    tab (what it holds is checked by the caller)."""
    up = (col or st).file_uploader(label, type=list(types), key=key, max_upload_size=max(1, -(-max_kb // 1024)))
    if max_kb < 1024:  # the box would print Streamlit's 1 MB floor under a label that says max_kb: it says max_kb too
        line = f"{max_kb:,} KB per file • " + ", ".join(t.upper() for t in types)
        st.html(
            f"<style>.st-key-{key} [data-testid='stFileUploaderDropzoneInstructions'] > div > span:last-child "
            f"{{font-size: 0}} .st-key-{key} [data-testid='stFileUploaderDropzoneInstructions'] > div > "
            f"span:last-child::after {{content: '{line}'; font-size: 0.875rem}}</style>"
        )
    if up is None:
        return None, None
    if up.size > max_kb * 1024:
        return None, f"{up.name} is larger than {max_kb:,} KB: {why}."
    return up.getvalue().decode("utf-8", errors="replace"), up.name


def cancel_button(what: str, key: str, keeps: str = "") -> None:
    """A Cancel beside a long computation: any click reruns the page, which stops the computation
    where it stands; `cancelled` says so in that rerun. keeps: what survives a Cancel ("" for nothing)."""
    keeps = keeps or "nothing of it is kept"
    st.button(f"Cancel the {what}", key=key, icon=":material/cancel:", help=f"Stops it; {keeps}.")


def cancelled(what: str, key: str, where=None, keeps: str = "") -> bool:
    """Whether this run is the one a `cancel_button` click made; if so it says so (in `where`)."""
    if clicked := bool(st.session_state.get(key)):
        (where or st).info(f"{what} cancelled: {keeps or 'nothing of it was kept'}.")
    return clicked


def show_bug() -> None:
    """The exception being handled, shown as what it is: a bug in mi-viz (bad input never reaches here:
    it is a UserError, turned into a message where it is read), with its traceback in an expander."""
    st.error(
        "Something went wrong inside mi-viz: this is a bug, not a problem with your input. "
        "Please report it with the traceback below (the page can be reloaded; nothing you entered is lost)."
    )
    with st.expander("Traceback", expanded=False):
        st.code(traceback.format_exc(), language="text")


def plain(text: str) -> str:
    """Text shown as it is in Markdown: a gene name's allele star (IGHV3-53*04 / IGHJ4*02) would open
    italics and eat the stars, an underscore or backtick likewise."""
    return "".join("\\" + ch if ch in "*_`" else ch for ch in text)


def carried(widget, label: str, store: str, default, page: str, options=None, **kw):
    """A widget whose value is carried from one page to another (the antibody pages' model, chain and
    region): each page has its own widget (key STORE_PAGE, made fresh when the page is opened), started
    at the value last chosen on any page (st.session_state[STORE]); Streamlit drops a widget's state
    when its page is left, so a shared key alone would come back at its default."""
    cur = st.session_state.get(store, default)
    if options is not None and cur not in options:
        cur = default
    start = {"value": cur} if options is None else {"index": list(options).index(cur)}
    args = (label,) if options is None else (label, list(options))
    value = widget(*args, key=f"{store}_{page}", **start, **kw)
    st.session_state[store] = value
    return value
