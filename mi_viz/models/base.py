"""The one small protocol every masked model in mi_viz speaks.

The MI code, the samplers and the app only need: a forward pass that returns
logits over the candidate values and the hidden states of the same pass, the
token ids of those values, and the mask token. A Sudoku MDM, an exact oracle
over 4x4 Sudoku, and ESM-C all fit behind it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import torch


@dataclass
class ModelOutput:
    logits: torch.Tensor  # (B, L, V) over the candidate values, not the whole vocabulary
    hidden: torch.Tensor | None  # (B, L, D) final hidden states the MI head reads
    layers: dict[int, torch.Tensor] = field(default_factory=dict)  # block index -> (B, L, D), only those asked for
    attn: dict[int, torch.Tensor] = field(default_factory=dict)  # block index -> attention probs (B, H, L, L), asked for


class MaskedModel(Protocol):
    mask_id: int  # token id of MASK
    value_tokens: torch.Tensor  # (V,) token id of each candidate value

    def forward_tokens(self, tokens: torch.Tensor, hidden_layers: tuple[int, ...] = (),
                       attn_layers: tuple[int, ...] = ()) -> ModelOutput:
        """tokens (B, L) long; hidden_layers / attn_layers: block outputs / attention
        probabilities to return as well (may be ignored by models without them)."""
        ...
