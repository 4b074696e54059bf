"""The CLI contract: per-puzzle CSV, last stdout line a JSON summary, bad lines skipped."""

import csv
import json
import subprocess
import sys

from conftest import ROOT

GOOD = "..8...5......3.....1.....96...49..21.7...8.....41..8.5.....73...9......83...869.."


def _cli(*args):
    r = subprocess.run([sys.executable, "-m", "mi_viz", *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                       timeout=600)
    return r


def test_bench_with_malformed_line(tmp_path, tiny_ckpt):
    mdm, head = tiny_ckpt
    f = tmp_path / "p.txt"
    f.write_text(f"# a comment\n{GOOD} some other field\nthis-line-is-bad\n{GOOD.replace('.', '0')}\n")
    out = tmp_path / "o.csv"
    for sampler, extra in (("sequential", []), ("topk", ["--k", "7"]), ("eb", ["--gamma", "0.5"]),
                           ("mi", ["--gamma", "0.3", "--lam", "0.5", "--head", head]),
                           ("mi-gt", ["--gamma", "0.3", "--lam", "0", "--gt-eps", "0.05"])):
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
    assert r.returncode != 0 and "puzzle file not found" in r.stderr
    r = _cli("bench", "sudoku", "--puzzles", f, "--checkpoint", tmp_path / "nothing", "--out", tmp_path / "o.csv")
    assert r.returncode == 2 and "checkpoint file not found" in r.stderr and "Traceback" not in r.stderr
    r = _cli("bench", "sudoku", "--puzzles", f, "--sampler", "bogus", "--checkpoint", mdm, "--out", tmp_path / "o.csv")
    assert r.returncode == 2 and "unknown sampler" in r.stderr


def test_sweep_and_mi_report(tmp_path, tiny_ckpt):
    mdm, head = tiny_ckpt
    f = tmp_path / "p.txt"
    f.write_text((GOOD + "\n") * 2)
    r = _cli("sweep", "sudoku", "--puzzles", f, "--checkpoint", mdm, "--head", head, "--grid",
             "sequential; topk:k=3,9; mi:gamma=0.3:lam=0,1", "--out-dir", tmp_path / "sw")
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(open(tmp_path / "sw" / "sweep.csv")))
    assert [x["sampler"] for x in rows] == ["sequential", "topk", "topk", "mi", "mi"]
    assert (tmp_path / "sw" / "sweep.png").stat().st_size > 1000
    assert (tmp_path / "sw" / "sweep.html").stat().st_size > 1000
    r = _cli("mi-report", "sudoku", "--puzzles", f, "--checkpoint", mdm, "--head", head, "--states", "3",
             "--out", tmp_path / "rep.json", "--pairs", tmp_path / "pairs.npz")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout.strip().splitlines()[-1])
    for k in ("n_states", "pearson", "spearman", "mae", "top_pair_recall", "auroc_structure_gt",
              "auroc_structure_est", "gt_passes_per_state", "gt_seconds_per_state", "head_seconds_per_state"):
        assert k in s
    assert s["n_states"] == 3 and s["gt_passes_per_state"] > 1
    r = _cli("figure", "sudoku", "--puzzles", f, "--checkpoint", mdm, "--head", head, "--step", "5",
             "--out", tmp_path / "fig.png")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "fig.png").stat().st_size > 10_000
