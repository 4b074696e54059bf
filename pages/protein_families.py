"""Protein families: contacts from MI, generation by pair statistics, training on your own alignment."""

from pages.families import render

render()
