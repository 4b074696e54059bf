"""Shared fixtures: tiny models and files, so the suite runs in minutes on 2 CPU cores."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
import torch

from mi_viz.core.mi_head import HeadConfig, MIHead, save_head
from mi_viz.domains.sudoku import solver
from mi_viz.domains.sudoku.mdm import MDMConfig, SudokuMDM, save_mdm

ROOT = Path(__file__).resolve().parents[1]
torch.set_num_threads(2)

TINY = MDMConfig(n_layers=2, n_heads=2, d_model=32)


@pytest.fixture(scope="session")
def tiny_mdm():
    torch.manual_seed(0)
    return SudokuMDM(TINY).eval()


@pytest.fixture(scope="session")
def tiny_ckpt(tmp_path_factory, tiny_mdm):
    """A tiny MDM and MI head saved as checkpoints: (mdm_path, head_path)."""
    d = tmp_path_factory.mktemp("ckpt")
    save_mdm(d / "mdm", tiny_mdm, step=3, metrics={"val_solved": 0.0})
    torch.manual_seed(1)
    head = MIHead(HeadConfig(d_in=TINY.d_model, d_hidden=16, rank=8, d_pair=8))
    save_head(d / "head", head, step=1)
    return d / "mdm", d / "head"


@pytest.fixture(scope="session")
def puzzles():
    """A few unique-solution puzzles (made here, seeded) and their solutions."""
    rng = random.Random(7)
    out = []
    for _ in range(4):
        sol = solver.random_grid(rng)
        out.append((solver.make_puzzle(sol, rng), sol))
    return out


@pytest.fixture(scope="session")
def tiny_data(tmp_path_factory):
    """A tiny generated data folder (grids, training puzzles, test puzzles)."""
    d = tmp_path_factory.mktemp("data")
    import subprocess

    subprocess.run(
        [
            sys.executable,
            str(ROOT / "training" / "make_sudoku_data.py"),
            "--out",
            str(d),
            "--n-train",
            "64",
            "--n-train-puzzles",
            "12",
            "--n-hard",
            "3",
            "--n-medium",
            "2",
            "--workers",
            "1",
        ],
        check=True,
        capture_output=True,
    )
    return d


def save_user_head(folder) -> str:
    """A Sudoku MI head of the user's own (randomly initialised, 0 mix blocks, fits the shipped
    backbone) saved under folder: what the head picker lists from MI_VIZ_HEADS."""
    import torch

    from mi_viz.core.mi_head import HeadConfig, MIHead, save_head

    torch.manual_seed(0)
    path = str(folder / "my_head")
    save_head(path, MIHead(HeadConfig(hidden_layers=(2,), mix_layers=0, excess=True)))
    return path
