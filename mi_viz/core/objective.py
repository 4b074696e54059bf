"""The masked-diffusion objective's noise, shared by every domain's backbone.

Each row draws t ~ U(0, 1) (or takes a fixed ratio) and masks each of its real positions with
probability t; a row that drew none gets one, uniformly among its real positions, so that every
row contributes to the loss. The domains differ only in what they mask (Sudoku cells, protein
residues short of the padding, alignment columns) and in their vocabularies.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F


def random_mask(
    real: torch.Tensor,
    generator: torch.Generator | None = None,
    mask_ratio: float | None = None,
    min_t: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """real (B, L) bool: the positions that may be masked. Returns masked (B, L) bool (at least one
    per row with any real position) and t (B, 1), the masking probability each row drew (clamped
    to min_t, for a 1/t weighting that stays finite), both on real's device. The draws are made
    on the generator's device, so a CPU generator serves a model on any device."""
    B, L = real.shape
    out_device = real.device
    dev = generator.device if generator is not None else real.device
    real = real.to(dev)
    if mask_ratio is None:
        t = torch.rand(B, 1, device=dev, generator=generator).clamp_min(min_t)
    else:
        t = torch.full((B, 1), float(mask_ratio), device=dev)
    masked = (torch.rand(B, L, device=dev, generator=generator) < t) & real  # (B, L)
    none = ~masked.any(1) & real.any(1)  # (B,)
    if none.any():
        first = torch.multinomial(real[none].float(), 1, generator=generator).squeeze(1)
        masked[none.nonzero().squeeze(1), first] = True
    return masked.to(out_device), t.to(out_device)


def masked_cross_entropy(
    logits_of: Callable[[torch.Tensor], torch.Tensor],
    x0: torch.Tensor,
    real: torch.Tensor,
    target: torch.Tensor,
    mask_id: int,
    generator: torch.Generator | None = None,
    mask_ratio: float | None = None,
) -> tuple[torch.Tensor, int]:
    """The objective without 1/t weighting (generation starts all-masked and every ratio counts):
    x0 (B, L) clean tokens, real (B, L) what may be masked, target (B, L) each position's class
    index; positions masked by random_mask, logits_of(xt) (B, L, V). Returns (mean cross-entropy
    over the masked positions, their count)."""
    masked, _ = random_mask(real, generator, mask_ratio)  # (B, L)
    xt = torch.where(masked, torch.full_like(x0, mask_id), x0)
    logits = logits_of(xt).float()  # (B, L, V)
    ce = F.cross_entropy(logits[masked], target[masked], reduction="sum")
    n = int(masked.sum())
    return ce / max(n, 1), n
