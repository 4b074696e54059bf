"""Antibody decode: infill a V domain's region with a pretrained antibody LM (AntiBERTy, Sapiens), step
through it with the entropy and the estimated and exact maps, its IMGT regions along the axes."""

from pages.decode import render
from pages.views import VIEWS

render(VIEWS["antibody"], "Antibody decode")
