"""The masked-diffusion objective's noise, shared by every domain's backbone.

Each row draws t ~ U(0, 1) (or takes a fixed ratio) and masks each of its real positions with
probability t; a row that drew none gets one, uniformly among its real positions, so that every
row contributes to the loss. The domains differ only in what they mask (Sudoku cells, protein
residues short of the padding, alignment columns) and in their vocabularies.
"""

from __future__ import annotations

import torch


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
