"""Protein comparison: one length and seed under several samplers; a sweep against the reference
(proteins: the paper's k-means JSD; a family backbone: pair statistics against its held-out rows)."""

from pages.compare import render
from pages.views import VIEWS

render(VIEWS["protein"], "Protein comparison", "Same length and seed, side by side")
