"""Every committed choice.json names exactly the sweep row that earned it: every declared
parameter of the registry (samplers.columns(), `scan` included) round-trips to one setting of
its validation sweep, whose figures are the choice's (issue 46: a hand-copied parameter list
once left `scan` out and named another row)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from benchmarks.defaults import folder_of
from benchmarks.report import defaults_from_choice, params_of, rows_for, setting
from mi_viz.core.samplers import PARAMS, columns

ROOT = Path(__file__).resolve().parents[1]


def _rows(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _check(chosen: dict, rows: list[dict], figures: tuple[str, ...]) -> None:
    for sampler, row in chosen.items():
        if row is None:
            continue
        params = {k: v for k, v in row.items() if k in PARAMS}
        hits = rows_for(rows, sampler, params)
        assert hits, f"{sampler} {params}: no sweep row has this setting"
        assert len({setting(r) for r in hits}) == 1, f"{sampler} {params}: names {len(hits)} settings"
        for r in hits:  # a setting the sweep holds twice (same figures) is still one setting
            assert params_of(r) == params, sampler
            for f in figures:
                if f in row:
                    assert float(r[f]) == pytest.approx(row[f]), (sampler, f)


@pytest.mark.parametrize(
    "criterion,figures",
    [
        ("sudoku", ("avg_passes", "solved_frac")),
        ("sudoku-demask", ("avg_passes", "solved_frac")),
        ("sudoku-revise", ("avg_passes", "solved_frac")),
        ("protein", ("avg_passes", "jsd")),
        ("antibody", ("avg_passes", "pll")),
        ("antibody-sapiens", ("avg_passes", "pll")),
        ("antibody-revise", ("avg_passes", "pll")),
        ("antibody-olga", ("avg_passes", "pll")),
    ],
)
def test_choice_rows_round_trip_to_their_sweep_row(criterion, figures):
    d = ROOT / "results" / folder_of(criterion) / "val_sweep"  # a criterion's folder (its domain declares it)
    choice = json.loads((d / "choice.json").read_text())
    chosen = choice.get("chosen") or {k: v for k, v in choice.items() if isinstance(v, dict) and k != "sequential"}
    assert chosen
    _check(chosen, _rows(d / "sweep.csv"), figures)


def test_params_of_reads_every_declared_parameter_with_its_kind():
    row = {"sampler": "mi-pairs", **{p: "" for p in columns()}, "gamma": "0.01", "lam": "0.5", "scan": "skip"}
    assert params_of(row) == {"gamma": 0.01, "lam": 0.5, "scan": "skip"}
    row = {"sampler": "margin", **{p: "" for p in columns()}, "k": "4.0", "tau": "0.9"}
    got = params_of({**row, "k": "4"})
    assert got == {"k": 4, "tau": 0.9} and isinstance(got["k"], int)
    # a setting that differs only in `scan` is another row
    rows = [
        {"sampler": "mi-pairs", **{p: "" for p in columns()}, "gamma": "0.01", "lam": "0.5", "scan": s}
        for s in ("stop", "skip")
    ]
    assert [r["scan"] for r in rows_for(rows, "mi-pairs", {"gamma": 0.01, "lam": 0.5, "scan": "skip"})] == ["skip"]


def test_defaults_from_a_choice_file_that_has_choices():
    """The reading every domain's defaults go through (issue 49: the family's choice file is all
    null, so its test alone would never see a choice): parameters kept with their kinds, figures
    dropped, an unchosen sampler absent, mi-gt a copy of mi's setting."""
    chosen = {
        "mi": {"gamma": 2.0, "lam": 10.0, "scan": "stop", "relative_passes": 0.41},
        "topk": {"k": 4, "relative_passes": 0.25},
        "eb": None,
    }
    d = defaults_from_choice(chosen)
    assert d == {
        "mi": {"gamma": 2.0, "lam": 10.0, "scan": "stop"},
        "mi-gt": {"gamma": 2.0, "lam": 10.0, "scan": "stop"},
        "topk": {"k": 4},
    }
    d["mi-gt"]["gamma"] = 9.0
    assert d["mi"]["gamma"] == 2.0  # a copy, not the same dict
    assert defaults_from_choice({**chosen, "mi-gt": {"gamma": 1.0, "lam": 1.0}})["mi-gt"] == {"gamma": 1.0, "lam": 1.0}


CRITERIA = ["sudoku", "sudoku-demask", "sudoku-revise", "protein", "antibody", "antibody-sapiens", "antibody-revise",
            "antibody-olga", "family"]  # fmt: skip


def test_every_committed_choice_file_is_checked():
    """A choice file the parametrised tests below do not name would go unchecked: each committed one is
    one of theirs."""
    covered = {ROOT / "results" / folder_of(c) / ("choice.json" if c == "family" else "val_sweep/choice.json")
               for c in CRITERIA}  # fmt: skip
    assert set((ROOT / "results").rglob("choice.json")) == covered


@pytest.mark.parametrize("criterion", CRITERIA)
def test_one_defaults_benchmark_rewrites_every_committed_choice(criterion, tmp_path, capsys):
    """benchmarks/defaults.py, the one choosing script (the criterion its argument), gives each
    committed choice file back byte for byte from its validation sweep."""
    from benchmarks import defaults

    where = ROOT / "results" / folder_of(criterion)
    committed = where / ("choice.json" if criterion == "family" else "val_sweep/choice.json")
    defaults.main([criterion, "--out", str(tmp_path / "choice.json")])
    assert (tmp_path / "choice.json").read_bytes() == committed.read_bytes()


def test_the_oracle_grid_is_each_chosen_rule_at_its_setting_read_exactly():
    """defaults --grid --oracles: each chosen rule that has an exact-map twin, as X-gt at X's chosen
    setting (no sequential, no rule without a twin): the oracle sweep head_vs_oracle pairs with."""
    from benchmarks.defaults import test_grid

    choice = {"chosen": {"demask": {"scan": "stop", "tau": 0.1, "conf": 0.99, "avg_passes": 10.5}, "topk": {"k": 3}},
              "at_budget": {"1/4": {"chosen": {"mi": {"gamma": 8.0, "lam": 10.0, "scan": "stop"}}}}}  # fmt: skip
    assert test_grid(choice) == "sequential; demask:scan=stop:tau=0.1:conf=0.99; topk:k=3; mi:gamma=8:lam=10:scan=stop"
    assert test_grid(choice, oracles=True) == "demask-gt:scan=stop:tau=0.1:conf=0.99; mi-gt:gamma=8:lam=10:scan=stop"


def test_the_controls_grid_is_mi_revise_at_its_choice_but_for_pick_and_act():
    from benchmarks.defaults import controls_grid
    from mi_viz.core.sweep import parse_grid

    row = {"gamma": 6.0, "lam": 1.0, "scan": "stop", "theta": 0.05, "rho": 0.3, "pick": "mi", "act": "remask"}
    cfgs = parse_grid(controls_grid({"chosen": {"mi-revise": row}})[2:])
    assert [(c.pick, c.act) for c in cfgs] == [("random", "remask"), ("conf", "remask"), ("mi", "defer")]
    assert all((c.gamma, c.lam, c.theta, c.rho) == (6.0, 1.0, 0.05, 0.3) for c in cfgs)
    assert controls_grid({"chosen": {"mi": row}}) == ""
