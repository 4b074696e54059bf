"""The one model loader of the app: a backbone (any domain's) and the MI heads that fit it, each
built once per server process and shared by every browser session (st.cache_resource), with a
clear message instead of a traceback when a checkpoint is missing or corrupt."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import streamlit as st

from mi_viz.core import strict_json
from mi_viz.core.checkpoints import CheckpointError, cache_dir
from mi_viz.core.errors import UserError
from mi_viz.core.mi_head import check_head_fits, load_head
from mi_viz.domains import get_domain

LOAD_COUNT: dict[str, int] = {}  # model label -> times built in this process (the home page shows it; tests read it)
_lock = threading.Lock()


@dataclass(frozen=True)
class Backbone:
    """A backbone a page can use: which domain it belongs to, how to load it, and its MI heads.

    domain and args name the domain (get_domain(domain, *args)); spec is what that domain's
    load_model takes (None: the domain's own checkpoint); heads are (label, checkpoint path) of
    the MI heads that fit it, the default first; help says where it comes from (a caption)."""

    label: str
    domain: str
    args: tuple = ()
    spec: str | None = None
    heads: tuple[tuple[str, str], ...] = ()
    help: str = ""
    meta: dict = field(default_factory=dict, compare=False, hash=False)
    # the domain's own backbone object where the domain resolves one (mi_viz.core.backbone): its model
    # is built through it, so the app and the CLI build one model the same way
    core: Any = field(default=None, compare=False, hash=False)

    @property
    def key(self) -> tuple:
        """What identifies it in a cache key (two backbones with one key are one model)."""
        return (self.domain, self.args, self.spec)

    def dom(self):
        return get_domain(self.domain, *self.args)


_BUILT: set[tuple] = set()  # Backbone.key of every backbone built in this process (no spinner after the first)
LOAD_TIMES = "backbone_load_seconds.json"  # label -> seconds its last load took on this machine (the user cache)


def _load_times_path() -> Path | None:
    try:
        return cache_dir(Path(__file__).resolve().parents[2] / "checkpoints" / "x") / LOAD_TIMES
    except CheckpointError:  # no writable cache: the load is not priced, nothing else changes
        return None


def recorded_load_seconds(label: str) -> float | None:
    """How long this backbone's last load took on this machine (None: never loaded here, or unreadable)."""
    path = _load_times_path()
    try:
        value = json.loads(path.read_text()).get(label) if path is not None and path.exists() else None
    except (OSError, ValueError, AttributeError):  # a damaged note: the load is simply not priced
        return None
    return float(value) if isinstance(value, (int, float)) else None


def _record_load_seconds(label: str, seconds: float) -> None:
    path = _load_times_path()
    if path is None:
        return
    with _lock:
        try:
            times = json.loads(path.read_text()) if path.exists() else {}
        except (OSError, ValueError):
            times = {}
        times = times if isinstance(times, dict) else {}
        times[label] = round(seconds, 2)
        tmp = path.with_suffix(f".{threading.get_ident()}.tmp")
        tmp.write_text(strict_json.dumps(times, indent=1))
        tmp.replace(path)


def load_note(b: Backbone) -> str:
    """What the first load of a backbone in this server costs, from its last load on this machine."""
    s = recorded_load_seconds(b.label)
    when = (
        f"about {s:.0f} s, its last load on this machine"
        if s
        else "its first load on this machine: timed for next time"
    )
    return f"Loading {b.label} once for this server ({when}; every session shares it afterwards) ..."


@st.cache_resource(show_spinner=False)
def _backbone(domain: str, args: tuple, spec: str | None, _label: str, _core=None):
    with _lock:
        LOAD_COUNT[_label] = LOAD_COUNT.get(_label, 0) + 1
    t0 = time.perf_counter()  # outside the lock: one backbone's load never waits for another's
    model = _core.load() if _core is not None else get_domain(domain, *args).load_model(spec).eval()
    _record_load_seconds(_label, time.perf_counter() - t0)
    return model


@st.cache_resource(show_spinner="Loading the MI head ...")
def _head(path: str, _label: str):  # the underscore: the label is not part of the cache key
    with _lock:
        LOAD_COUNT[_label] = LOAD_COUNT.get(_label, 0) + 1
        return load_head(path)[0]


def backbone_model(b: Backbone):
    """The backbone, built on first use in this process with a spinner that states what it costs and
    counts the seconds (the launcher's warm-up builds the pretrained ones first: pages/serve.py)."""
    if b.key in _BUILT:
        return _backbone(b.domain, b.args, b.spec, b.label, b.core)
    with st.spinner(load_note(b), show_time=True):
        model = _backbone(b.domain, b.args, b.spec, b.label, b.core)
    _BUILT.add(b.key)
    return model


def head_model(path: str, label: str = "MI head"):
    """A head by path (label: what the home page's count calls it; a model is built once whatever the label)."""
    return _head(path, label)


def models_or_error(b: Backbone, head_path: str | None):
    """(model, head or None) for a backbone and one of its heads, or None after a message (a
    missing or corrupt backbone stops the page; a head that is absent or does not fit only
    turns the estimated maps and the MI samplers off, with a warning)."""
    try:
        model = backbone_model(b)
    except UserError as e:  # a missing or corrupt checkpoint, an absent optional model (CheckpointError is one)
        st.error(f"Cannot load the {b.label}: {e}")
        if b.help:
            st.info(b.help)
        return None
    head = None
    if head_path is not None:
        try:
            head = head_model(head_path, f"{b.label} MI head")
            check_head_fits(head, model)
        except UserError as e:
            st.warning(f"MI head not available ({e}); estimated MI and the MI samplers are off.")
            head = None
    return model, head


def forget_models() -> None:
    """Drop every built model (a checkpoint retrained under its old path is read afresh)."""
    _backbone.clear()
    _head.clear()
    _BUILT.clear()
