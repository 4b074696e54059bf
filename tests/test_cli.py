"""The CLI contract: per-puzzle CSV, last stdout line a JSON summary, bad lines skipped."""

import csv
import gzip
import json
import subprocess
import sys

import numpy as np
import pytest
import torch
from conftest import ROOT

from mi_viz.core.samplers import SAMPLERS
from mi_viz.core.sweep import rows_path

pytestmark = pytest.mark.slow  # subprocesses: make test-fast leaves this file out

GOOD = "..8...5......3.....1.....96...49..21.7...8.....41..8.5.....73...9......83...869.."


def _cli(*args):
    r = subprocess.run(
        [sys.executable, "-m", "mi_viz", *map(str, args)], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    return r


def test_bench_with_malformed_line(tmp_path, tiny_ckpt):
    mdm, head = tiny_ckpt
    f = tmp_path / "p.txt"
    f.write_text(f"# a comment\n{GOOD} some other field\nthis-line-is-bad\n{GOOD.replace('.', '0')}\n")
    out = tmp_path / "o.csv"
    for sampler, extra in (
        ("sequential", []),
        ("topk", ["--k", "7"]),
        ("eb", ["--gamma", "0.5"]),
        ("mi", ["--gamma", "0.3", "--lam", "0.5", "--head", head]),
        ("mi-gt", ["--gamma", "5", "--lam", "1", "--gt-eps", "0.05"]),  # entropies near ln 9: two fit in 5 nats
    ):
        r = _cli("bench", "sudoku", "--puzzles", f, "--sampler", sampler, "--checkpoint", mdm, "--out", out, *extra)
        assert r.returncode == 0, r.stderr
        assert "line 3:" in r.stderr and "skipped" in r.stderr
        summary = json.loads(r.stdout.strip().splitlines()[-1])
        assert {"sampler", "gamma", "lam", "k", "n", "solved_frac", "avg_passes"} <= set(summary)
        assert summary["sampler"] == sampler and summary["n"] == 2 and summary["skipped_lines"] == 1
        rows = list(csv.DictReader(open(out)))
        assert len(rows) == 2 and {"puzzle", "solved", "passes"} <= set(rows[0])
        assert rows[0]["puzzle"] == GOOD
        if sampler == "sequential":
            assert summary["gamma"] is None and summary["k"] is None
            assert all(int(r["passes"]) == GOOD.count(".") for r in rows)  # one cell per pass
        if sampler == "topk":
            assert summary["k"] == 7 and all(int(r["passes"]) == -(-GOOD.count(".") // 7) for r in rows)
        if sampler == "mi-gt":
            assert summary["avg_oracle_passes"] > 0


def test_bench_limit_and_errors(tmp_path, tiny_ckpt):
    mdm, _ = tiny_ckpt
    f = tmp_path / "p.txt"
    f.write_text((GOOD + "\n") * 5)
    r = _cli("bench", "sudoku", "--puzzles", f, "--limit", "3", "--checkpoint", mdm, "--out", tmp_path / "o.csv")
    assert json.loads(r.stdout.strip().splitlines()[-1])["n"] == 3
    r = _cli("bench", "sudoku", "--puzzles", tmp_path / "absent.txt", "--checkpoint", mdm, "--out", tmp_path / "o.csv")
    assert r.returncode == 2 and "puzzle file not found" in r.stderr and "Traceback" not in r.stderr
    r = _cli("bench", "sudoku", "--puzzles", f, "--checkpoint", tmp_path / "nothing", "--out", tmp_path / "o.csv")
    assert r.returncode == 2 and "checkpoint file not found" in r.stderr and "Traceback" not in r.stderr
    r = _cli("bench", "sudoku", "--puzzles", f, "--sampler", "bogus", "--checkpoint", mdm, "--out", tmp_path / "o.csv")
    assert r.returncode == 2 and "unknown sampler" in r.stderr


def test_sweep_and_mi_report(tmp_path, tiny_ckpt):
    mdm, head = tiny_ckpt
    f = tmp_path / "p.txt"
    f.write_text((GOOD + "\n") * 2)
    r = _cli(
        "sweep",
        "sudoku",
        "--puzzles",
        f,
        "--checkpoint",
        mdm,
        "--head",
        head,
        "--grid",
        "sequential; topk:k=3,9; mi:gamma=0.3:lam=0,1",
        "--out-dir",
        tmp_path / "sw",
    )
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(open(tmp_path / "sw" / "sweep.csv")))
    assert [x["sampler"] for x in rows] == ["sequential", "topk", "topk", "mi", "mi"]
    assert (tmp_path / "sw" / "sweep.png").stat().st_size > 1000
    assert (tmp_path / "sw" / "sweep.html").stat().st_size > 1000
    # two settings at a time in worker processes: the same rows, in grid order
    r = _cli(
        "sweep",
        "sudoku",
        "--puzzles",
        f,
        "--checkpoint",
        mdm,
        "--head",
        head,
        "--grid",
        "sequential; topk:k=3,9; mi:gamma=0.3:lam=0,1",
        "--out-dir",
        tmp_path / "sw2",
        "--jobs",
        "2",
        "--save-rows",
    )
    assert r.returncode == 0, r.stderr
    rows2 = list(csv.DictReader(open(tmp_path / "sw2" / "sweep.csv")))
    same = ("sampler", "gamma", "lam", "k", "n", "solved_frac", "avg_passes", "head_sha")
    assert [[x[k] for k in same] for x in rows2] == [[x[k] for k in same] for x in rows]
    assert all(x["jobs"] == "2" and x["threads"] == str(max(1, torch.get_num_threads() // 2)) for x in rows2)
    assert json.loads(r.stdout.strip().splitlines()[-1])["decoded"] == 5
    # the saved rows: each puzzle's index and figures, not its 81-digit strings (the index recovers them)
    with gzip.open(rows_path(tmp_path / "sw2", "topk k=9"), "rt") as h:
        saved = list(csv.DictReader(h))
    assert [s["i"] for s in saved] == ["0", "1"] and not {"puzzle", "output"} & set(saved[0])
    assert sum(int(s["solved"]) for s in saved) / 2 == float(rows2[2]["solved_frac"])
    assert all(1 <= int(s["passes"]) <= 9 for s in saved)  # top-9 on 81 cells: at most 9 passes
    r = _cli(
        "mi-report",
        "sudoku",
        "--puzzles",
        f,
        "--checkpoint",
        mdm,
        "--head",
        head,
        "--states",
        "3",
        "--structure-states",
        "2",
        "--out",
        tmp_path / "rep.json",
        "--pairs",
        tmp_path / "pairs.npz",
    )
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout.strip().splitlines()[-1])
    for k in (
        "n_states",
        "pearson",
        "spearman",
        "mae",
        "top_pair_recall",
        "auroc_structure_gt",
        "auroc_structure_est",
        "gt_passes_per_state",
        "gt_seconds_per_state",
        "head_seconds_per_state",
        "gt_directional_pearson",
    ):
        assert k in s
    assert s["n_states"] == 3 and s["gt_passes_per_state"] > 1
    by_ratio = s["structure_by_mask_ratio"]
    assert sorted(by_ratio) == ["0.6", "0.75", "0.9"]
    for v in by_ratio.values():
        assert v["n_states"] == 2 and v["n_pairs"] > 0 and 0 <= v["auroc_gt"] <= 1 and 0 <= v["auroc_est"] <= 1
    # heavier masking -> more masked pairs (same solutions, same seed)
    assert by_ratio["0.9"]["n_pairs"] > by_ratio["0.6"]["n_pairs"]
    z = np.load(tmp_path / "pairs.npz")
    assert len(z["hmin"]) == len(z["gt"]) and (z["hmin"] >= 0).all()
    r = _cli(
        "figure",
        "sudoku",
        "--puzzles",
        f,
        "--checkpoint",
        mdm,
        "--head",
        head,
        "--step",
        "5",
        "--out",
        tmp_path / "fig.png",
    )
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "fig.png").stat().st_size > 10_000


def test_sweep_resume_reuses_only_rows_of_the_same_weights(tmp_path, tiny_ckpt):
    import shutil

    mdm, head = tiny_ckpt
    f = tmp_path / "p.txt"
    f.write_text((GOOD + "\n") * 2)
    args = (
        "sweep",
        "sudoku",
        "--puzzles",
        f,
        "--checkpoint",
        mdm,
        "--grid",
        "topk:k=9; mi:gamma=0.3:lam=1",
        "--out-dir",
        tmp_path / "sw",
        "--resume",
    )
    r1 = _cli(*args, "--head", head)
    assert r1.returncode == 0, r1.stderr
    first = (tmp_path / "sw" / "sweep.csv").read_text()
    assert "reused" not in r1.stderr
    r2 = _cli(*args, "--head", head)
    assert r2.returncode == 0, r2.stderr
    assert r2.stderr.count("reused") == 2
    assert (tmp_path / "sw" / "sweep.csv").read_text() == first
    # another head (other weights): the topk row is reused, the mi row decoded again
    other = tmp_path / "head2"
    for ext in (".safetensors", ".json"):
        shutil.copy(str(head) + ext, str(other) + ext)
    from mi_viz.core.mi_head import load_head, save_head

    h, _ = load_head(other)
    with torch.no_grad():
        h.out.bias += 1.0
    save_head(other, h)
    r3 = _cli(*args, "--head", other)
    assert r3.returncode == 0, r3.stderr
    assert r3.stderr.count("reused") == 1 and "reused: topk" in r3.stderr
    rows = list(csv.DictReader(open(tmp_path / "sw" / "sweep.csv")))
    assert rows[0]["head_sha"] == "" and rows[1]["head_sha"] not in ("", first.splitlines()[2].split(",")[-1])
    # a row decoded under an older version of the MI rule (or before versions were recorded) is decoded again
    assert rows[1]["rule_version"] == str(SAMPLERS["mi"].version)
    for old in ("2", ""):
        rows[1]["rule_version"] = old
        with open(tmp_path / "sw" / "sweep.csv", "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        r4 = _cli(*args, "--head", other)
        assert r4.returncode == 0, r4.stderr
        assert r4.stderr.count("reused") == 1 and "reused: topk" in r4.stderr
        rows = list(csv.DictReader(open(tmp_path / "sw" / "sweep.csv")))
    # another grid: without --keep-others its rows replace the file's; with it the earlier rows stay after them
    narrow = [*args[:7], "topk:k=5", *args[8:]]
    r5 = _cli(*narrow, "--head", other, "--keep-others")
    assert r5.returncode == 0, r5.stderr
    assert [r["k"] for r in csv.DictReader(open(tmp_path / "sw" / "sweep.csv"))] == ["5", "9", ""]
    r6 = _cli(*narrow, "--head", other)
    assert r6.returncode == 0, r6.stderr
    assert [r["k"] for r in csv.DictReader(open(tmp_path / "sw" / "sweep.csv"))] == ["5"]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_sweep_with_a_corrupt_head_fails_before_decoding(tmp_path, tiny_ckpt, jobs):
    """One job or several: a broken MI head is a one-line message before any setting runs."""
    mdm, head = tiny_ckpt
    bad = tmp_path / "bad"
    (tmp_path / "bad.json").write_text(open(str(head) + ".json").read())
    (tmp_path / "bad.safetensors").write_bytes(b"not a safetensors file")
    f = tmp_path / "p.txt"
    f.write_text(GOOD + "\n")
    r = _cli(
        "sweep",
        "sudoku",
        "--puzzles",
        f,
        "--checkpoint",
        mdm,
        "--head",
        bad,
        "--grid",
        "topk:k=9; mi:gamma=0.3:lam=1",
        "--out-dir",
        tmp_path / "sw",
        "--jobs",
        jobs,
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "bad" in r.stderr and not (tmp_path / "sw" / "sweep.csv").exists()


def test_a_bug_keeps_its_traceback_bad_input_does_not(tmp_path, monkeypatch, capsys):
    """Issue 58: only a UserError is the user's to fix (`error: ...`, exit 2); anything else is a bug
    and keeps its traceback, never dressed as bad input."""
    from mi_viz import cli
    from mi_viz.core import sweep

    puzzles = ROOT / "data" / "sudoku" / "test_hard.txt"
    args = ["sweep", "sudoku", "--puzzles", str(puzzles), "--limit", "2", "--out-dir", str(tmp_path)]
    assert cli.main([*args, "--grid", "topk:k=0"]) == 2  # bad input: a message
    assert "error: k must be >= 1" in capsys.readouterr().err

    def planted(*a, **k):
        raise ValueError("a planted bug")  # a ValueError that is no UserError: a bug

    monkeypatch.setattr(sweep, "fingerprint", planted)
    with pytest.raises(ValueError, match="a planted bug"):
        cli.main([*args, "--grid", "sequential"])


def test_demask_heads_are_refused_by_name(tmp_path, capsys):
    """Issue 57's bad input: a TV head trained on another backbone, an MI head where the TV head goes,
    DEMASK on a backbone with no TV head, tau not finite or negative: each a message naming what
    exists (exit 2), no results file written."""
    from mi_viz import cli

    out = tmp_path / "b.csv"
    sudoku = ["bench", "sudoku", "--puzzles", str(ROOT / "data" / "sudoku" / "test_hard.txt"), "--limit", "1",
              "--out", str(out), "--sampler", "demask"]  # fmt: skip
    cases = [
        (["--tv-head", str(ROOT / "checkpoints" / "antibody_tv_head")], "the head was trained on another backbone"),
        (["--tv-head", str(ROOT / "checkpoints" / "sudoku_mi_head")], "is an MI head, not the TV (DEMASK) head"),
        (["--tau", "-1"], "tau must be >= 0 for demask"),
    ]
    for extra, said in cases:
        assert cli.main([*sudoku, *extra]) == 2, extra
        assert said in capsys.readouterr().err, extra
    with pytest.raises(SystemExit) as e:
        cli.main([*sudoku, "--tau", "inf"])
    assert e.value.code == 2 and "finite number" in capsys.readouterr().err
    protein = ["bench", "protein", "--n", "1", "--lengths", "50-52", "--out", str(out), "--sampler", "demask"]
    assert cli.main(protein) == 2
    assert "no TV (DEMASK) head is shipped for this protein backbone (it has: MI)" in capsys.readouterr().err
    assert not out.exists()
