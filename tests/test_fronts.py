"""benchmarks/fronts.py's per-input bootstrap read against figures worked by hand: two fronts of two
settings each, the per-input rows a sweep saves, the fronts read at matched passes."""

import csv
import gzip
import json
from types import SimpleNamespace

import numpy as np
import pytest


def _sweep(d, settings: dict) -> None:
    """A sweep folder: sweep.csv (one line a setting (sampler, gamma, tau)) and rows/LABEL.csv.gz (each
    input's figures, a dict an input, as --save-rows writes them)."""
    from mi_viz.core.samplers import row_label
    from mi_viz.core.sweep import rows_path

    lines = [{"sampler": s, "gamma": g, "lam": 10 if g else "", "tau": t, "conf": 0 if t else "", "rule_version": ""}
             for s, g, t in settings]  # fmt: skip
    d.mkdir(parents=True)
    with open(d / "sweep.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(lines[0]))
        w.writeheader()
        w.writerows(lines)
    for line, per in zip(lines, settings.values()):
        p = rows_path(d, row_label(line))
        p.parent.mkdir(exist_ok=True)
        with gzip.open(p, "wt", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["i", *per[0]])
            w.writeheader()
            w.writerows({"i": i, **r} for i, r in enumerate(per))


@pytest.mark.parametrize("metric", ["pll", "solved"])
def test_the_per_input_bootstrap_reads_two_fronts_at_matched_passes(tmp_path, metric):
    """MI (4 and 6 passes) and TV (3 and 7 passes) over four inputs: at 5 passes the MI front reads the
    mean of its two settings' means, TV its value a half of the way between its settings; a setting's
    input with no figure (a judge that skipped it) is left out of that setting's mean."""
    from benchmarks.fronts import per_input_bootstrap
    from mi_viz.core.choice import Fronts

    hi = 1 if metric == "solved" else -1.0  # a solved puzzle, or a PLL
    lo = 0 if metric == "solved" else -3.0
    settings = {  # (sampler, gamma, tau) -> [(passes, value) per input]
        ("mi-gt", 8, ""): [(4, hi), (4, lo), (4, hi), (4, hi)],
        ("mi-gt", 2, ""): [(6, hi), (6, hi), (6, hi), (6, hi)],
        ("demask-gt", "", 0.4): [(3, lo), (3, lo), (3, hi), (3, lo)],
        ("demask-gt", "", 0.05): [(7, hi), (7, lo), (7, hi), (7, "" if metric == "pll" else hi)],
    }
    _sweep(tmp_path / "s", {k: [{"passes": n, metric: v} for n, v in per] for k, per in settings.items()})
    plan = Fronts("per-input bootstrap", "", method="mi-gt lam=10", metrics="" if metric == "solved" else metric)
    out = tmp_path / "fronts.json"
    per_input_bootstrap(SimpleNamespace(sweep_dir=str(tmp_path / "s"), method="mi-gt lam=10", at="5", boot=200,
                                        out=str(out)), plan)  # fmt: skip
    f = json.loads(out.read_text())
    scale = 100 if metric == "solved" else 1
    mean = lambda v: scale * np.mean([x for _, x in v if x != ""])  # noqa: E731
    s = list(settings.values())
    mi = (mean(s[0]) + mean(s[1])) / 2
    tv = mean(s[2]) + (5 - 3) / (7 - 3) * (mean(s[3]) - mean(s[2]))
    cell = f["at"]["5"]
    assert cell["method"] == pytest.approx(mi, abs=1e-3)
    vs = cell["vs"]["demask-gt"]
    assert vs[metric] == pytest.approx(tv, abs=1e-3) and vs["diff"] == pytest.approx(mi - tv, abs=1e-3)
    assert vs["ci90"][0] <= vs["diff"] <= vs["ci90"][1]
    assert ("metric" in f) == (metric != "solved")  # Sudoku's committed files carry no such key


def _rows(d, settings: dict) -> None:
    """A sweep whose per-input rows hold what head_vs_oracle pairs: passes, the PLL, the masked count and
    the natural input's PLL (the same input in both sweeps)."""
    row = lambda i, n, v: {"masked": 10 + i, "pll_natural": -2 - i / 10, "passes": n, "pll": v}  # noqa: E731
    _sweep(d, {k: [row(i, n, v) for i, (n, v) in enumerate(per)] for k, per in settings.items()})


def test_head_vs_oracle_pairs_each_rule_with_its_exact_twin(tmp_path):
    """The head sweep holds four inputs and a setting with no oracle twin; the oracles hold the first
    three: mi gamma 8 pairs with mi-gt gamma 8 only (not gamma 2), demask with demask-gt at its own tau;
    head minus oracle is the mean of the per-input differences; a different input stops the run."""
    from benchmarks.head_vs_oracle import main

    _rows(tmp_path / "o", {("mi-gt", 8, ""): [(5, -1.5), (6, -2.0), (7, -2.5)],
                           ("mi-gt", 2, ""): [(9, -1.0), (9, -1.0), (9, -1.0)],
                           ("demask-gt", "", 0.2): [(4, -2.0), (4, -2.0), (4, -2.0)]})  # fmt: skip
    _rows(tmp_path / "h", {("mi", 8, ""): [(4, -1.0), (6, -2.0), (5, -3.0), (9, -9.0)],
                           ("demask", "", 0.2): [(4, -2.5), (5, -2.5), (6, -2.5), (4, 0.0)],
                           ("sequential", "", ""): [(20, 0.0)] * 4})  # fmt: skip
    out = tmp_path / "hv.json"
    main(["--oracles", str(tmp_path / "o"), "--heads", str(tmp_path / "h"), "--boot", "500", "--out", str(out)])
    f = json.loads(out.read_text())
    assert f["inputs"] == 3 and set(f["pairs"]) == {"mi gamma=8 lam=10", "demask tau=0.2 conf=0"}
    mi = f["pairs"]["mi gamma=8 lam=10"]
    assert mi["oracle"] == "mi-gt gamma=8 lam=10"
    assert mi["pll"]["head"] == pytest.approx(-2.0) and mi["pll"]["diff"] == pytest.approx(0.0, abs=1e-9)
    assert mi["passes"]["diff"] == pytest.approx((-1 + 0 - 2) / 3, abs=1e-4)
    dm = f["pairs"]["demask tau=0.2 conf=0"]["pll"]
    assert dm["diff"] == pytest.approx(-0.5) and dm["ci90"] == pytest.approx([-0.5, -0.5])
    # the same index, another chain: stopped, not paired
    p = next((tmp_path / "h" / "rows").glob("mi_*"))
    with gzip.open(p, "rt") as fh:
        text = fh.read().replace("\n0,10,", "\n0,11,")
    with gzip.open(p, "wt") as fh:
        fh.write(text)
    with pytest.raises(SystemExit, match="input 0 differs"):
        main(["--oracles", str(tmp_path / "o"), "--heads", str(tmp_path / "h"), "--boot", "50"])


def test_head_vs_oracle_reads_head_rules_from_several_folders(tmp_path):
    """Sudoku's shape: the MI head's rows in one folder, DEMASK's in another, a solved flag an input;
    each rule finds its twin in whichever folder holds it; sweeps of another input file are refused
    (an oracle sweep's limit is not a different file)."""
    from benchmarks.head_vs_oracle import main
    from mi_viz.core.sweep import inputs_file, inputs_label

    solved = lambda v: [{"passes": n, "solved": x} for n, x in v]  # noqa: E731
    _sweep(
        tmp_path / "o", {("mi-gt", 8, ""): solved([(5, 1), (6, 1)]), ("demask-gt", "", 0.2): solved([(4, 1), (4, 1)])}
    )
    _sweep(tmp_path / "mi", {("mi", 8, ""): solved([(4, 1), (6, 0), (5, 1)])})
    _sweep(tmp_path / "tv", {("demask", "", 0.2): solved([(3, 0), (3, 1), (3, 1)])})
    out = tmp_path / "hv.json"
    heads = f"{tmp_path / 'mi'},{tmp_path / 'tv'}"
    main(["--oracles", str(tmp_path / "o"), "--heads", heads, "--boot", "200", "--out", str(out)])
    f = json.loads(out.read_text())
    assert f["inputs"] == 2 and len(f["heads"]) == 2
    assert f["pairs"]["mi gamma=8 lam=10"]["solved"]["diff"] == pytest.approx(-0.5)
    assert f["pairs"]["demask tau=0.2 conf=0"]["solved"]["diff"] == pytest.approx(-0.5)
    assert f["pairs"]["demask tau=0.2 conf=0"]["passes"]["diff"] == pytest.approx(-1.0)
    label = inputs_label("sabdab_test.tsv.gz:cdr3", 71) + ":in-scope"  # as the antibody CLI writes it
    assert label == "sabdab_test.tsv.gz:cdr3:first71:in-scope"
    assert inputs_file(label) == inputs_file(inputs_label("sabdab_test.tsv.gz:cdr3") + ":in-scope")
    for d, name in (("o", "test_hard.txt"), ("tv", "val.txt")):  # the oracles on test puzzles, a head on validation's
        text = (tmp_path / d / "sweep.csv").read_text().splitlines()
        (tmp_path / d / "sweep.csv").write_text("\n".join([text[0] + ",puzzles", *(t + "," + name for t in text[1:])]))
    with pytest.raises(SystemExit, match="different inputs"):
        main(["--oracles", str(tmp_path / "o"), "--heads", heads, "--boot", "50"])


def test_two_sweeps_of_the_same_inputs_read_as_one(tmp_path):
    """The MI settings in one folder, TV's in another (and sequential in both, read once): the fronts
    are the one-folder reading's, figure for figure; folders of different inputs are refused."""
    from benchmarks.fronts import per_input_bootstrap
    from mi_viz.core.choice import Fronts

    per = lambda v: [{"passes": n, "pll": x} for n, x in v]  # noqa: E731
    mi = {("mi-gt", 8, ""): per([(4, -1.0), (4, -3.0), (4, -1.0)]), ("mi-gt", 2, ""): per([(6, -1.0)] * 3)}
    tv = {("demask-gt", "", 0.4): per([(3, -3.0), (3, -1.0), (3, -3.0)]),
          ("demask-gt", "", 0.05): per([(7, -1.0), (7, -1.0), (7, -2.0)])}  # fmt: skip
    seq = {("sequential", "", ""): per([(20, -0.5)] * 3)}
    _sweep(tmp_path / "one", {**mi, **tv, **seq})
    _sweep(tmp_path / "a", {**mi, **seq})
    _sweep(tmp_path / "b", {**seq, **tv})
    plan = Fronts("per-input bootstrap", "", method="mi-gt lam=10", metrics="pll")

    def read(dirs, out):
        a = SimpleNamespace(sweep_dir=dirs, method="mi-gt lam=10", at="5", boot=100, out=str(out))
        per_input_bootstrap(a, plan)
        return json.loads(out.read_text())

    one = read(str(tmp_path / "one"), tmp_path / "one.json")
    two = read(f"{tmp_path / 'a'},{tmp_path / 'b'}", tmp_path / "two.json")
    assert one.pop("sweep_dir") != two.pop("sweep_dir") and one == two and "demask-gt" in two["at"]["5"]["vs"]
    _sweep(tmp_path / "c", {("demask-gt", "", 0.2): per([(5, -1.0)] * 2)})
    with pytest.raises(SystemExit, match="same inputs"):
        read(f"{tmp_path / 'a'},{tmp_path / 'c'}", tmp_path / "three.json")


def test_paired_chains_against_a_case_worked_by_hand(tmp_path):
    """Every antibody verdict comes from paired_chains: four chains, the validated MI rule at 4 passes,
    sequential, top-k on both sides of 4 passes (read a third of the way from k=4 at 3 passes to k=2 at
    6) and dilated at exactly 4 passes, 0.1 below the MI rule on every chain (a constant difference: its
    interval is the point, its spread and detectable effect 0)."""
    from benchmarks.fronts import paired_chains
    from mi_viz.core.choice import Fronts
    from mi_viz.core.samplers import row_label
    from mi_viz.core.sweep import rows_path

    mi = [-1.5, -1.5, -1.9, -2.1]
    settings = {  # (sampler, params) -> (passes, per-chain PLL)
        ("sequential", ()): (10, [-1.0, -1.2, -1.4, -1.6]),
        ("mi", (("gamma", 6), ("lam", 1), ("scan", "stop"))): (4, mi),
        ("topk", (("k", 2),)): (6, [-1.2] * 4),
        ("topk", (("k", 4),)): (3, [-2.0] * 4),
        ("dilated", (("k", 3), ("d", 2))): (4, [v - 0.1 for v in mi]),
    }
    d = tmp_path / "s"
    (d / "rows").mkdir(parents=True)
    lines = []
    for (s, params), (n, pll) in settings.items():
        line = {"sampler": s, "gamma": "", "lam": "", "k": "", "scan": "", "tau": "", "kl": "", "d": "",
                **dict(params), "rule_version": "", "avg_passes": n, "pll": float(np.mean(pll))}  # fmt: skip
        lines.append(line)
        with gzip.open(rows_path(d, row_label(line)), "wt", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["i", "species", "passes", "pll", "recovery"])
            w.writeheader()
            w.writerows({"i": i, "species": "human", "passes": n, "pll": v, "recovery": 0.5} for i, v in enumerate(pll))
    with open(d / "sweep.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(lines[0]))
        w.writeheader()
        w.writerows(lines)
    choice = tmp_path / "choice.json"
    choice.write_text(json.dumps({"share": 2.5, "chosen": {"mi": {"gamma": 6.0, "lam": 1.0, "scan": "stop"}},
                                  "at_budget": {}}))  # fmt: skip
    out = tmp_path / "fronts.json"
    a = SimpleNamespace(sweep_dir=str(d), choice=str(choice), metrics="pll", boot=400, out=str(out))
    paired_chains(a, Fronts("paired chains", "", rivals=("topk", "dilated", "eb"), metrics="pll"))
    f = json.loads(out.read_text())
    assert f["chains"] == 4 and f["comparisons_vs_rivals"] == 2 and f["family_wise_level"] == pytest.approx(0.95)
    cell = f["budgets"]["2.5"]
    assert cell["mi"] == "mi gamma=6 lam=1" and cell["mi_passes"] == 4 and cell["sequential_passes"] == 10
    seq = cell["vs_sequential"]["pll"]
    assert seq["diff"] == pytest.approx(-0.45) and seq["n"] == 4 and seq["verdict"] == "behind"
    assert seq["sd"] == pytest.approx(np.std([-0.5, -0.3, -0.5, -0.5], ddof=1), abs=1e-4)
    topk = -2.0 * 2 / 3 - 1.2 / 3  # a third of the way from 3 passes to 6
    tk = cell["rivals"]["topk"]
    assert tk["settings"] == ["topk k=4", "topk k=2"]
    assert tk["pll"]["diff"] == pytest.approx(np.mean(mi) - topk, abs=1e-4)
    assert tk["pll"]["ci_fw"][0] <= tk["pll"]["ci90"][0] <= tk["pll"]["diff"] <= tk["pll"]["ci90"][1]
    dil = cell["rivals"]["dilated"]["pll"]
    assert dil["diff"] == pytest.approx(0.1) and dil["ci90"] == pytest.approx([0.1, 0.1]) and dil["verdict"] == "ahead"
    assert dil["sd"] == pytest.approx(0.0, abs=1e-9) and dil["mde80"] == pytest.approx(0.0, abs=1e-9)
    assert "eb" not in cell["rivals"]  # a rival with no test row is not compared
    assert f["species"]["human"]["chains"] == 4
    assert "seed_spread" not in f  # no second seed: the file reads as before

    # a second sampling seed of two of the settings: each one's spread, the others left out
    s1 = tmp_path / "s1"
    s1.mkdir()
    with open(s1 / "sweep.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(lines[0]))
        w.writeheader()
        w.writerows([{**x, "pll": x["pll"] + 0.05} for x in lines[:2]])
    a.seed1 = str(s1)
    paired_chains(a, Fronts("paired chains", "", rivals=("topk", "dilated", "eb"), metrics="pll"))
    spread = json.loads(out.read_text())["seed_spread"]
    assert set(spread) == {"sequential", "mi gamma=6 lam=1"}
    assert spread["sequential"]["pll"] == {"seed0": -1.3, "seed1": pytest.approx(-1.25), "spread": 0.05}
    del a.seed1

    # a family that re-reads another sweep of the same chains (--also): dilated's row moved there reads the same
    other = tmp_path / "other"
    (other / "rows").mkdir(parents=True)
    dil_line = next(x for x in lines if x["sampler"] == "dilated")
    rows_path(d, row_label(dil_line)).rename(rows_path(other, row_label(dil_line)))
    for folder, keep in ((d, [x for x in lines if x is not dil_line]), (other, [dil_line])):
        with open(folder / "sweep.csv", "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(lines[0]))
            w.writeheader()
            w.writerows(keep)
    a2 = SimpleNamespace(**{**vars(a), "also": str(other), "out": str(tmp_path / "f2.json")})
    paired_chains(a2, Fronts("paired chains", "", rivals=("topk", "dilated", "eb"), metrics="pll"))
    f2 = json.loads((tmp_path / "f2.json").read_text())
    assert f2.pop("also").endswith("other") and f2["budgets"] == f["budgets"]
    with gzip.open(rows_path(other, row_label(dil_line)), "wt", newline="") as fh:  # one chain fewer: refused
        w = csv.DictWriter(fh, fieldnames=["i", "species", "passes", "pll", "recovery"])
        w.writeheader()
        w.writerow({"i": 0, "species": "human", "passes": 4, "pll": -1.6, "recovery": 0.5})
    with pytest.raises(SystemExit, match="same chains"):
        paired_chains(a2, Fronts("paired chains", "", rivals=("topk", "dilated", "eb"), metrics="pll"))
    # a family read at some budgets of its choice only (its other rows not made yet): said in the file
    a3 = SimpleNamespace(**{**vars(a), "budgets": "2.5", "out": str(tmp_path / "f3.json")})
    paired_chains(a3, Fronts("paired chains", "", rivals=("topk", "dilated", "eb"), metrics="pll"))
    assert json.loads((tmp_path / "f3.json").read_text())["budgets_read"] == ["2.5"]
    with pytest.raises(SystemExit, match="no budget 4"):
        paired_chains(SimpleNamespace(**{**vars(a3), "budgets": "4"}), Fronts("paired chains", "", metrics="pll"))


@pytest.mark.parametrize(
    "ci,word",
    [([0.01, 0.2], "ahead"), ([-0.2, -0.01], "behind"), ([-0.04, 0.04], "level"), ([-0.04, 0.09], "no worse"),
     ([-0.09, 0.04], "no better"), ([-0.09, 0.09], "no difference detected"), ([-0.05, 0.01], "no better")],
)  # fmt: skip
def test_verdict_words_come_from_two_one_sided_tests(ci, word):
    from benchmarks.fronts import verdict

    assert verdict(ci) == word


def test_diversity_pairs_two_seeds_rows_by_hand(tmp_path):
    """antibody_diversity pairs: per chain, the share of infilled residues its two samples share; each
    setting's PLL under both seeds and their spread."""
    from benchmarks.antibody_diversity import identity, pairs
    from mi_viz.core.samplers import row_label
    from mi_viz.core.sweep import rows_path

    assert identity("ACDE", "ACDF") == 0.75 and identity("", "") == 1.0
    with pytest.raises(ValueError, match="not of one chain"):
        identity("AC", "A")
    infills = {0: ["ACDE", "WWW"], 1: ["ACDF", "WYW"]}  # seed -> per chain
    plls = {0: [-1.0, -2.0], 1: [-1.5, -2.5]}
    for seed in (0, 1):
        d = tmp_path / f"s{seed}"
        (d / "rows").mkdir(parents=True)
        line = {"sampler": "sequential", "gamma": "", "lam": "", "k": "", "scan": "", "tau": "", "kl": "", "d": ""}
        with open(d / "sweep.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(line))
            w.writeheader()
            w.writerow(line)
        with gzip.open(rows_path(d, row_label(line)), "wt", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["i", "masked", "infill", "pll"])
            w.writeheader()
            w.writerows({"i": i, "masked": len(s), "infill": s, "pll": p}
                        for i, (s, p) in enumerate(zip(infills[seed], plls[seed])))  # fmt: skip
    got = pairs([tmp_path / "empty", tmp_path / "s0"], [tmp_path / "empty", tmp_path / "s1"])["settings"]["sequential"]
    assert got["chains"] == 2 and got["identity"] == pytest.approx((0.75 + 2 / 3) / 2, abs=1e-4)
    assert got["pll"] == {"seed0": -1.5, "seed1": -2.0, "spread": 0.5}
