"""One view per domain: what a page needs to know about a domain, declared.

A view module is found, not listed: for each domain of the registry (mi_viz.domains.DOMAINS, in
its order: the navigation's), pages/views/NAME.py, if there is one, declares either VIEW (a view
with pages of its own) or SPECIALISES = (domain, view class): a view its parent domain's view
hands to that domain's backbones (an antibody's, a family's: their backbones sit in the protein
pages). A new domain's view is one file here. app.py builds the navigation from VIEWS' pages."""

from __future__ import annotations

import importlib
import importlib.util

from mi_viz.domains import DOMAINS

from .base import Item, PagePlan, View


def _views() -> dict[str, View]:
    views: dict[str, View] = {}
    specialised: list[tuple[str, str, type]] = []
    for name in DOMAINS:
        if importlib.util.find_spec(f"{__name__}.{name}") is None:
            continue  # a domain without a view of its own (none today)
        module = importlib.import_module(f"{__name__}.{name}")
        if hasattr(module, "VIEW"):
            views[name] = module.VIEW
        if hasattr(module, "SPECIALISES"):
            parent, cls = module.SPECIALISES
            specialised.append((parent, name, cls))
    for parent, name, cls in specialised:
        views[parent].specialised[name] = cls
    return views


VIEWS: dict[str, View] = _views()

__all__ = ["VIEWS", "Item", "PagePlan", "View"]
