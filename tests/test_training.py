"""Training pipelines: data generation, resume (exactly), DDP smoke run, MI data + head."""

import csv
import json
import os
import subprocess
import sys

import pytest
import torch
from conftest import ROOT

from mi_viz.core.paths import open_text
from mi_viz.domains.sudoku import board as S
from mi_viz.domains.sudoku import rating, solver
from mi_viz.domains.sudoku.mdm import load_mdm

pytestmark = pytest.mark.slow  # subprocesses: make test-fast leaves this file out

TRAIN = [sys.executable, str(ROOT / "training" / "train_sudoku_mdm.py")]


def _run(cmd, env=None):
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    return r


def test_data_generation_is_valid_and_disjoint(tiny_data):
    grids = (tiny_data / "generated" / "train_grids.txt").read_text().split()
    assert len(grids) == 64 and all(S.is_solution(S.parse_board(g)) for g in grids)
    hard = list(csv.DictReader(open_text(tiny_data / "test_hard.csv.gz")))
    medium = list(csv.DictReader(open_text(tiny_data / "test_medium.csv.gz")))
    assert len(hard) == 3 and len(medium) == 2
    train_sol = set(grids) | {
        r["solution"] for r in csv.DictReader(open(tiny_data / "generated" / "train_puzzles.csv"))
    }
    for r in hard + medium:
        p = S.parse_board(r["puzzle"])
        assert solver.count_solutions(p) == 1 and S.board_to_string(solver.solve(p).solution) == r["solution"]
        assert r["solution"] not in train_sol
    assert all(not rating.rate(S.parse_board(r["puzzle"])).singles_solvable for r in hard)
    assert all(rating.rate(S.parse_board(r["puzzle"])).singles_solvable for r in medium)


def _train(run_dir, data, steps, extra=()):
    return _run(
        TRAIN
        + [
            "--preset",
            "tiny",
            "--run-dir",
            str(run_dir),
            "--data",
            str(data / "generated" / "train_grids.txt"),
            "--val",
            str(data / "generated" / "train_puzzles.csv"),
            "--max-steps",
            str(steps),
            "--save-every",
            "5",
            "--eval-every",
            "100",
            "--warmup",
            "2",
            *extra,
        ]
    )


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
    r = _run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nproc_per_node",
            "2",
            "--master_port",
            "29531",
            str(ROOT / "training" / "train_sudoku_mdm.py"),
            "--preset",
            "tiny",
            "--run-dir",
            str(tmp_path / "ddp"),
            "--data",
            str(tiny_data / "generated" / "train_grids.txt"),
            "--val",
            str(tiny_data / "generated" / "train_puzzles.csv"),
            "--max-steps",
            "6",
            "--eval-every",
            "100",
        ],
        env=env,
    )
    assert "world 2" in r.stdout
    meta = json.loads((tmp_path / "ddp" / "last.json").read_text())
    assert meta["step"] == 6 and meta["extra"]["world_size"] == 2 and meta["extra"]["examples"] == 6 * 16 * 2


def test_mi_dataset_and_head(tmp_path, tiny_data, tiny_ckpt):
    mdm, _ = tiny_ckpt
    cmd = [
        sys.executable,
        str(ROOT / "training" / "make_sudoku_mi_dataset.py"),
        "--mdm",
        str(mdm),
        "--puzzles",
        str(tiny_data / "generated" / "train_puzzles.csv"),
        "--n-val-holdout",
        "4",
        "--n-puzzles",
        "4",
        "--n-random",
        "4",
        "--states-per-puzzle",
        "2",
        "--shard-size",
        "4",
        "--eps",
        "0.05",
    ]
    # two independent workers, then a merge
    for rank in (0, 1):
        _run(cmd + ["--out", str(tmp_path / "mi"), "--rank", str(rank), "--world", "2"])
    shards = sorted((tmp_path / "mi").glob("shard_*.safetensors"))
    assert len(shards) == 2
    r = _run(cmd + ["--out", str(tmp_path / "mi"), "--rank", "0", "--world", "2"])  # resumable: nothing to redo
    assert "0 new states" in r.stdout
    _run(cmd + ["--out", str(tmp_path / "mi_one"), "--max-shards", "1"])  # 4 shards of jobs, the first one made
    assert [s.name for s in (tmp_path / "mi_one").glob("shard_*")] == ["shard_000_00000.safetensors"]
    _run([sys.executable, str(ROOT / "training" / "make_sudoku_mi_dataset.py"), "--merge", str(tmp_path / "mi")])
    from safetensors.torch import load_file

    d = load_file(str(tmp_path / "mi" / "merged.safetensors"))
    n = d["tokens"].shape[0]
    assert n >= 8 and d["mi"].shape == (n, 81, 81) and (d["mi"].float() >= 0).all()
    assert torch.equal(d["mi"], d["mi"].transpose(1, 2))
    # --pack: the compact file reads back bit for bit; a file of another kind is refused by name
    packed = tmp_path / "packed.safetensors"
    _run(
        [
            sys.executable,
            str(ROOT / "training" / "make_sudoku_mi_dataset.py"),
            "--pack",
            str(tmp_path / "mi"),
            str(packed),
        ]
    )
    from mi_viz.core.mi_data import MIDataError, load_mi_dataset

    back = load_mi_dataset(packed)
    assert torch.equal(back["tokens"], d["tokens"]) and torch.equal(back["mi"], d["mi"])
    assert packed.stat().st_size < (tmp_path / "mi" / "merged.safetensors").stat().st_size / 4
    small = tmp_path / "small.safetensors"  # --max-mb: the first states that fit
    _run(
        [
            sys.executable,
            str(ROOT / "training" / "make_sudoku_mi_dataset.py"),
            "--pack",
            str(tmp_path / "mi"),
            str(small),
            "--max-mb",
            str((packed.stat().st_size / 2 + 4096) / 2**20),
        ]
    )
    part = load_mi_dataset(small)
    assert 0 < len(part["tokens"]) < n and torch.equal(part["mi"], d["mi"][: len(part["tokens"])])
    with pytest.raises(MIDataError, match="not a packed MI data set"):
        load_mi_dataset(tmp_path / "mi" / "merged.safetensors")
    (tmp_path / "junk.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(MIDataError, match="not a readable packed MI data set"):
        load_mi_dataset(tmp_path / "junk.safetensors")
    _run(
        [
            sys.executable,
            str(ROOT / "training" / "train_head.py"),
            "--mdm",
            str(mdm),
            "--data",
            str(tmp_path / "mi"),
            "--out",
            str(tmp_path / "head" / "h"),
            "--steps",
            "6",
            "--eval-every",
            "3",
            "--batch-size",
            "4",
            "--d-hidden",
            "16",
            "--rank",
            "8",
            "--d-pair",
            "8",
        ]
    )
    from mi_viz.core.mi_head import load_head

    head, meta = load_head(tmp_path / "head" / "h")
    assert meta["kind"] == "mi-head" and "val_pearson" in meta["metrics"]
    # --extra-data (here a packed file) adds training states only: the held-out split stays the one of --data
    _run(
        [
            sys.executable,
            str(ROOT / "training" / "train_head.py"),
            "--mdm",
            str(mdm),
            "--data",
            str(tmp_path / "mi"),
            "--extra-data",
            str(packed),
            "--out",
            str(tmp_path / "head" / "h2"),
            "--steps",
            "2",
            "--batch-size",
            "4",
            "--d-hidden",
            "16",
            "--rank",
            "8",
            "--d-pair",
            "8",
        ]
    )
    _, meta2 = load_head(tmp_path / "head" / "h2")
    assert meta2["extra"]["n_val_states"] == meta["extra"]["n_val_states"]
    assert meta2["extra"]["n_train_states"] == meta["extra"]["n_train_states"] + n
    # --augment: every training state under a fresh Sudoku symmetry (backbone re-run, target permuted)
    _run(
        [
            sys.executable,
            str(ROOT / "training" / "train_head.py"),
            "--mdm",
            str(mdm),
            "--data",
            str(tmp_path / "mi"),
            "--augment",
            "--out",
            str(tmp_path / "head" / "h3"),
            "--steps",
            "2",
            "--batch-size",
            "4",
            "--d-hidden",
            "16",
            "--rank",
            "8",
            "--d-pair",
            "8",
        ]
    )
    _, meta3 = load_head(tmp_path / "head" / "h3")
    assert meta3["extra"]["args"]["augment"] is True
    # resume: paused at step 3 and continued, the run ends where an uninterrupted one does
    head_cmd = [
        sys.executable,
        str(ROOT / "training" / "train_head.py"),
        "--mdm",
        str(mdm),
        "--data",
        str(tmp_path / "mi"),
        "--augment",
        "--steps",
        "6",
        "--eval-every",
        "2",
        "--batch-size",
        "4",
        "--d-hidden",
        "16",
        "--rank",
        "8",
        "--d-pair",
        "8",
    ]
    _run(head_cmd + ["--out", str(tmp_path / "head" / "whole")])
    assert "paused at step 3" in _run(head_cmd + ["--out", str(tmp_path / "head" / "paused"), "--stop-at", "3"]).stdout
    refused = subprocess.run(
        head_cmd + ["--out", str(tmp_path / "head" / "paused"), "--lr", "0.01"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert refused.returncode != 0 and "'lr': (0.002, 0.01)" in refused.stderr  # another setting: named, not mixed in
    assert "resumed from" in _run(head_cmd + ["--out", str(tmp_path / "head" / "paused")]).stdout
    from mi_viz.core.checkpoints import read_meta, read_tensors

    assert (
        read_meta(tmp_path / "head" / "whole_last")["step"] == read_meta(tmp_path / "head" / "paused_last")["step"] == 6
    )
    whole, resumed = read_tensors(tmp_path / "head" / "whole_last"), read_tensors(tmp_path / "head" / "paused_last")
    assert set(whole) == set(resumed) and any(k.startswith("opt.") for k in whole)
    for k, v in whole.items():  # head weights, AdamW moments and both random streams
        assert torch.allclose(v.float(), resumed[k].float(), atol=1e-6), k
    steps_logged = [int(r["step"]) for r in csv.DictReader(open(tmp_path / "head" / "paused_log.csv"))]
    assert steps_logged == [2, 3, 4, 6]  # one curve across the pause


def test_mi_dataset_mask_range(puzzles):
    """--mask-range sets the random maskings' ratio; a bad range is refused by name."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "make_sudoku_mi_dataset", ROOT / "training" / "make_sudoku_mi_dataset.py"
    )
    M = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(M)

    sols = [s for _, s in puzzles]
    jobs = [("r", i) for i in range(40)]
    for lo, hi in ((0.9, 0.95), (0.2, 0.3)):
        x = M.states_for_jobs(None, jobs, [], sols, 0, 0, "cpu", (lo, hi))  # random maskings need no model
        frac = (x == 9).float().mean().item()
        assert lo - 0.05 < frac < hi + 0.05, (lo, hi, frac)
    with pytest.raises(SystemExit, match="mask-range"):
        M.main(["--mask-range", "0.9,0.2"])


def test_one_resume_path_names_a_corrupt_or_foreign_paused_run(tmp_path):
    """core.training.resume_run, the path every trainer resumes by: None without a paused run; the
    paused state back exactly; a corrupt file or other settings refused by name (not overwritten)."""
    from mi_viz.core.checkpoints import CheckpointError
    from mi_viz.core.mi_head import HEAD_KIND, HeadConfig, MIHead
    from mi_viz.core.training import Resumable, resume_run

    def fresh():
        torch.manual_seed(1)
        head = MIHead(HeadConfig(d_in=8, n_values=3, d_hidden=8, rank=4, d_pair=4))
        return head, torch.optim.AdamW(head.parameters())

    head, opt = fresh()
    last = Resumable(tmp_path / "run_last", HEAD_KIND, head, opt)
    assert resume_run(last) is None
    last.save(5, {}, {"seed": 0}, {"rng.batches": torch.Generator().manual_seed(3).get_state()})
    head2, opt2 = fresh()
    with torch.no_grad():
        next(head2.parameters()).add_(1.0)
    meta, rng = resume_run(Resumable(tmp_path / "run_last", HEAD_KIND, head2, opt2), say=False)
    assert meta["step"] == 5 and "rng.batches" in rng
    assert all(torch.equal(a, b) for a, b in zip(head.parameters(), head2.parameters()))
    with pytest.raises(CheckpointError, match="cannot continue the paused run.*other seed"):
        resume_run(last, check=lambda m: "was paused with another seed", say=False)
    (tmp_path / "run_last.json").write_text("{ not json")
    with pytest.raises(CheckpointError, match="cannot continue the paused run"):
        resume_run(last, say=False)
    assert (tmp_path / "run_last.json").read_text() == "{ not json"  # nothing overwritten
