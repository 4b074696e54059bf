"""Training pipelines: data generation, resume (exactly), DDP smoke run, MI data + head."""

import csv
import json
import os
import subprocess
import sys

import pytest
import torch

from conftest import ROOT
from mi_viz import sudoku as S
from mi_viz.models import load_mdm

TRAIN = [sys.executable, str(ROOT / "training" / "train_mdm.py")]


def _run(cmd, env=None):
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    return r


def test_data_generation_is_valid_and_disjoint(tiny_data):
    grids = (tiny_data / "generated" / "train_grids.txt").read_text().split()
    assert len(grids) == 64 and all(S.is_solution(S.parse_board(g)) for g in grids)
    hard = list(csv.DictReader(open(tiny_data / "test_hard.csv")))
    medium = list(csv.DictReader(open(tiny_data / "test_medium.csv")))
    assert len(hard) == 3 and len(medium) == 2
    train_sol = set(grids) | {r["solution"] for r in csv.DictReader(open(tiny_data / "generated" / "train_puzzles.csv"))}
    for r in hard + medium:
        p = S.parse_board(r["puzzle"])
        assert S.count_solutions(p) == 1 and S.board_to_string(S.solve(p).solution) == r["solution"]
        assert r["solution"] not in train_sol
    assert all(not S.rate(S.parse_board(r["puzzle"])).singles_solvable for r in hard)
    assert all(S.rate(S.parse_board(r["puzzle"])).singles_solvable for r in medium)


def _train(run_dir, data, steps, extra=()):
    return _run(TRAIN + ["--preset", "tiny", "--run-dir", str(run_dir), "--data",
                         str(data / "generated" / "train_grids.txt"), "--val",
                         str(data / "generated" / "train_puzzles.csv"), "--max-steps", str(steps),
                         "--save-every", "5", "--eval-every", "100", "--warmup", "2", *extra])


def test_resume_matches_an_uninterrupted_run(tmp_path, tiny_data):
    _train(tmp_path / "a", tiny_data, 12)
    _train(tmp_path / "b", tiny_data, 12, ["--stop-at-step", "7"])  # an interruption at step 7
    r = _train(tmp_path / "b", tiny_data, 12)  # same command, longer budget: resumes
    assert "resumed from" in r.stdout
    a, meta_a = load_mdm(tmp_path / "a" / "last")
    b, meta_b = load_mdm(tmp_path / "b" / "last")
    assert meta_a["step"] == meta_b["step"] == 12
    for k, v in a.state_dict().items():
        assert torch.allclose(v, b.state_dict()[k], atol=1e-6), k
    log = list(csv.DictReader(open(tmp_path / "b" / "log.csv")))
    assert [int(r["step"]) for r in log][-1] == 12 and (tmp_path / "b" / "loss.png").exists()
    assert not list((tmp_path / "b").glob("*.tmp"))


def test_ddp_two_processes(tmp_path, tiny_data):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    r = _run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port", "29531",
              str(ROOT / "training" / "train_mdm.py"), "--preset", "tiny", "--run-dir", str(tmp_path / "ddp"),
              "--data", str(tiny_data / "generated" / "train_grids.txt"), "--val",
              str(tiny_data / "generated" / "train_puzzles.csv"), "--max-steps", "6", "--eval-every", "100"], env=env)
    assert "world 2" in r.stdout
    meta = json.loads((tmp_path / "ddp" / "last.json").read_text())
    assert meta["step"] == 6 and meta["extra"]["world_size"] == 2 and meta["extra"]["examples"] == 6 * 16 * 2


def test_mi_dataset_and_head(tmp_path, tiny_data, tiny_ckpt):
    mdm, _ = tiny_ckpt
    cmd = [sys.executable, str(ROOT / "training" / "make_mi_dataset.py"), "--mdm", str(mdm), "--puzzles",
           str(tiny_data / "generated" / "train_puzzles.csv"), "--n-val-holdout", "4", "--n-puzzles", "4",
           "--n-random", "4", "--states-per-puzzle", "2", "--shard-size", "4", "--eps", "0.05"]
    # two independent workers, then a merge
    for rank in (0, 1):
        _run(cmd + ["--out", str(tmp_path / "mi"), "--rank", str(rank), "--world", "2"])
    shards = sorted((tmp_path / "mi").glob("shard_*.safetensors"))
    assert len(shards) == 2
    r = _run(cmd + ["--out", str(tmp_path / "mi"), "--rank", "0", "--world", "2"])  # resumable: nothing to redo
    assert "0 new states" in r.stdout
    _run(cmd + ["--out", str(tmp_path / "mi_one"), "--max-shards", "1"])  # 4 shards of jobs, the first one made
    assert [s.name for s in (tmp_path / "mi_one").glob("shard_*")] == ["shard_000_00000.safetensors"]
    _run([sys.executable, str(ROOT / "training" / "make_mi_dataset.py"), "--merge", str(tmp_path / "mi")])
    from safetensors.torch import load_file

    d = load_file(str(tmp_path / "mi" / "merged.safetensors"))
    n = d["tokens"].shape[0]
    assert n >= 8 and d["mi"].shape == (n, 81, 81) and (d["mi"].float() >= 0).all()
    assert torch.equal(d["mi"], d["mi"].transpose(1, 2))
    # --pack: the compact file reads back bit for bit; a file of another kind is refused by name
    packed = tmp_path / "packed.safetensors"
    _run([sys.executable, str(ROOT / "training" / "make_mi_dataset.py"), "--pack", str(tmp_path / "mi"), str(packed)])
    sys.path.insert(0, str(ROOT / "training"))
    from make_mi_dataset import load_mi_dataset

    back = load_mi_dataset(packed)
    assert torch.equal(back["tokens"], d["tokens"]) and torch.equal(back["mi"], d["mi"])
    assert packed.stat().st_size < (tmp_path / "mi" / "merged.safetensors").stat().st_size / 4
    small = tmp_path / "small.safetensors"  # --max-mb: the first states that fit
    _run([sys.executable, str(ROOT / "training" / "make_mi_dataset.py"), "--pack", str(tmp_path / "mi"), str(small),
          "--max-mb", str((packed.stat().st_size / 2 + 4096) / 2**20)])
    part = load_mi_dataset(small)
    assert 0 < len(part["tokens"]) < n and torch.equal(part["mi"], d["mi"][: len(part["tokens"])])
    with pytest.raises(SystemExit, match="not a packed MI data set"):
        load_mi_dataset(tmp_path / "mi" / "merged.safetensors")
    (tmp_path / "junk.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(SystemExit, match="not a readable packed MI data set"):
        load_mi_dataset(tmp_path / "junk.safetensors")
    _run([sys.executable, str(ROOT / "training" / "train_head.py"), "--mdm", str(mdm), "--data", str(tmp_path / "mi"),
          "--out", str(tmp_path / "head" / "h"), "--steps", "6", "--eval-every", "3", "--batch-size", "4",
          "--d-hidden", "16", "--rank", "8", "--d-pair", "8"])
    from mi_viz.estimator import load_head

    head, meta = load_head(tmp_path / "head" / "h")
    assert meta["kind"] == "mi-head" and "val_pearson" in meta["metrics"]
    # --extra-data (here a packed file) adds training states only: the held-out split stays the one of --data
    _run([sys.executable, str(ROOT / "training" / "train_head.py"), "--mdm", str(mdm), "--data", str(tmp_path / "mi"),
          "--extra-data", str(packed), "--out", str(tmp_path / "head" / "h2"), "--steps", "2",
          "--batch-size", "4", "--d-hidden", "16", "--rank", "8", "--d-pair", "8"])
    _, meta2 = load_head(tmp_path / "head" / "h2")
    assert meta2["extra"]["n_val_states"] == meta["extra"]["n_val_states"]
    assert meta2["extra"]["n_train_states"] == meta["extra"]["n_train_states"] + n
    # --augment: every training state under a fresh Sudoku symmetry (backbone re-run, target permuted)
    _run([sys.executable, str(ROOT / "training" / "train_head.py"), "--mdm", str(mdm), "--data", str(tmp_path / "mi"),
          "--augment", "--out", str(tmp_path / "head" / "h3"), "--steps", "2", "--batch-size", "4",
          "--d-hidden", "16", "--rank", "8", "--d-pair", "8"])
    _, meta3 = load_head(tmp_path / "head" / "h3")
    assert meta3["extra"]["args"]["augment"] is True
    # resume: paused at step 3 and continued, the run ends where an uninterrupted one does
    head_cmd = [sys.executable, str(ROOT / "training" / "train_head.py"), "--mdm", str(mdm), "--data", str(tmp_path / "mi"),
                "--augment", "--steps", "6", "--eval-every", "2", "--batch-size", "4", "--d-hidden", "16", "--rank", "8",
                "--d-pair", "8"]
    _run(head_cmd + ["--out", str(tmp_path / "head" / "whole")])
    assert "paused at step 3" in _run(head_cmd + ["--out", str(tmp_path / "head" / "paused"), "--stop-at", "3"]).stdout
    refused = subprocess.run(head_cmd + ["--out", str(tmp_path / "head" / "paused"), "--lr", "0.01"],
                             cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert refused.returncode != 0 and "'lr': (0.002, 0.01)" in refused.stderr  # another setting: named, not mixed in
    assert "resumed from" in _run(head_cmd + ["--out", str(tmp_path / "head" / "paused")]).stdout
    from mi_viz.checkpoints import read_meta, read_tensors

    assert read_meta(tmp_path / "head" / "whole_last")["step"] == read_meta(tmp_path / "head" / "paused_last")["step"] == 6
    whole, resumed = read_tensors(tmp_path / "head" / "whole_last"), read_tensors(tmp_path / "head" / "paused_last")
    assert set(whole) == set(resumed) and any(k.startswith("opt.") for k in whole)
    for k, v in whole.items():  # head weights, AdamW moments and both random streams
        assert torch.allclose(v.float(), resumed[k].float(), atol=1e-6), k
    steps_logged = [int(r["step"]) for r in csv.DictReader(open(tmp_path / "head" / "paused_log.csv"))]
    assert steps_logged == [2, 3, 4, 6]  # one curve across the pause
    # head probes: one short run per probe, scored on held-out and on hard dev states; resumable
    probe = [sys.executable, str(ROOT / "training" / "head_probes.py"), "--mdm", str(mdm), "--data", str(tmp_path / "mi"),
             "--steps", "2", "--only", "base", "--dev-puzzles", str(tiny_data / "test_hard.txt"), "--dev-states", "2", "--rules-states", "2",
             "--runs", str(tmp_path / "probes"), "--out", str(tmp_path / "probes.csv"),
             "--base-args=--hidden-layers 1 --batch-size 4 --d-hidden 16 --rank 8 --d-pair 8"]
    r = _run(probe)
    assert "== probe: base" in r.stdout
    rows = list(csv.DictReader(open(tmp_path / "probes.csv")))
    assert [row["probe"] for row in rows] == ["base"] and -1 <= float(rows[0]["dev_pearson"]) <= 1
    assert 0 <= float(rows[0]["rules_auroc"]) <= 1 and 0 <= float(rows[0]["rules_auroc_truth"]) <= 1
    assert "== probe" not in _run(probe).stdout  # the row is kept, nothing retrained
    typo = subprocess.run(probe[:probe.index("--only") + 1] + ["bse"] + probe[probe.index("--only") + 2:],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert typo.returncode == 2 and "unknown probe(s) ['bse']" in typo.stderr  # a misspelt name is refused, not silently skipped
    # --score: heads trained elsewhere (the candidates) scored on the same cached sets, one row each
    base_ckpt = tmp_path / "probes" / "base" / "sudoku_mi_head"
    score = probe[: probe.index("--steps")] + ["--dev-puzzles", str(tiny_data / "test_hard.txt"), "--runs", str(tmp_path / "probes"),
                                               "--score", str(base_ckpt), "--score", str(tmp_path / "head" / "h3"),
                                               "--out", str(tmp_path / "cand.csv")]
    assert "== probe" not in _run(score).stdout
    cand = list(csv.DictReader(open(tmp_path / "cand.csv")))
    assert [c["head"] for c in cand] == [str(base_ckpt), str(tmp_path / "head" / "h3")]
    assert cand[0]["dev_pearson"] == rows[0]["dev_pearson"] and cand[0]["rules_auroc"] == rows[0]["rules_auroc"]
    assert cand[1]["augment"] == "True" and cand[1]["steps"] == "2"


def test_probe_folders_are_one_level_and_distinct():
    """A probe's name becomes its run folder: a '/' in it (as in '(H_i + H_j)/2') must not
    nest folders, and older folder names stay what they were (the runs are reused)."""
    sys.path.insert(0, str(ROOT / "training"))
    from head_probes import PROBES, run_dir_name

    names = [run_dir_name(n) for n, _ in PROBES]
    assert len(set(names)) == len(names) and not any("/" in n for n in names)
    assert run_dir_name("wider pair layer (rank 128, d_pair 64)") == "wider_pair_layer_rank_128_d_pair_64"
    assert run_dir_name("+ 150 states masked 85-95 %") == "+_150_states_masked_85-95_%"


def test_mi_dataset_mask_range(puzzles):
    """--mask-range sets the random maskings' ratio; a bad range is refused by name."""
    sys.path.insert(0, str(ROOT / "training"))
    import make_mi_dataset as M

    sols = [s for _, s in puzzles]
    jobs = [("r", i) for i in range(40)]
    for lo, hi in ((0.9, 0.95), (0.2, 0.3)):
        x = M.states_for_jobs(None, jobs, [], sols, 0, 0, "cpu", (lo, hi))  # random maskings need no model
        frac = (x == 9).float().mean().item()
        assert lo - 0.05 < frac < hi + 0.05, (lo, hi, frac)
    with pytest.raises(SystemExit, match="mask-range"):
        M.main(["--mask-range", "0.9,0.2"])
