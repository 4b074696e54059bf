"""The view contract: what the decode, compare, estimator and families pages read of a domain.

A page calls `view.specialise(backbone)` once it knows the backbone (a protein family's
backbone has a view of its own: fixed width, a structure's contacts, pair statistics), then
only the members below. Defaults here are the plain ones; a view overrides what its domain
draws or measures differently. Capabilities are attributes (has_structure), never
discovered from a domain object."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np
import streamlit as st

from mi_viz.core.protocol import AppDomain
from mi_viz.core.samplers import Trace

from ..kit.models import Backbone, models_or_error
from ..kit.runtime import through_app
from ..kit.sweeps import SweepPlan


@dataclass(frozen=True)
class Item:
    """One input of a decode: key (text that identifies it in caches), value (what the domain
    encodes), label (what captions call it), solution (a known answer, if any); after an edit,
    origin (the input the edit was made from: what a design is judged against, whole) and marked
    (the positions the user set)."""

    key: str
    value: Any
    label: str
    solution: Any = None
    origin: Any = None
    marked: tuple[int, ...] = ()


class Hint(str):
    """A reason there is no input yet that is an invitation, not an error ("Paste a puzzle to start.")."""


@dataclass(frozen=True)
class PagePlan:
    """A page of the navigation: its file under pages/ (a two-line call of a page function), title
    and icon; or, with no file, the page function it calls (kind: "decode" or "compare", app.py's
    PAGES) at the address `url`, so a new domain's view needs no page file (tab: the compare page's
    side-by-side tab title)."""

    file: str
    title: str
    icon: str
    kind: str = ""
    url: str = ""
    tab: str = "Side by side"


D = TypeVar("D", bound=AppDomain)  # the domain a view draws (typed: what its pages read of it, mypy-checked)


@dataclass
class View(Generic[D]):
    name: str = ""  # the navigation section's name
    unit: str = "position"  # what one position is called ("cell" on a Sudoku board)
    kind: str = "track"  # how the in-browser viewer draws a state: "board" (9 x 9) or "track"
    keys: dict = field(default_factory=dict)  # widget-key prefix per page: {"decode": "dec", ...}
    pages: tuple[PagePlan, ...] = ()
    has_structure: bool = False  # a structure whose contacts the maps are read against (a family)
    legend: str = ""  # what the decode page's colours mean (its caption)
    compare_columns: int = 1  # states side by side on the comparison page
    states_name: str = "sequences"  # what the comparison page's shared-pass slider shows
    timeline: tuple[str, str] = ("Positions decoded vs passes", "positions")  # title, y label
    # domain -> the view class of its backbones, when they sit in this view's pages (views/__init__.py fills it)
    specialised: dict[str, Any] = field(default_factory=dict)

    # --- the backbone and its head ------------------------------------------------------
    def backbones(self) -> list[Backbone]:
        """Every backbone this view offers on this machine (the home page lists their checkpoints)."""
        raise NotImplementedError

    def backbone_picker(self, key: str) -> Backbone | None:
        """The sidebar's choice of backbone (None after a message)."""
        raise NotImplementedError

    def head_path(self, b: Backbone) -> str | None:
        """The MI head the pages read for this backbone (its first, unless the view lets the user pick)."""
        return b.heads[0][1] if b.heads else None

    def sidebar_extras(self) -> None:
        """What the view adds to every one of its pages' sidebars (a head picker)."""

    def specialise(self, b: Backbone) -> View:
        """The view for this backbone (itself, unless a backbone needs another)."""
        return self

    # --- inputs ----------------------------------------------------------------------------
    def decode_input(self, key: str, dom: D) -> tuple[Item | None, str | None]:
        """The decode page's input from the sidebar: (item, None), or (None, why not)."""
        raise NotImplementedError

    def compare_input(self, key: str, dom: D) -> tuple[Item | None, str | None, dict]:
        """The comparison page's input, and overrides of every row's setting ({"temperature": ...})."""
        with st.sidebar:
            item, why = self.decode_input(key, dom)
        return item, why, {}

    def presets(self, dom: D, has_head: bool) -> tuple[dict, list[str]]:
        """The comparison page's presets (label -> SamplerConfig) and the labels of its first rows."""
        return {}, []

    def rows_key(self, key: str) -> str:
        """Where the comparison page keeps its rows (a view with other presets keeps its own)."""
        return key

    # --- drawings ----------------------------------------------------------------------------
    # the decode page offers "edit a step and decode from there" (edited()); a class attribute, not a field
    editable = False

    def edited(self, dom: D, item: Item, tokens: list[int], pos: int, value: int | None, step: int) -> Item:
        """The state `tokens` (a step of item's decode) with position pos set to value (an index into
        symbols(); None: masked again), as a new input to decode from; a UserError names an edit that
        makes it invalid (a Sudoku contradiction)."""
        raise NotImplementedError

    def labels(self, dom: D, item: Item, L: int) -> list[str]:
        """A name per position (maps' axes, hover)."""
        return [f"position {i + 1}" for i in range(L)]

    def symbols(self, dom: D) -> list[str]:
        return list(dom.value_names)

    def state_figure(self, dom: D, item: Item, trace: Trace, t: int, focus=None, title: str = "", small: bool = False):
        """The state after t passes (t = 0: the input), with step t's batch outlined (plotly, clickable)."""
        raise NotImplementedError

    def contact_caption(self, dom: D, masked, maps: dict) -> str:
        """The state's contact precision of each map (has_structure)."""
        return ""

    def regions(self, dom: D, item: Item) -> list[tuple[str, int, int]] | None:
        """Named spans of the input (name, start, end exclusive) the viewer draws as bands (an antibody's)."""
        return None

    def contacts(self, dom: D) -> np.ndarray | None:
        """(L, L) bool known contacts drawn as dots on the viewer's maps (a family's)."""
        return None

    # --- numbers ------------------------------------------------------------------------------
    def compare_row(self, dom: D, item: Item, trace: Trace, t: int) -> dict:
        """The comparison table's columns of one decode (besides sampler and passes)."""
        return {}

    def exports(self, dom: D, item: Item, trace: Trace, cfg, stem: str) -> list[tuple[str, Any, str, str]]:
        """The decode's result as files beside its trace: (label, data, file name, mime) each."""
        return []

    def state_extras(self, dom: D, key: str, masked, maps: dict, focus) -> None:
        """A step's maps on what the domain knows beyond the sequence (has_structure: a family's 3D)."""

    def decode_extras(
        self,
        dom: D,
        key: str,
        item: Item | None = None,
        trace=None,
        b: Backbone | None = None,
        cfg=None,
        twin=None,
        twin_trace=None,
    ):
        """What the decode page shows under the maps (a family's averaged map; an antibody's design beside
        its native region)."""

    # --- sweeps and the estimator ---------------------------------------------------------------
    def sweep_plan(self, key: str, b: Backbone, model, head, head_path, rows: dict) -> SweepPlan | None:
        """What the comparison page's sweep tab (kit.sweeps.sweep_tab, written once) reads from this
        view: its inputs, judge and metric, after drawing its own widgets; None: no sweep here."""
        return None

    def sweep_extras(self, key: str, dom: D) -> None:
        """What the sweep tab shows under its chart (a Figure 3 of the committed sets)."""

    def estimator(self, key: str) -> None:
        """The estimator page's content for this domain: head vs ground truth."""
        st.info("No MI report for this domain.")


@dataclass
class Opened:
    """A page's view once its backbone is chosen and loaded."""

    view: View
    backbone: Backbone
    head_path: str | None  # None when no head fits this backbone
    model: Any
    head: Any
    dom: AppDomain


def open_page(view: View, title: str, key: str) -> Opened:
    """What every page of a view starts with: the entry through app.py, the view's sidebar, the
    title, the backbone picked and loaded (a message and a stop when it cannot be)."""
    through_app()
    view.sidebar_extras()
    st.title(title)
    with st.sidebar:
        b = view.backbone_picker(key)
    if b is None:
        st.stop()
    view = view.specialise(b)
    head_path = view.head_path(b)
    loaded = models_or_error(b, head_path)
    if loaded is None:
        st.stop()
    model, head = loaded
    return Opened(view, b, head_path if head is not None else None, model, head, b.dom())
