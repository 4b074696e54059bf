"""The one model loader of the app: a backbone (any domain's) and the MI heads that fit it, each
built once per server process and shared by every browser session (st.cache_resource), with a
clear message instead of a traceback when a checkpoint is missing or corrupt."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import streamlit as st

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

    @property
    def key(self) -> tuple:
        """What identifies it in a cache key (two backbones with one key are one model)."""
        return (self.domain, self.args, self.spec)

    def dom(self):
        return get_domain(self.domain, *self.args)


@st.cache_resource(show_spinner="Loading the backbone ...")
def _backbone(domain: str, args: tuple, spec: str | None, _label: str):
    with _lock:
        LOAD_COUNT[_label] = LOAD_COUNT.get(_label, 0) + 1
        return get_domain(domain, *args).load_model(spec).eval()


@st.cache_resource(show_spinner="Loading the MI head ...")
def _head(path: str, _label: str):  # the underscore: the label is not part of the cache key
    with _lock:
        LOAD_COUNT[_label] = LOAD_COUNT.get(_label, 0) + 1
        return load_head(path)[0]


def backbone_model(b: Backbone):
    return _backbone(b.domain, b.args, b.spec, b.label)


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
