"""Antibody comparison: one chain's region infilled by several samplers on a shared timeline; sweeps
over natural chains judged by both antibody LMs."""

from pages.compare import render
from pages.views import VIEWS

render(VIEWS["antibody"], "Antibody comparison", "Same chain and region, side by side")
