"""Adding a sampler is one file: a toy rule registered here (with a parameter of its own) is
offered by the CLI, the grid parser, labels, sweeps (columns and --resume identity) and the
app's widgets, with no other edit. docs/samplers.md shows the same rule as a file."""

import csv

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest
from test_domain_template import DOMAIN

from mi_viz.cli import _sampler_or_grid, build_parser, domain_cli
from mi_viz.core.bench import Weights
from mi_viz.core.samplers import (
    SAMPLERS,
    Candidates,
    Param,
    Sampler,
    SamplerConfig,
    declare,
    row_label,
    undeclare,
    unregister,
)
from mi_viz.core.samplers import register as register_rule
from mi_viz.core.sweep import SweepOptions, parse_grid, run_sweep


def select_strided(H: np.ndarray, k: int, beta: float) -> list[int]:
    """The toy rule: in entropy order, every position whose entropy is within beta of the most
    confident one's, at most k of them."""
    order = np.argsort(H, kind="stable")
    keep = [int(i) for i in order if H[i] <= H[order[0]] + beta]
    return keep[: max(1, k)]


@pytest.fixture
def toy():
    declare(Param("beta", "float", "entropy window, nats", lo=0.0, ladder=(0.1, 0.5, 1.0)))
    register_rule(
        Sampler(
            "strided",
            "the k most confident positions within beta nats of the best",
            {"k": 3, "beta": 0.5},
            lambda c, cfg: select_strided(c.H, cfg.k, cfg.beta),
        )
    )
    yield SAMPLERS["strided"]
    unregister("strided")
    undeclare("beta")


def test_the_toy_rule_by_hand(toy):
    H = np.array([0.9, 0.1, 0.4, 0.55, 0.2])
    assert select_strided(H, 3, 0.5) == [1, 4, 2]  # 0.55 is 0.45 above 0.1: inside, but k = 3
    assert select_strided(H, 9, 0.35) == [1, 4, 2]
    assert select_strided(H, 9, 0.0) == [1]
    assert toy.select(Candidates(H=H), SamplerConfig("strided", k=2, beta=1.0)) == [1, 4]


def test_a_new_rule_is_offered_everywhere(toy, tmp_path, capsys):
    # the CLI: --sampler strided and a flag for its own parameter, with its help
    parser = build_parser()
    a = parser.parse_args(
        ["bench", "sudoku", "--puzzles", "p.txt", "--sampler", "strided", "--beta", "0.1", "--out", "o"]
    )
    cfg = _sampler_or_grid(a, domain_cli("sudoku"))
    assert (cfg.name, cfg.k, cfg.beta) == ("strided", 3, 0.1) and cfg.label() == "strided k=3 beta=0.1"
    with pytest.raises(SystemExit):
        parser.parse_args(["bench", "sudoku", "--help"])
    assert "--beta" in capsys.readouterr().out
    with pytest.raises(ValueError, match="strided takes k, beta, not gamma"):
        SamplerConfig("strided", gamma=0.2)
    # the grid syntax, labels and row labels
    cfgs = parse_grid("strided:beta=0.1,1; eb:gamma=0.1")
    assert [c.label() for c in cfgs] == ["strided k=3 beta=0.1", "strided k=3 beta=1", "eb gamma=0.1"]
    assert [parse_grid(c.grid_text())[0] for c in cfgs] == cfgs
    # a sweep: its column, and --resume keyed on it
    items = ["______", "a_____"]
    plot = {"metric": "valid_frac"}
    weights = Weights(fingerprint=__file__)
    rows = run_sweep(DOMAIN, cfgs, items, {"inputs": "toy"}, tmp_path, weights, SweepOptions(plot=plot))
    assert [r.get("beta") for r in rows] == [0.1, 1.0, None] and rows[2]["gamma"] == 0.1
    saved = list(csv.DictReader(open(tmp_path / "sweep.csv")))
    assert [row_label(r) for r in saved] == [c.label() for c in cfgs]
    grid = parse_grid("strided:beta=0.1,0.5")
    again = run_sweep(DOMAIN, grid, items, {"inputs": "toy"}, tmp_path, weights, SweepOptions(plot=plot, resume=True))
    assert [r["beta"] for r in again] == [0.1, 0.5] and again[0]["seconds"] == rows[0]["seconds"]  # reused


def test_a_new_rule_gets_its_widgets(toy):
    def page():
        import streamlit as st

        from pages.kit.widgets import sampler_picker

        cfg = sampler_picker("t", has_head=set(), default="strided")
        st.write(cfg.label())

    at = AppTest.from_function(page).run()
    assert not at.exception
    assert "strided" in at.selectbox(key="t_sampler").options
    beta = at.select_slider(key="t_strided_beta")
    assert beta.label == "beta (entropy window, nats)" and beta.value == 0.5
    beta.set_value(1.0).run()
    assert at.markdown[-1].value == "strided k=3 beta=1"
