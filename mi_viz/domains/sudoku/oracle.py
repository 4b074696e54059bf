"""An exact masked model over 4x4 Sudoku, by enumeration of its 288 grids.

p(x_i = v | C) is the fraction of the grids consistent with the context C that
have v at i: a perfectly consistent joint (the uniform distribution over valid
grids). Every conditional and every MI is therefore computable in closed form,
which makes this the oracle that checks the ground-truth MI code exactly.
Tokens: 0..3 are the digits 1..4, 4 is MASK. Unmasked positions get a one-hot
prediction of their own value.
"""

from __future__ import annotations

import torch

from ...core.protocol import ModelOutput
from .solver import all_solutions


class ExactSudokuOracle:
    box = 2
    n = 4
    mask_id = 4
    d_model = 0  # no hidden states: an MI head cannot read it
    n_layers = 0

    def __init__(self):
        self.grids = torch.tensor(all_solutions(2), dtype=torch.long) - 1  # (288, 16) tokens
        self.value_tokens = torch.arange(self.n)

    def consistent(self, tokens: torch.Tensor) -> torch.Tensor:
        """(B, L) tokens -> (B, 288) bool: grids that agree with every unmasked token."""
        given = tokens != self.mask_id  # (B, L)
        agree = (self.grids[None] == tokens[:, None]) | ~given[:, None]  # (B, 288, L)
        return agree.all(-1)

    def forward_tokens(self, tokens: torch.Tensor, hidden_layers: tuple[int, ...] = ()) -> ModelOutput:
        cons = self.consistent(tokens).double()  # (B, G)
        onehot = torch.nn.functional.one_hot(self.grids, self.n).double()  # (G, L, V)
        counts = torch.einsum("bg,glv->blv", cons, onehot)  # (B, L, V)
        probs = counts / counts.sum(-1, keepdim=True).clamp_min(1)
        empty = counts.sum(-1, keepdim=True) == 0
        probs = torch.where(empty, torch.full_like(probs, 1.0 / self.n), probs)
        logits = torch.log(probs).clamp_min(-1e4)  # (B, L, V); exp(-1e4) == 0 in float64
        return ModelOutput(logits=logits, hidden=None)

    def joint_pair(self, tokens: torch.Tensor, i: int, j: int) -> torch.Tensor:
        """P(x_i, x_j | C) for one state (L,), by direct enumeration: (V, V)."""
        cons = self.consistent(tokens[None])[0]
        g = self.grids[cons]
        joint = torch.zeros(self.n, self.n, dtype=torch.float64)
        joint.index_put_((g[:, i], g[:, j]), torch.ones(len(g), dtype=torch.float64), accumulate=True)
        return joint / joint.sum()
