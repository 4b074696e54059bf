"""Sampler comparison: one puzzle, several samplers on a shared timeline; and sweeps."""

from pages.compare import render
from pages.views import VIEWS

render(VIEWS["sudoku"], "Sampler comparison", "Same puzzle, side by side")
