"""One view per domain (pages/__init__.py): what a page needs to know about a domain, declared.

VIEWS lists them in the order the navigation shows them; app.py builds the navigation from
their pages, and every page function takes a view."""

from __future__ import annotations

from .antibody import AntibodyView
from .base import Item, View
from .family import FamilyView
from .protein import ProteinView
from .sudoku import SudokuView

VIEWS: dict[str, View] = {
    "sudoku": SudokuView(),
    "protein": ProteinView(specialised={"family": FamilyView, "antibody": AntibodyView}),
}

__all__ = ["VIEWS", "Item", "View"]
