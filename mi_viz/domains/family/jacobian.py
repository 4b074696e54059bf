"""The categorical Jacobian of a family backbone (Zhang, Wayment-Steele, Kim, Ovchinnikov et al.,
PNAS 2024): how every column's logits move when one column is set to each amino acid, read as a
coupling between the two columns.

For a row x and a column i set to each symbol a in turn, J[i, a, j, b] = logit_{j,b}(x with x_i =
a); centred over a and over b (what remains is the interaction: a constant of b, or a shift
of every logit of j, is no coupling), the pair's score is the Frobenius norm of that 20 x 20
block (the gap dropped), symmetrised, then APC (scoring.apc) as every other predictor.

For an MDM the logits of an *unmasked* column carry no learned signal (the loss trains only
masked outputs), so column j is read masked: each state masks a random `frac` of the row's
columns, the unmasked columns i are varied over the 20 amino acids, and the masked columns j
are read. A pair (i, j) is seen in a state where i is unmasked and j masked; its score is the
mean over the states that saw it, in either direction. One state costs (unmasked columns) x 20
passes, batched.

For a Potts model whose conditionals are logit_{j,b} = h_j(b) + sum_k J_jk(b, x_k), the score is
exactly the Frobenius norm of the double-centred J_ji (tests/test_family.py checks a toy one).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from .alignment import GAP


@dataclass
class JacobianMap:
    score: np.ndarray  # (L, L) symmetric mean Frobenius norm of the centred blocks (no APC)
    count: np.ndarray  # (L, L) states that saw each pair (either direction)
    states: int
    passes: int
    seconds: float


@torch.inference_mode()
def categorical_jacobian(
    model,
    rows: np.ndarray,
    masks_per_row: int = 2,
    frac: float = 0.5,
    seed: int = 0,
    symbols: list[int] | None = None,
    batch: int = 512,
    progress: Callable[[int, int], None] | None = None,
) -> JacobianMap:
    """rows (R, L) value indices (natural rows); model: a MaskedModel whose logits (B, L, V) are over
    the values in model.value_tokens order. symbols: the values varied and read (default: every
    value but the gap)."""
    t0 = time.perf_counter()
    R, L = rows.shape
    V = int(model.value_tokens.numel())
    syms = torch.as_tensor(symbols if symbols is not None else [v for v in range(V) if v != GAP])  # (A,)
    A = len(syms)
    vt = model.value_tokens.cpu()
    g = np.random.default_rng(seed)
    tot, cnt = np.zeros((L, L)), np.zeros((L, L))
    passes, states = 0, R * masks_per_row
    n_mask = max(1, min(L - 1, round(frac * L)))
    for s in range(states):
        row = torch.as_tensor(rows[s // masks_per_row], dtype=torch.long)
        masked = np.zeros(L, bool)
        masked[g.choice(L, n_mask, replace=False)] = True
        base = vt[row].clone()  # (L,) tokens
        base[torch.as_tensor(masked)] = model.mask_id
        free = np.nonzero(~masked)[0]  # the columns varied: i
        read = torch.as_tensor(np.nonzero(masked)[0])  # the columns read: j
        # every (i, a): the row with column i set to symbol a -> (len(free) * A, L)
        x = base.repeat(len(free) * A, 1)
        ii = torch.as_tensor(free).repeat_interleave(A)
        x[torch.arange(len(x)), ii] = vt[syms.repeat(len(free))]
        logits = torch.cat([model.forward_tokens(x[k : k + batch]).logits.double() for k in range(0, len(x), batch)])
        passes += len(x)
        block = logits[:, read][:, :, syms].reshape(len(free), A, len(read), A)  # (i, a, j, b)
        block = block - block.mean(1, keepdim=True)  # centred over a
        block = block - block.mean(3, keepdim=True)  # and over b
        fro = block.pow(2).sum((1, 3)).sqrt().numpy()  # (i, j)
        tot[np.ix_(free, read.numpy())] += fro
        cnt[np.ix_(free, read.numpy())] += 1
        if progress is not None:
            progress(s + 1, states)
    both = cnt + cnt.T
    score = np.where(both > 0, (tot + tot.T) / np.maximum(both, 1), 0.0)
    seen = both > 0
    np.fill_diagonal(seen, False)
    score[~seen] = score[seen].mean() if seen.any() else 0.0  # a pair never seen: the map's mean
    np.fill_diagonal(score, 0.0)
    return JacobianMap(score, both, states, passes, time.perf_counter() - t0)
