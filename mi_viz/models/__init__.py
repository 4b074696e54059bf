"""Masked models behind one protocol, and their checkpoint loaders."""

from __future__ import annotations

from ..checkpoints import CheckpointError, load_state_strict, read_meta, read_tensors, save_checkpoint
from .base import MaskedModel, ModelOutput
from .sudoku_mdm import MDMConfig, SudokuMDM

MDM_KIND = "sudoku-mdm"

__all__ = ["MaskedModel", "ModelOutput", "MDMConfig", "SudokuMDM", "load_mdm", "save_mdm", "MDM_KIND"]


def save_mdm(path, model: SudokuMDM, step: int = 0, metrics: dict | None = None, extra: dict | None = None):
    return save_checkpoint(path, model.state_dict(), MDM_KIND, model.config.to_dict(), step, metrics, extra)


def load_mdm(path, device: str = "cpu") -> tuple[SudokuMDM, dict]:
    """Build the MDM from the checkpoint's config and load its weights strictly."""
    meta = read_meta(path, MDM_KIND)
    try:
        config = MDMConfig(**meta["config"])
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"bad MDM config in checkpoint {path}: {e}") from None
    model = SudokuMDM(config)
    tensors = {k: v for k, v in read_tensors(path).items() if not k.startswith("opt.")}
    load_state_strict(model, tensors, where=f"checkpoint {path}")
    return model.to(device).eval(), meta
