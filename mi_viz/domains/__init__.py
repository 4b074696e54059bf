"""One folder per domain; each exposes DOMAIN (mi_viz.core.protocol.Domain).

Adding a domain: a folder here with a DOMAIN object, its registry line below, a checkpoint
under checkpoints/ and a page under pages/ (tests/test_domain_template.py shows the minimum).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ..core.backbone import Backbone, single_backbone
from ..core.errors import InputError

DOMAINS = {
    "sudoku": "mi_viz.domains.sudoku",
    "protein": "mi_viz.domains.protein",
    "family": "mi_viz.domains.family",
    "antibody": "mi_viz.domains.antibody",
}


def get_domain(name: str, *args):
    """The domain object by name, imported on first use (proteins pull in esm). A domain that
    takes arguments is parameterised by them: get_domain("family", "PF00595") is that family
    (a shipped name or a checkpoint path); get_domain("family") its default."""
    if name not in DOMAINS:
        raise InputError(f"unknown domain {name!r}; choose from {sorted(DOMAINS)}")
    module = importlib.import_module(DOMAINS[name])
    if args:
        make = getattr(module, "domain_for", None)
        if make is None:
            raise ValueError(f"the {name} domain takes no argument (got {args!r})")
        return make(*args)
    return module.DOMAIN


def get_backbone(domain: str, name: str | None = None) -> Backbone:
    """The backbone a user named for a domain (None: the domain's default), resolved once where it is
    picked and carried whole (core.backbone.Backbone). A domain of several backbones resolves its own
    (`backbone(name)`: AntiBERTy, Sapiens, a masked-LM folder); any other has its shipped model or a
    checkpoint of its kind by path. A name the domain does not know is refused with those it has."""
    dom = get_domain(domain)
    own = getattr(dom, "backbone", None)
    return own(name) if callable(own) else single_backbone(dom, name)


if TYPE_CHECKING:  # mypy (make lint) checks every domain against the core's contract; nothing runs this
    from ..core.protocol import AppDomain, Domain
    from .antibody import AntibodyDomain
    from .family import FamilyDomain
    from .protein import ProteinDomain
    from .sudoku import SudokuDomain

    def _every_domain_is_a_domain(
        s: SudokuDomain, p: ProteinDomain, f: FamilyDomain, a: AntibodyDomain
    ) -> list[Domain]:
        return [s, p, f, a]

    def _every_domain_is_an_app_domain(
        s: SudokuDomain, p: ProteinDomain, f: FamilyDomain, a: AntibodyDomain
    ) -> list[AppDomain]:
        return [s, p, f, a]
