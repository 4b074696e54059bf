"""Contact maps from a family backbone's conditional MI, averaged over natural rows.

For a Potts model, I(X_i; X_j | x_rest) > 0 exactly when J_ij != 0: conditional MI with the
rest of a natural row observed measures direct dependence, which is what contacts induce.
The MDM's version, state by state:

- a held-out natural row with a random 10 % of its columns masked (at least 2): the
  ground-truth MI (core.mi.ground_truth_mi: one pass per kept value of each masked column)
  gives every pair of the masked columns, with 90 % of the row as context;
- masks are drawn so that every row contributes `masks_per_row` states; a pair's score is
  its mean over the states in which both columns were masked.

Why 10 % and not exactly two columns: two masked columns give one pair for ~2 x 21 passes,
10 % of L columns give L^2 / 200 pairs for about L x 2 passes (after pruning), so a few
hundred states cover every pair many times over, and 90 % of a natural row still fixes
almost all of the context a contact's couplings act through. `frac` changes it.

The head's map is read from one pass per state and averaged the same way. APC is applied
to every averaged map before scoring, as to MIp and the Potts scores (scoring.apc);
the raw truth is reported too.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from ...core.mi import MIRun, ground_truth_mi
from ...core.reading import read_state
from ..protein.alphabet import MASK
from .backbone import to_tokens


@dataclass
class AveragedMI:
    truth: np.ndarray  # (L, L) mean conditional MI (nats) over the states masking both columns
    head: np.ndarray | None  # (L, L) the head's mean over the same states, or None
    count: np.ndarray  # (L, L) states in which each pair was masked
    states: int
    passes: int  # ground-truth passes, base passes included
    seconds: float


def masked_states(rows: np.ndarray, masks_per_row: int, frac: float, seed: int) -> torch.Tensor:
    """(R * masks_per_row, L) tokens: each row with a random `frac` of its columns masked (>= 2)."""
    g = np.random.default_rng(seed)
    R, L = rows.shape
    m = max(2, round(frac * L))
    x = to_tokens(np.repeat(rows, masks_per_row, axis=0))
    for s in range(len(x)):
        x[s, g.choice(L, m, replace=False)] = MASK
    return x


@torch.inference_mode()
def averaged_mi(
    model,
    rows: np.ndarray,
    head=None,
    masks_per_row: int = 4,
    frac: float = 0.1,
    eps: float = 1e-3,
    seed: int = 0,
    batch: int = 32,
    progress: Callable[[int, int], None] | None = None,
) -> AveragedMI:
    """Mean conditional MI over randomly masked natural rows (module docstring). rows (R, L) value indices."""
    t0 = time.perf_counter()
    x = masked_states(rows, masks_per_row, frac, seed)  # (S, L)
    S, L = x.shape
    tot = np.zeros((L, L))
    tot_head = np.zeros((L, L)) if head is not None else None
    cnt = np.zeros((L, L))
    passes = 0
    for s in range(0, S, batch):
        xb = x[s : s + batch]
        rd = read_state(model, xb, head)
        gt = ground_truth_mi(model, xb, eps=eps, run=MIRun(base_logits=rd.out.logits))
        passes += int(gt.passes.sum()) + len(xb)
        m = rd.masked.numpy()  # (b, L)
        pair = (m[:, :, None] & m[:, None, :]).astype(np.float64)
        cnt += pair.sum(0)
        tot += gt.mi.double().numpy().sum(0)
        if tot_head is not None and rd.mi is not None:
            tot_head += (rd.mi.double().numpy() * pair).sum(0)
        if progress is not None:
            progress(min(s + batch, S), S)
    np.fill_diagonal(cnt, 0)
    seen = cnt > 0
    mean = np.where(seen, tot / np.maximum(cnt, 1), 0.0)
    fill = mean[seen].mean() if seen.any() else 0.0
    mean[~seen] = fill  # a pair never masked together: the map's mean (said in the report as unseen pairs)
    np.fill_diagonal(mean, 0.0)
    head_mean = None
    if head is not None:
        head_mean = np.where(seen, tot_head / np.maximum(cnt, 1), 0.0)
        head_mean[~seen] = head_mean[seen].mean() if seen.any() else 0.0
        np.fill_diagonal(head_mean, 0.0)
    return AveragedMI(mean, head_mean, cnt, S, passes, time.perf_counter() - t0)
