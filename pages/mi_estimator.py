"""MI estimator: head vs ground truth on held-out states, and what MI says about the structure."""

from pages.estimator import render
from pages.views import VIEWS

render(VIEWS)
