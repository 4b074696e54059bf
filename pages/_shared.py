"""App plumbing shared by the pages: model loading, cached decodes, puzzle pickers.

Models load once per process (st.cache_resource) and are shared by every
browser session; decodes are cached per input (st.cache_data); each session's
own position in a decode lives in st.session_state, so two users stepping two
puzzles never see each other's state. Errors become st.error messages, never
tracebacks.
"""

from __future__ import annotations

import csv
import os
import random
import threading
from pathlib import Path

import numpy as np
import streamlit as st
import torch

from mi_viz.core.checkpoints import CheckpointError
from mi_viz.core.estimator import check_head_fits, load_head
from mi_viz.core.mi import ground_truth_mi
from mi_viz.core.reading import read_state
from mi_viz.core.samplers import SAMPLERS, SamplerConfig, Trace, decode, defaults_for
from mi_viz.domains import get_domain
from mi_viz.domains.sudoku import board as S

SUDOKU = get_domain("sudoku")

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


def mdm_path() -> str:
    """The MDM checkpoint: MI_VIZ_MDM if set (read on every run), else the shipped one."""
    return os.environ.get("MI_VIZ_MDM", str(SUDOKU.default_model))


SHIPPED_HEAD = ROOT / "checkpoints" / "sudoku_mi_head"
BASELINE_HEAD = ROOT / "checkpoints" / "sudoku_mi_head_baseline"


def head_options() -> dict[str, str]:
    """The MI heads a user can pick, by name: the shipped one (MI_VIZ_HEAD if set) and the
    previous release's head, kept as a baseline (README, Models)."""
    opts = {"shipped": os.environ.get("MI_VIZ_HEAD", str(SHIPPED_HEAD))}
    if Path(str(BASELINE_HEAD) + ".json").exists():
        opts["baseline (previous release)"] = str(BASELINE_HEAD)
    return opts


def head_path() -> str:
    """The head the Sudoku pages read: the sidebar's choice (head_picker), else the shipped one."""
    opts = head_options()
    choice = st.session_state.get("mi_head", st.session_state.get("_kept_mi_head", "shipped"))
    return opts.get(choice, opts["shipped"])


def head_is_reported() -> bool:
    """Whether the committed MI report (results/sudoku/mi_report*) is this head's own."""
    return Path(head_path()).resolve() == SHIPPED_HEAD.resolve()


def head_picker() -> None:
    """Sidebar choice of the MI head, with what it scored on the report's test states."""
    opts = head_options()
    if len(opts) < 2:
        return
    name = st.sidebar.selectbox(
        "Sudoku MI head",
        list(opts),
        **kept("mi_head", "shipped"),  # kept while a protein page (no picker there) is open
        help="Every page's estimated MI and 'mi' sampler read this head. The baseline is "
        "the previous release's head (no mix blocks), kept for comparison.",
    )
    scores = RESULTS / "sudoku" / "head_candidates_test.csv"
    rel = Path(opts[name]).resolve()
    rows = list(csv.DictReader(scores.read_text().splitlines())) if scores.exists() else []
    row = next((r for r in rows if (ROOT / r["head"]).resolve() == rel), None)
    if row:
        st.sidebar.caption(
            f"{int(row['n_params']):,} parameters, {row['mix_layers']} mix blocks; "
            f"Pearson {float(row['pearson']):.3f} "
            f"with the truth on the report's test states ({scores.relative_to(ROOT)})."
        )


RESULTS = ROOT / "results"
torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))

PUZZLE_SETS = {
    "Hard test set (ours, 1,000)": ROOT / "data" / "sudoku" / "test_hard.csv",
    "Singles-solvable test set (200)": ROOT / "data" / "sudoku" / "test_medium.csv",
    "Kaggle hard/expert (external, 2,000)": ROOT / "data" / "external" / "kaggle3m_curated_hard_expert_ratings.csv",
}
GAMMAS = [
    0.0,
    1e-5,
    3e-5,
    1e-4,
    3e-4,
    0.001,
    0.003,
    0.01,
    0.03,
    0.1,
    0.2,
    0.3,
    0.5,
    0.6,
    1.0,
    2.0,
    4.0,
    8.0,
    16.0,
    32.0,
]
LAMBDAS = [0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0]
TAUS = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99]
KLS = [1e-4, 1e-3, 0.01, 0.03, 0.1, 0.3]
LOAD_COUNT = {"mdm": 0, "head": 0}  # how often each model was built in this process (tests read it)
_lock = threading.Lock()


# --------------------------------------------------------------------------- models


@st.cache_resource(show_spinner="Loading the Sudoku MDM ...")
def get_mdm(path: str):
    with _lock:
        LOAD_COUNT["mdm"] += 1
        return SUDOKU.load_model(path)


@st.cache_resource(show_spinner="Loading the MI head ...")
def get_head(path: str):
    with _lock:
        LOAD_COUNT["head"] += 1
        return load_head(path)


def models_or_error(need_head: bool = True):
    """(model, head) or None after showing a clear message (no traceback)."""
    try:
        model = get_mdm(mdm_path())
    except CheckpointError as e:
        st.error(f"Cannot load the Sudoku MDM: {e}")
        st.info("Train one with `python training/train_mdm.py` or point MI_VIZ_MDM at a checkpoint.")
        return None
    head = None
    if need_head:
        try:
            head, _ = get_head(head_path())
            check_head_fits(head, model)
        except CheckpointError as e:
            head = None
            st.warning(f"MI head not available ({e}); estimated MI and the 'mi' sampler are disabled.")
    return model, head


# --------------------------------------------------------------------------- puzzles


@st.cache_data
def load_puzzle_set(path: str) -> list[dict]:
    """Rows with at least 'puzzle' (and 'solution' and rating columns where known)."""
    p = Path(path)
    if not p.exists():
        return []
    with open(p) as f:
        return list(csv.DictReader(f))


def rating_text(row: dict) -> str:
    parts = []
    if "singles_solvable" in row:
        parts.append("singles-solvable" if row["singles_solvable"] == "1" else "hard (singles get stuck)")
        parts.append(
            f"{row.get('givens')} givens, {row.get('singles_rounds')} singles rounds, "
            f"{row.get('search_nodes')} search nodes"
        )
    if "kaggle_difficulty" in row:
        parts.append(f"Kaggle difficulty {row['kaggle_difficulty']} ({row.get('level')}), {row.get('clues')} clues")
    return "; ".join(parts)


def _problem(key: str, message: str, show=None):
    """A puzzle-picker problem, named in the sidebar and kept for the page's main area
    (show_puzzle_problem), where a user looking at the maps will see it."""
    show = show or st.error
    show(message)
    st.session_state[f"{key}_problem"] = (message, show is st.error)
    return None


def show_puzzle_problem(key: str) -> None:
    """In the main area: why the puzzle picker of `key` returned nothing."""
    message, is_error = st.session_state.get(f"{key}_problem", ("Choose or paste a puzzle in the sidebar.", False))
    (st.error if is_error else st.info)(message)


def puzzle_picker(key: str):
    """Widgets to choose a puzzle. Returns (board tuple, solution tuple|None, label) or None."""
    src = st.radio("Puzzle source", list(PUZZLE_SETS) + ["Paste your own"], key=f"{key}_src")
    if src == "Paste your own":
        text = st.text_area(
            "81 characters, row by row; '.' or '0' for blanks (line breaks are fine)",
            key=f"{key}_paste",
            height=120,
            placeholder="..8...5......3.....1.....96...49..21.7...8.....41..8.5.....73...9......83...869..",
        )
        if not text.strip():
            return _problem(key, "Paste a puzzle to start.", st.info)
        try:
            board = S.parse_board(text)
        except S.BoardError as e:
            return _problem(key, f"Invalid puzzle: {e}")
        res = S.solve(board, limit=2)
        if res.count == 0:
            return _problem(
                key, "This puzzle has no solution: the givens contradict each other further down the search."
            )
        if res.count > 1:
            st.warning("This puzzle has more than one solution: wrong-cell marks use one of them.")
        return board, res.solution, "pasted puzzle"
    rows = load_puzzle_set(str(PUZZLE_SETS[src]))
    if not rows:
        return _problem(key, f"Puzzle file missing: {PUZZLE_SETS[src]}")
    st.button(
        "Random puzzle",
        icon=":material/shuffle:",
        key=f"{key}_rand",
        on_click=lambda: st.session_state.update({f"{key}_idx": random.randrange(len(rows))}),
    )
    idx = st.number_input(f"Index (0..{len(rows) - 1})", 0, len(rows) - 1, key=f"{key}_idx")
    row = rows[int(idx)]
    board = S.parse_board(row["puzzle"])
    sol = S.parse_board(row["solution"]) if row.get("solution") else None
    st.caption(rating_text(row))
    return board, sol, f"{src} #{idx}"


def kept(widget_key: str, default) -> dict:
    """Widget kwargs whose value outlives the widget: Streamlit drops a widget's state on a run
    that does not draw it (the other sampler's sliders), so each change is copied to a plain
    session key and restored from it when the widget comes back."""
    keep = "_kept_" + widget_key
    if widget_key not in st.session_state:
        st.session_state[widget_key] = st.session_state.get(keep, default)
    return {"key": widget_key, "on_change": lambda: st.session_state.update({keep: st.session_state[widget_key]})}


def sampler_params(own: str, name: str, spec: dict, gammas=None) -> dict:
    """The widgets of one sampler's parameters, starting at spec (its defaults, or a row's preset);
    keys OWN_PARAM, so each sampler (or each compared row) keeps its own values. -> {param: value}."""
    gammas = sorted(set(gammas or GAMMAS) | {float(spec.get("gamma") or 0.0)})
    kw = {}
    if "k" in spec:
        kw["k"] = st.slider("k (positions per pass)", 1, 20, **kept(f"{own}_k", spec["k"]))
    if "gamma" in spec:  # log-spaced: useful budgets span 1e-5 .. 8 nats across the domains
        kw["gamma"] = st.select_slider("gamma (budget, nats)", gammas, **kept(f"{own}_gamma", float(spec["gamma"])))
    if "lam" in spec:
        kw["lam"] = st.select_slider(
            "lambda (weight of the entropy term)" if name == "mi-pairs" else "lambda (weight of the MI)",
            sorted(set(LAMBDAS) | {float(spec["lam"])}),
            **kept(f"{own}_lam", float(spec["lam"])),
        )
    if "tau" in spec:
        if name == "margin":
            start = "threshold" if spec.get("tau") is not None else "k per pass"
            by = st.radio("margin rule", ["k per pass", "threshold"], horizontal=True, **kept(f"{own}_by", start))
            if by == "threshold":
                kw["tau"] = st.slider("tau (least p1 - p2)", 0.0, 1.0, **kept(f"{own}_tau", spec.get("tau") or 0.5))
        else:
            kw["tau"] = st.select_slider(
                "tau (least top probability)",
                sorted(set(TAUS) | {float(spec["tau"])}),
                **kept(f"{own}_tau", spec["tau"]),
            )
    if "kl" in spec:
        kw["kl"] = st.select_slider(
            "KL bound (nats) since the previous pass",
            sorted(set(KLS) | {float(spec["kl"])}),
            **kept(f"{own}_kl", spec["kl"]),
        )
    if "d" in spec:
        kw["d"] = st.slider("d (least distance in a batch)", 1, 20, **kept(f"{own}_d", spec["d"]))
    if "scan" in spec:
        kw["scan"] = st.radio(
            "batch rule",
            ["stop", "skip"],
            horizontal=True,
            help="stop: the batch ends at the first position that would break the budget (a prefix "
            "of the confidence order, the default); skip: pass over it and keep scanning",
            **kept(f"{own}_scan", "stop"),
        )
    return kw


def sampler_picker(
    key: str, has_head: bool, default: str = "mi", temperature: float = 0.0, gammas=None, domain_defaults=None
) -> SamplerConfig:
    """The sampler and its parameters, starting at the domain's defaults (Domain.sampler_defaults).
    Each sampler keeps its own gamma / lambda / k (keys KEY_NAME_PARAM): switching mi -> eb -> mi
    leaves mi where the user put it."""
    names = [n for n in SAMPLERS if has_head or SAMPLERS[n].needs != "mi"]
    name = st.selectbox(
        "Sampler",
        names,
        index=names.index(default) if default in names else 0,
        key=f"{key}_sampler",
        help="sequential: one position per pass; topk: k per pass; eb: entropy budget (EB-Sampler); "
        "mi: MI-guided with the head (entropy + lambda x MI within gamma); mi-zero: its entropy budget alone; "
        "mi-tc: the largest MI to the batch instead of the sum; mi-pairs: the rule of release 0.3; "
        "mi-gt: MI-guided with the exact MI (a slow oracle); threshold: Fast-dLLM; margin: top-two margin; "
        "klass: confident and stable; dilated: k per pass, d apart (docs/samplers.md)",
    )
    kw = sampler_params(f"{key}_{name}", name, defaults_for(name, domain_defaults), gammas)
    t = st.slider("temperature (0 = argmax)", 0.0, 2.0, temperature, 0.1, key=f"{key}_temp")
    seed = st.number_input("seed", 0, 10_000, 0, key=f"{key}_seed") if t > 0 else 0
    return SamplerConfig(name, temperature=t, seed=int(seed), **kw)


def grid_text(cfgs) -> str:
    """SamplerConfigs as one line of grid syntax (parse_grid reads it back to the same settings)."""
    parts = []
    for c in cfgs:
        ps = [f"{p}={getattr(c, p):g}" for p in ("k", "gamma", "lam", "tau", "kl", "d") if getattr(c, p) is not None]
        if c.scan == "skip":
            ps.append("scan=skip")
        parts.append(":".join([c.name, *ps]))
    return "; ".join(parts)


def sampler_rows(key: str, presets: dict, start: list[str], has_head: bool, domain_defaults=None) -> dict:
    """The samplers a comparison page compares, each a row with its own controls (its sampler and
    parameters, kept per row), added from the presets and removed freely; the presets are starting
    values. The rows as grid text can be copied out, and grid text read in. -> {row label: config}.

    A row's widgets are keyed by its own id, so moving one row's slider changes only that row's
    config: the page's cached decodes of the other rows are reused."""
    rows_key = f"{key}_rows"
    if rows_key not in st.session_state:
        st.session_state[rows_key] = [[k, presets[name]] for k, name in enumerate(start) if name in presets]
    rows = st.session_state[rows_key]
    names = [n for n in SAMPLERS if has_head or SAMPLERS[n].needs != "mi"]
    out = {}
    for rid, preset in list(rows):
        with st.container(border=True):
            c = st.columns([2, 6, 1])
            name = c[0].selectbox(
                "sampler", names, **kept(f"{key}_r{rid}_name", preset.name if preset.name in names else names[0])
            )
            with c[1]:
                start_vals = {**defaults_for(name, domain_defaults)}
                if name == preset.name:  # the preset's own values are the row's starting point
                    start_vals.update(
                        {p: getattr(preset, p) for p in start_vals if getattr(preset, p, None) is not None}
                    )
                    if name == "margin":
                        start_vals["tau"] = preset.tau
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


def grid_or_error(text: str, widget: str, has_head: bool, domain_defaults=None):
    """parse_grid (parameters not named take the domain's defaults), or None after a message
    naming the problem (unknown sampler or parameter, an empty grid, the mi sampler without a head)."""
    from mi_viz.core.sweep import parse_grid

    try:
        cfgs = parse_grid(text, domain_defaults)
    except ValueError as e:
        st.error(f"{widget}: {e}")
        return None
    if any(c.needs == "mi" for c in cfgs) and not has_head:
        st.error(f"{widget}: 'mi' needs an MI head, and none is loaded for this backbone.")
        return None
    return cfgs


def step_controls(prefix: str, n_steps: int, identity) -> int:
    """Reset / Back / Step / End / Play and a slider over a decode's steps, one convention
    everywhere: step t of n is the t-th pass (1-based), showing the state before its writes
    and the batch it chose. The position resets when `identity` (the input and the sampler)
    changes; Play turns back into Play at the last step. Returns the 0-based step index."""
    k_step, k_play, k_id = f"{prefix}_step", f"{prefix}_playing", f"{prefix}_identity"
    if st.session_state.get(k_id) != identity:
        st.session_state[k_id] = identity
        st.session_state[k_step] = 1
        st.session_state[k_play] = False
    st.session_state[k_step] = max(1, min(n_steps, st.session_state.get(k_step, 1)))

    def _set(step):
        st.session_state[k_step] = max(1, min(n_steps, step))

    def _toggle():
        st.session_state[k_play] = not st.session_state[k_play] and st.session_state[k_step] < n_steps
        st.session_state[f"{prefix}_tick"] = 0.0

    playing = st.session_state[k_play]
    # the bar stays at the top of the window while the maps below it scroll (a sticky container)
    # (Streamlit wraps a container in a layout wrapper of its own height: the wrapper is what sticks)
    st.html(
        f'<style>div[data-testid="stLayoutWrapper"]:has(> .st-key-{prefix}_bar) {{position: sticky; top: 3.75rem; '
        "z-index: 990; background: white; padding: 0.3rem 0 0.1rem; border-bottom: 1px solid #eee;}}</style>"
    )
    bar = st.container(key=f"{prefix}_bar")
    c = bar.columns([1.1, 1, 1, 1, 1.1, 5])
    c[0].button(
        "Reset",
        icon=":material/first_page:",
        key=f"{prefix}_reset",
        on_click=lambda: (_set(1), st.session_state.update({k_play: False})),
    )
    c[1].button(
        "Back",
        icon=":material/chevron_left:",
        key=f"{prefix}_back",
        on_click=lambda: _set(st.session_state[k_step] - 1),
    )
    c[2].button(
        "Step",
        icon=":material/chevron_right:",
        key=f"{prefix}_fwd",
        on_click=lambda: _set(st.session_state[k_step] + 1),
    )
    c[3].button("End", icon=":material/last_page:", key=f"{prefix}_end", on_click=lambda: _set(n_steps))
    c[4].button(
        "Pause" if playing else "Play",
        key=f"{prefix}_play",
        on_click=_toggle,
        icon=":material/pause:" if playing else ":material/play_arrow:",
    )

    # a timer only while playing: an idle page must not rerun every 0.8 s in every open session
    @st.fragment(run_every=0.8 if playing else None)
    def _autoplay():
        """While playing, one step every 0.8 s (time-guarded: full reruns don't double-step)."""
        import time

        if not st.session_state.get(k_play):
            return
        now = time.time()
        if now - st.session_state.get(f"{prefix}_tick", 0.0) < 0.7:
            return
        st.session_state[f"{prefix}_tick"] = now
        if st.session_state[k_step] < n_steps:
            st.session_state[k_step] += 1
        if st.session_state[k_step] >= n_steps:
            st.session_state[k_play] = False  # the button reads "Play" again
        st.rerun(scope="app")

    with c[5]:
        _autoplay()
        if n_steps > 1:
            st.slider("Step", 1, n_steps, key=k_step, label_visibility="collapsed")
    return st.session_state[k_step] - 1


# --------------------------------------------------------------------------- cached computations


@st.cache_data(show_spinner="Decoding ...", max_entries=64)
def decode_trace_json(puzzle: str, cfg: dict, mdm: str, head_ckpt: str) -> str:
    model = get_mdm(mdm)
    head = get_head(head_ckpt)[0] if SAMPLERS[cfg["name"]].needs == "mi" else None
    x = SUDOKU.encode([S.parse_board(puzzle)])
    res = decode(model, x, SamplerConfig(**cfg), head=head, record=True)
    return res.traces[0].to_json()


def decode_trace(board, cfg: SamplerConfig) -> Trace:
    from dataclasses import asdict

    return Trace.from_json(decode_trace_json(S.board_to_string(board), asdict(cfg), mdm_path(), head_path()))


@st.cache_data(show_spinner="Measuring the current settings ...", max_entries=256)
def live_point(puzzle_file: str, n: int, cfg: dict, mdm: str, head_ckpt: str) -> dict:
    """One setting on the first n puzzles of a set: run_bench's summary (cached per setting, so
    moving one row's slider measures that row only)."""
    from mi_viz.core.bench import run_bench

    rows = load_puzzle_set(puzzle_file)[:n]
    model = get_mdm(mdm)
    head = get_head(head_ckpt)[0] if SAMPLERS[cfg["name"]].needs == "mi" else None
    return run_bench(SUDOKU, model, [S.parse_board(r["puzzle"]) for r in rows], SamplerConfig(**cfg), head).summary


def wilson(p: float, n: int, z: float = 1.645) -> tuple[float, float]:
    """The Wilson interval of a proportion p out of n (90 % by default)."""
    if n <= 0:
        return 0.0, 1.0
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


def estimated_mi(tokens: tuple) -> np.ndarray:
    return _estimated_mi(tokens, mdm_path(), head_path())


@st.cache_data(max_entries=512)
def _estimated_mi(tokens: tuple, mdm: str, head_ckpt: str) -> np.ndarray:
    model = get_mdm(mdm)
    head, _ = get_head(head_ckpt)
    with torch.inference_mode():
        return read_state(model, torch.tensor([tokens]), head).mi[0].numpy()


def report_estimates() -> np.ndarray:
    """The chosen head's estimates at the committed report's pairs (fidelity.head_at_pairs)."""
    return _report_estimates(mdm_path(), head_path())


@st.cache_data(show_spinner="Reading the report's states with this head ...", max_entries=16)
def _report_estimates(mdm: str, head_ckpt: str) -> np.ndarray:
    from mi_viz.core.fidelity import head_at_pairs, read_pairs

    pt, tokens = read_pairs(RESULTS / "sudoku" / "mi_report_pairs.npz")
    model = get_mdm(mdm)
    return head_at_pairs(model, get_head(head_ckpt)[0], tokens, pt)


@st.cache_resource
def _gt_store() -> dict:
    return {}


def ground_truth_for(
    tokens: tuple, eps: float = 1e-3, show_progress: bool = True, domain: str = "sudoku", spec: str | None = None
):
    """Ground-truth MI for one state, with a progress bar; cached for every session. domain /
    spec name the backbone (Sudoku: the MDM the pages read; proteins: a get_protein_model spec)."""
    store = _gt_store()
    spec = spec or (mdm_path() if domain == "sudoku" else "protein_mdm")
    key = (tokens, eps, domain, spec)
    if key not in store:
        model = get_mdm(spec) if domain == "sudoku" else get_protein_model(spec)
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


# --------------------------------------------------------------------------- proteins

PROTEIN_LENGTH_CAP = 300  # the longest protein the app decodes (a decode is L passes)
GT_SECONDS_CAP = 90.0  # the app refuses a ground truth estimated to take longer


FAMILY = "family:"  # a backbone spec "family:PF00595" (a shipped family) or "family:PATH" (one trained here)
APP_FAMILIES = ROOT / "runs" / "app_families"  # where the app's own family trainings go (not tracked)


def backbone_domain(spec: str):
    """The domain a protein-page backbone belongs to: a family's (fixed width, gap, contacts) or proteins'."""
    if spec.startswith(FAMILY):
        from mi_viz.domains.family import family_domain

        return family_domain(spec[len(FAMILY) :])
    return get_domain("protein")


@st.cache_resource(show_spinner="Loading the protein backbone ...")
def get_protein_model(spec: str):
    with _lock:
        LOAD_COUNT["protein"] = LOAD_COUNT.get("protein", 0) + 1
        if spec.startswith(FAMILY):
            return backbone_domain(spec).load_model().eval()
        return get_domain("protein").load_model(spec).eval()


@st.cache_resource(show_spinner="Loading the protein MI head ...")
def get_protein_head(path: str):
    return load_head(path)


def protein_backbones() -> dict[str, str]:
    """The backbones a user can pick, by label -> spec: the shipped small ESM-C always, ESM-C
    300M when its weights are on this machine (MI_VIZ_ESMC_300M, a .pth path, or the local
    Hugging Face cache; never downloaded by the app)."""
    from mi_viz.domains.family import shipped_families
    from mi_viz.domains.protein.backbone import BackboneUnavailable, esmc_300m_weights

    opts = {"small ESM-C (shipped, trained here)": "protein_mdm"}
    env = os.environ.get("MI_VIZ_ESMC_300M")
    if env and Path(env).exists():
        opts["ESM-C 300M"] = env
    else:
        try:
            esmc_300m_weights()
            opts["ESM-C 300M"] = "esmc_300m"
        except BackboneUnavailable:
            pass
    for f in shipped_families():
        opts[f"family {f} ({FAMILY_NAMES.get(f, 'Pfam')})"] = FAMILY + f
    for p in sorted(APP_FAMILIES.glob("family_*.json")):
        if not p.name.endswith(("_last.json", "_mi_head.json")):
            opts[f"family {p.stem.removeprefix('family_')} (trained here in the app)"] = FAMILY + str(p.with_suffix(""))
    return opts


def family_alignment(dom) -> Path | None:
    """The alignment a family backbone was trained on, where this machine has it: MI_VIZ_FAMILY_DATA/
    NAME/NAME.align.80.fasta, the project's shared data beside the checkout, or the file the app kept
    when it trained the family; None when absent (the page then asks for an upload)."""
    names = [f"{dom.family}/{dom.family}.align.80.fasta"]
    roots = [Path(os.environ["MI_VIZ_FAMILY_DATA"])] if os.environ.get("MI_VIZ_FAMILY_DATA") else []
    roots.append(ROOT.parent / "shared" / "data" / "protein_families")
    for r in roots:
        for n in names:
            if (r / n).exists():
                return r / n
    kept = APP_FAMILIES / f"{dom.family}.fasta"
    return kept if kept.exists() else None


FAMILY_NAMES = {
    "PF00072": "response regulator receiver",
    "PF00076": "RNA recognition motif",
    "PF00595": "PDZ",
    "PF00085": "thioredoxin",
    "PF00018": "SH3",
}


def protein_model_or_error(spec: str):
    """(model, head or None) for a protein backbone, or None after a clear message."""
    from mi_viz.domains.protein.backbone import BackboneUnavailable

    try:
        model = get_protein_model(spec)
    except (CheckpointError, BackboneUnavailable, ValueError) as e:  # ValueError: a family's contact map
        st.error(f"Cannot load the protein backbone: {e}")
        st.info("Train the small one with `python training/train_protein_mdm.py` (README, Reproduce).")
        return None
    head = None
    if spec.startswith(FAMILY):
        path = backbone_domain(spec).default_head()
    else:
        path = get_domain("protein").default_head() if spec == "protein_mdm" else None
    if path is not None:
        try:
            head, _ = get_protein_head(str(path))
            check_head_fits(head, model)
        except CheckpointError as e:
            st.warning(f"Protein MI head not available ({e}); estimated MI and the 'mi' sampler are off.")
            head = None
    return model, head


@st.cache_data(show_spinner="Decoding ...", max_entries=32)
def protein_trace_json(prompt: str, cfg: dict, spec: str, head_path: str | None) -> str:
    model = get_protein_model(spec)
    head = get_protein_head(head_path)[0] if head_path and SAMPLERS[cfg["name"]].needs == "mi" else None
    x = backbone_domain(spec).encode([prompt])
    res = decode(model, x, SamplerConfig(**cfg), head=head, record=True)
    return res.traces[0].to_json()


@st.cache_data(max_entries=256)
def protein_estimated_mi(tokens: tuple, spec: str, head_path: str) -> np.ndarray:
    model = get_protein_model(spec)
    head, _ = get_protein_head(head_path)
    with torch.inference_mode():
        return read_state(model, torch.tensor([tokens]), head).mi[0].numpy()


@st.cache_data(max_entries=256)
def protein_gt_cost(tokens: tuple, spec: str, eps: float) -> dict:
    from mi_viz.core.mi import ground_truth_cost

    with torch.inference_mode():
        return ground_truth_cost(get_protein_model(spec), torch.tensor([tokens]), eps=eps, chunk=128)


# --------------------------------------------------------------------------- the in-browser viewer


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


@st.cache_data(show_spinner="Packing the decode for the browser ...", max_entries=32)
def protein_viewer_payload(prompt: str, cfg: dict, spec: str, head_path: str | None) -> dict:
    """A protein (or family) decode packed once for the in-browser viewer (mi_viz.core.viewer)."""
    from mi_viz.core.viewer import viewer_payload

    trace = Trace.from_json(protein_trace_json(prompt, cfg, spec, head_path))
    dom, model = backbone_domain(spec), get_protein_model(spec)
    head = get_protein_head(head_path)[0] if head_path else None
    L = len(trace.initial)
    cmap = getattr(dom, "contact_map", None)
    return viewer_payload(
        trace,
        kind="track",
        labels=[dom.position_name(i, L) if dom.name == "family" else f"position {i + 1}" for i in range(L)],
        symbols=list(dom.value_names),
        value_tokens=model.value_tokens.tolist(),
        mask_id=model.mask_id,
        est=_estimates_for(trace, model, head),
        contacts=cmap.contacts() if cmap is not None else None,
    )


@st.cache_data(show_spinner="Packing the decode for the browser ...", max_entries=32)
def sudoku_viewer_payload(puzzle: str, cfg: dict, mdm: str, head_ckpt: str) -> dict:
    from mi_viz.core.viewer import viewer_payload

    trace = Trace.from_json(decode_trace_json(puzzle, cfg, mdm, head_ckpt))
    model, head = get_mdm(mdm), get_head(head_ckpt)[0]
    return viewer_payload(
        trace,
        kind="board",
        labels=[SUDOKU.position_name(i) for i in range(81)],
        symbols=[str(d) for d in range(1, 10)],
        value_tokens=model.value_tokens.tolist(),
        mask_id=model.mask_id,
        est=_estimates_for(trace, model, head),
    )


def mount_viewer(payload: dict, key: str, tokens_of, gt_for, cost_for=None) -> None:
    """The viewer with the ground truth of every step the user asked for. A request computes that
    step's map on the server and remounts: tokens_of(t) -> the step's state, gt_for(tokens,
    compute) -> the cached ground_truth_for dict (None if not computed and compute is False),
    cost_for(tokens) -> its cost (refused past GT_SECONDS_CAP). Every map joins the viewer's data."""
    from mi_viz.core.viewer import ground_truth_entry
    from pages._viewer import decode_viewer

    asked = st.session_state.setdefault(f"{key}_gt_steps", {})  # step -> its state's tokens
    data = dict(payload, gt={}, gtNote={})
    for t, tokens in asked.items():
        gt = gt_for(tuple(tokens), compute=False)
        if gt is not None:
            masked = payload["steps"][int(t)]["masked"]
            data["gt"][t] = ground_truth_entry(gt["mi"], masked)
            data["gtNote"][t] = f"{gt['passes']:,} passes, {gt['seconds']:.1f} s; max pruned mass {gt['dropped']:.1e}"
    t = decode_viewer(data, key=key)
    if t is not None and str(t) not in data["gt"]:
        tokens = tokens_of(int(t))
        cost = cost_for(tuple(tokens)) if cost_for else None
        if cost is not None and cost["seconds"] > GT_SECONDS_CAP:
            st.warning(
                f"The ground truth of step {int(t) + 1} would take about {cost['seconds']:.0f} s "
                f"({cost['total_passes']:,} passes), over this page's cap of {GT_SECONDS_CAP:.0f} s: step further in."
            )
            return
        gt_for(tuple(tokens), compute=True)
        asked[str(int(t))] = tokens
        st.rerun()


def tokens_to_digits(tokens) -> list[int]:
    return list(SUDOKU.decode(torch.tensor([tokens]))[0])
