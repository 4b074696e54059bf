"""The app's caches: a decode's trace, the head's map of every step, the ground truth of a state
and its cost, and anything a view packs from them (the viewer's payload). Each lives once per
server process, shared by every browser session, keyed by everything it depends on (the
backbone, the head, the input, the sampler's setting, eps). Long work draws a progress bar while
it runs; a cache hit draws nothing, so moving one comparison row's slider decodes that row only.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
import streamlit as st
import torch

from mi_viz.core import strict_json
from mi_viz.core.attention import LAST, NoAttention, Site, attention_shape
from mi_viz.core.checkpoints import fingerprint
from mi_viz.core.errors import UserError
from mi_viz.core.mi import MIRun, ground_truth_cost, ground_truth_mi
from mi_viz.core.models import head_path as models_head_path
from mi_viz.core.reading import read_state, read_steps
from mi_viz.core.samplers import Batching, SamplerConfig, Trace, decode

from .models import Backbone, backbone_model, head_model

GT_SECONDS_CAP = 90.0  # the app refuses a ground truth estimated to take longer
_lock = threading.Lock()


@st.cache_resource
def _stores() -> dict[str, OrderedDict]:
    return {}


def cached(store: str, key: Any, compute: Callable[[], Any], max_entries: int = 64) -> Any:
    """compute() once per key in this process (least recently used entries dropped past
    max_entries); the value is shared by every session, so it must never be mutated."""
    with _lock:
        s = _stores().setdefault(store, OrderedDict())
        if key in s:
            s.move_to_end(key)
            return s[key]
    value = compute()
    with _lock:
        s[key] = value
        while len(s) > max_entries:
            s.popitem(last=False)
    return value


def peek(store: str, key: Any) -> Any:
    """The value some session stored under key, or None (nothing is computed)."""
    with _lock:
        return _stores().get(store, {}).get(key)


class LazyBar:
    """A progress bar that appears only once the work has run for `after` seconds: a quick decode
    sends the browser nothing extra, a long one shows how far it got."""

    def __init__(self, what: str, after: float = 0.4, unit: str = "positions"):
        self.what, self.after, self.unit = what, after, unit
        self.t0 = time.perf_counter()
        self.bar: Any = None

    def start(self, text: str) -> None:
        """Show the bar now, empty, with `text` (a wait whose length is known: no reason to hold it back)."""
        self.bar = st.progress(0.0, text=text)

    def update(self, done: int, total: int) -> None:
        seconds = time.perf_counter() - self.t0
        if self.bar is None and seconds < self.after:
            return
        text = f"{self.what}: {done} of {total} {self.unit}, {seconds:.0f} s"
        if self.bar is None:
            self.bar = st.progress(0.0, text=text)
        self.bar.progress(min(1.0, done / max(total, 1)), text=text)

    def empty(self) -> None:
        if self.bar is not None:
            self.bar.empty()


def tv_head(b: Backbone) -> str | None:
    """The TV (DEMASK) head shipped beside this backbone's MI head, or None: looked up once a backbone
    and process (every rerun of a page asks; the app trains no TV head, so the answer does not change)."""

    def find() -> str | None:
        p = models_head_path(b.dom(), "tv", None, b.spec)
        return str(p) if p is not None else None

    return cached("tv_head", b.key, find)


def rule_head(b: Backbone, head_path: str | None, cfg: SamplerConfig) -> str | None:
    """The head a setting's rule reads: none, the page's MI head, or the TV head beside it."""
    if not cfg.needs_head:
        return None
    return head_path if cfg.head_kind == "mi" else tv_head(b)


def head_kinds(b: Backbone, head_path: str | None) -> set[str]:
    """The maps this backbone has a head for ({"mi", "tv"}): what decides which rules a page offers."""
    if head_path is None:
        return set()
    return {"mi"} | ({"tv"} if tv_head(b) else set())


def trace_key(b: Backbone, head_path: str | None, item_key: str, cfg: SamplerConfig) -> tuple:
    """What a decode depends on: the backbone, the head its rule reads, the input and the whole
    setting (parameters, temperature, seed)."""
    return (b.key, rule_head(b, head_path, cfg), item_key, strict_json.dumps(cfg.to_dict(), sort_keys=True))


def trace_for(b: Backbone, head_path: str | None, item_key: str, item: Any, cfg: SamplerConfig) -> Trace:
    """The recorded decode of one input (item: what the backbone's domain encodes), decoded on a
    miss with a progress bar (positions written so far)."""

    def run() -> Trace:
        model = backbone_model(b)
        path = rule_head(b, head_path, cfg)
        head = head_model(path, f"{b.label} {cfg.head_kind.upper()} head") if path else None
        x = b.dom().encode([item])
        bar = LazyBar(f"Decoding with {cfg.label()}")
        if cfg.is_oracle:
            st.info("An oracle rule runs the exact ground truth at every step: the first decode takes a while.")
        try:
            traces = decode(model, x, cfg, head=head, record=True, run=Batching(progress=bar.update)).traces
            assert traces is not None  # record=True
            return traces[0]
        finally:
            bar.empty()

    return cached("trace", trace_key(b, head_path, item_key, cfg), run)


def map_kind(trace: Trace) -> str | None:
    """The map a trace's steps record (StepRecord.mi): the MI for the mi rules, DEMASK's TV for its
    rules, None for a rule that reads neither."""
    reads = SamplerConfig.from_dict(trace.sampler).rule.reads
    return "tv" if reads & {"tv", "exact-tv"} else "mi" if reads & {"mi", "exact-mi"} else None


def estimates_for(
    b: Backbone, head_path: str | None, key: tuple, trace: Trace, measure: str = "mi"
) -> list[np.ndarray | None] | None:
    """The head's map of every step's state (a head of the `measure`: "mi" or DEMASK's "tv"): the
    trace's own (a rule that read that head) or one batched pass of the head over all the steps (any
    other rule): never a pass per step and rerun. No head: None when the trace's own maps are of the
    measure (the viewer draws those), else no map at all (never another measure's under this one's name)."""
    if not trace.steps:
        return None
    own = map_kind(trace)
    if own == measure and trace.steps[0].mi is not None:
        return [np.asarray(s.mi) for s in trace.steps]
    if head_path is None:
        return None if own in (measure, None) else [None] * len(trace.steps)

    def run():
        model, head = backbone_model(b), head_model(head_path, f"{b.label} {measure.upper()} head")
        with st.spinner(f"Reading every step with the {measure.upper()} head ..."):
            est, _ = read_steps(model, [s.tokens for s in trace.steps], head)
        return None if est is None else [m.numpy() for m in est]

    return cached("estimates", (key, head_path), run, max_entries=32)


def attention_for(b: Backbone, key: tuple, trace: Trace, site: Site = LAST) -> list[np.ndarray] | None:
    """The backbone's own attention read as a dependency map (core.attention.dependency_map, the
    graph DAWN decodes on) for every step's state, in batched passes; None for a backbone that
    does not expose it. site: the block and head read (the last block's heads averaged: DAWN's),
    recomputed on request for the one chosen: the viewer's payload carries that one only."""
    if not trace.steps:
        return None

    def run():
        try:
            _, att = read_steps(backbone_model(b), [s.tokens for s in trace.steps], attention=True, site=site)
        except NoAttention:
            return None
        return None if att is None else [m.numpy() for m in att]

    return cached("attention", (key, site), run, max_entries=32)


def attention_sites(b: Backbone) -> tuple[int, int] | None:
    """(blocks, heads a block) of the backbone's attention, or None when it exposes none."""
    try:
        return attention_shape(backbone_model(b))
    except NoAttention:
        return None


def estimate_of(b: Backbone, head_path: str, tokens: tuple) -> np.ndarray:
    """The head's map (L, L) of one state."""

    def run():
        with torch.inference_mode():
            mi = read_state(backbone_model(b), torch.tensor([tokens]), head_model(head_path, f"{b.label} MI head")).mi
        assert mi is not None
        return mi[0].numpy()

    return cached("estimate", (b.key, head_path, tokens), run, max_entries=512)


def gt_cost(b: Backbone, tokens: tuple, eps: float) -> dict:
    """What the ground truth of a state would cost (passes, estimated seconds), before running it:
    one base pass to count the kept values, priced at the backbone's measured rate (seconds_per_pass),
    so a request shows its progress and Cancel at once instead of after a timing probe."""

    def run():
        rate = seconds_per_pass(b, tokens, eps)
        with torch.inference_mode():
            return ground_truth_cost(
                backbone_model(b), torch.tensor([tokens]), eps=eps, chunk=128, seconds_per_pass=rate
            )

    return cached("gt_cost", (b.key, tokens, eps), run, max_entries=512)


GT_CHUNK = 32  # conditioned sequences a forward pass of the app's ground truth: its bar moves every second or two


def seconds_per_pass(b: Backbone, tokens: tuple, eps: float) -> float:
    """One pass of this backbone on this machine, measured once (a chunk of GT_CHUNK passes of the
    first state asked about: the rate the ground truth then runs at) and kept for the server's life:
    every ground-truth button prices itself with it, and the launcher's warm-up pays it in the
    background (pages/serve.py). Why not a bigger chunk: the warm-up shares 2 cores with the first
    visitor's pages, and AntiBERTy's chunk of 128 took about 20 s of them."""

    def measure():
        with torch.inference_mode():
            model = backbone_model(b)
            return ground_truth_cost(model, torch.tensor([tokens]), eps=eps, chunk=GT_CHUNK)["seconds_per_pass"]

    return cached("seconds_per_pass", b.key, measure, max_entries=16)


def ground_truth(b: Backbone, tokens: tuple, eps: float, unit: str = "position") -> dict:
    """The exact MI map of one state, computed on a miss with a progress bar (one pass per
    masked position and kept value), shared by every session."""

    def run():
        bar = LazyBar(f"Ground-truth MI, a pass per ({unit}, value)", unit="passes")
        bar.start(f"Ground-truth MI, a pass per ({unit}, value): the first passes ...")  # at once, with the Cancel
        with torch.inference_mode():
            run = MIRun(chunk=GT_CHUNK, progress=bar.update)
            gt = ground_truth_mi(backbone_model(b), torch.tensor([tokens]), eps=eps, run=run)
        bar.empty()
        return {
            "mi": gt.mi[0].numpy(),
            "tv": gt.tv[0].numpy() if gt.tv is not None else None,  # DEMASK's, from the same passes
            "asym": gt.asymmetry[0].numpy(),
            "passes": int(gt.passes[0]),
            "seconds": gt.seconds,
            "dropped": float(gt.dropped_mass[0].max()),
        }

    return cached("gt", (b.key, tokens, eps), run, max_entries=256)


def stored_ground_truth(b: Backbone, tokens: tuple, eps: float) -> dict | None:
    """The ground truth of a state if some session computed it, else None (nothing is computed)."""
    return peek("gt", (b.key, tokens, eps))


def weights_fingerprint(b: Backbone) -> str:
    """The fingerprint of this backbone's weights (what its sweep rows and exported traces name), read once."""

    def read() -> str:
        dom = b.dom()
        weights = dom.weights(b.spec) if hasattr(dom, "weights") else (b.spec or dom.default_model)
        if weights is None:  # a model built from no file (a toy joint): nothing to fingerprint
            return ""
        try:
            return fingerprint(weights)
        except (OSError, UserError):  # a name no file stands for (ESM-C 300M read from a hub cache): unnamed
            return ""

    return cached("weights_fingerprint", b.key, read, max_entries=32)
