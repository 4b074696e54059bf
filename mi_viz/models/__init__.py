"""Masked models behind one protocol, and their checkpoint loaders."""

from __future__ import annotations

from ..checkpoints import load_module, save_module
from .base import MaskedModel, ModelOutput
from .sudoku_mdm import MDMConfig, SudokuMDM

MDM_KIND = "sudoku-mdm"

__all__ = ["MaskedModel", "ModelOutput", "MDMConfig", "SudokuMDM", "load_mdm", "save_mdm", "MDM_KIND"]


def save_mdm(path, model: SudokuMDM, step: int = 0, metrics: dict | None = None, extra: dict | None = None):
    return save_module(path, model, MDM_KIND, step, metrics, extra)


def load_mdm(path, device: str = "cpu") -> tuple[SudokuMDM, dict]:
    """Build the MDM from the checkpoint's config and load its weights strictly."""
    return load_module(path, MDM_KIND, MDMConfig, SudokuMDM, device, ignore_prefix="opt.")
