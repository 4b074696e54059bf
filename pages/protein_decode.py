"""Protein decode: step through a protein (or protein-family) decode, with entropy, estimated and true MI."""

from pages.decode import render
from pages.views import VIEWS

render(VIEWS["protein"], "Protein decode")
