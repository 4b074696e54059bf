"""The backbone as one object: which masked model decodes, picked once and carried whole.

A user picks a backbone in one place (the CLI's --backbone, the app's picker); everything downstream
(the Task a domain's CLI hands the driver, the sweep's fingerprint, the judges, the scope warnings)
reads this object instead of re-resolving a string. It knows its domain as that backbone decodes it
(`dom`: the sampler defaults validated for it, its shipped heads), its alphabet (the domain's value
tokens and mask id), the file its sweep rows fingerprint, and loads its model once per process.

    b = get_backbone("antibody", "sapiens-vh")   # mi_viz.domains
    model = b.load()          # built on first use, the same object after
    b.head("mi"), b.weights   # its shipped MI head, the weights its rows fingerprint
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .checkpoints import checkpoint_paths
from .errors import InputError
from .models import KINDS, build_model, head_path

_MODELS: dict[tuple, Any] = {}
_lock = threading.Lock()


@dataclass(frozen=True)
class Backbone:
    """One masked model of one domain. dom is the domain object as it decodes with this backbone
    (get_domain(dom.name, *args): the sampler defaults validated for it, its shipped heads); spec is
    what that domain's load_model takes (None: its own); scope says in words what it was trained on
    ("" where the domain has no such notion)."""

    dom: Any = field(compare=False, repr=False)
    name: str  # what the user typed or picked: "antiberty", "sapiens-vh", "sudoku", a folder
    label: str  # what a page or a summary shows
    args: tuple = ()
    spec: Any = None
    scope: str = ""

    @property
    def domain(self) -> str:
        return str(self.dom.name)

    @property
    def key(self) -> tuple:
        """Two backbones with one key are one model (a cache key)."""
        return (self.domain, self.args, str(self.spec))

    # --- its alphabet: the domain's, as this backbone's tokenizer reads it ---------------------------
    @property
    def value_names(self) -> tuple[str, ...]:
        return tuple(self.dom.value_names)

    @property
    def mask_id(self) -> int:
        return int(self.dom.mask_id)

    @property
    def sampler_defaults(self) -> dict[str, dict]:
        return self.dom.sampler_defaults

    # --- its files -------------------------------------------------------------------------------
    @property
    def weights(self) -> Path:
        """The file whose sha256 a sweep row records for this backbone."""
        d = self.dom
        return Path(d.weights(self.spec) if hasattr(d, "weights") else (self.spec or d.default_model))

    def head(self, kind: str = "mi") -> Path | None:
        """The head of this map ("mi", "tv") shipped for this backbone, or None."""
        p = head_path(self.dom, kind, None, self.spec)
        return None if p is None else Path(str(p))

    def heads(self) -> dict[str, Path]:
        """Every map it has a shipped head for: {"mi": path, "tv": path} (absent kinds left out)."""
        return {k: p for k in KINDS if (p := self.head(k)) is not None}

    # --- its model -------------------------------------------------------------------------------
    def load(self, device: str = "cpu") -> Any:
        """The model, built on first use in this process and the same object after (eval mode)."""
        key = (*self.key, device)
        with _lock:
            if key not in _MODELS:
                _MODELS[key] = build_model(self.dom, self.spec, device).eval()
            return _MODELS[key]


def single_backbone(dom: Any, name: str | None = None) -> Backbone:
    """The backbone of a domain that has one (its shipped model), or a checkpoint of that kind by path;
    any other name refused."""
    if name in (None, "", dom.name):
        return Backbone(dom, dom.name, f"{dom.name} model")
    if not checkpoint_paths(name)[1].exists():
        if "/" in str(name) or Path(str(name)).suffix:  # meant as a path: say which file is missing
            raise InputError(
                f"checkpoint file not found: {checkpoint_paths(name)[1]} (a {dom.name} checkpoint by path)"
            )
        raise InputError(
            f"the {dom.name} domain has one backbone ({dom.name}) or a checkpoint by path; {name!r} is neither"
        )
    return Backbone(dom, str(name), Path(str(name)).name, (), str(name))
