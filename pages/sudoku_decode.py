"""Sudoku decode: step through one decode, with entropy, estimated and true MI side by side."""

from pages.decode import render
from pages.views import VIEWS

render(VIEWS["sudoku"], "Sudoku decode")
