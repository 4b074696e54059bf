"""The classic anchors a family MDM's MI maps are measured against, from the same alignment.

- MIp (Dunn et al. 2008): mutual information of the weighted alignment columns (pseudocount
  0.5, all 21 symbols) minus the average-product correction.
- A pseudo-likelihood Potts model (plmDCA, Ekeberg et al. 2013; CCMpred, Seemayer et al.
  2014): fields h_i(a) and symmetric couplings J_ij(a, b), fitted by L-BFGS on
  sum_n w_n sum_i -log p(x_i | x_-i) + lambda_h ||h||^2 + lambda_J ||J||^2 with CCMpred's
  penalties (lambda_h = 0.01, lambda_J = 0.2 (L - 1), over weights summing to Neff); contact
  score: Frobenius norm of the zero-sum-gauged 20 x 20 amino-acid block of J_ij, then APC.

Why a Potts model also judges generated rows: its energy E(x) = -sum_i h_i(x_i) -
sum_{i<j} J_ij(x_i, x_j) is the family's statistical energy as bmDCA / arDCA practice reads
it (pairstats.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from .alignment import Q, frequencies
from .scoring import apc


def mip(rows: np.ndarray, weights: np.ndarray, pseudocount: float = 0.5) -> np.ndarray:
    """(L, L) APC-corrected mutual information of the weighted columns (diagonal 0)."""
    fi, fij = frequencies(rows, weights, pseudocount)
    L = len(fi)
    outer = fi[:, None, :, None] * fi[None, :, None, :]  # (L, L, Q, Q)
    ar = np.arange(L)
    fij[ar, ar] = outer[ar, ar]  # a column with itself is not scored: 0 instead of log 0
    mi = (fij * (np.log(fij) - np.log(outer))).sum((2, 3))
    mi[ar, ar] = 0.0
    return apc(mi)


@dataclass
class Potts:
    h: torch.Tensor  # (L, Q) fields
    J: torch.Tensor  # (L, L, Q, Q) couplings, J[i, j, a, b] = J[j, i, b, a], zero for i = j

    @property
    def width(self) -> int:
        return int(self.h.shape[0])

    def energy(self, rows) -> np.ndarray:
        """E(x) = -sum_i h_i(x_i) - sum_{i<j} J_ij(x_i, x_j) for rows (N, L) of value indices -> (N,)."""
        x = torch.as_tensor(np.asarray(rows), dtype=torch.long)
        L = self.width
        ar = torch.arange(L)
        e = self.h[ar[None], x].sum(1)  # (N,)
        Jx = self.J[ar[:, None], ar[None, :]]  # (L, L, Q, Q)
        pair = torch.stack([Jx[ar[:, None], ar[None, :], xi[:, None], xi[None, :]].triu(1).sum() for xi in x])
        return (-(e + pair)).double().numpy()

    def contact_score(self) -> np.ndarray:
        """(L, L) APC-corrected Frobenius norms of the zero-sum-gauged amino-acid blocks (gap dropped)."""
        J = self.J.double()
        J = J - J.mean(2, keepdim=True) - J.mean(3, keepdim=True) + J.mean((2, 3), keepdim=True)
        fn = J[:, :, :20, :20].pow(2).sum((2, 3)).sqrt().numpy()
        return apc(fn)

    def save(self, path) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        save_file({"h": self.h.contiguous(), "J": self.J.contiguous()}, str(p))
        return p

    @classmethod
    def load(cls, path) -> Potts:
        t = load_file(str(path))
        return cls(t["h"], t["J"])


def fit_potts(
    rows: np.ndarray,
    weights: np.ndarray,
    max_iter: int = 200,
    lambda_h: float = 0.01,
    lambda_j: float | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Potts:
    """plmDCA-style symmetric pseudo-likelihood fit (module docstring), L-BFGS in float32 on the CPU.
    rows (N, L) value indices, weights (N,) (their sum is the effective count Neff)."""
    N, L = rows.shape
    lambda_j = 0.2 * (L - 1) if lambda_j is None else lambda_j
    x = torch.as_tensor(np.asarray(rows), dtype=torch.long)
    w = torch.as_tensor(np.asarray(weights), dtype=torch.float32)
    X = torch.zeros(N, L * Q)
    X[torch.arange(N)[:, None], torch.arange(L)[None] * Q + x] = 1.0
    block = torch.ones(L, L).fill_diagonal_(0).repeat_interleave(Q, 0).repeat_interleave(Q, 1)  # (LQ, LQ) no i = j
    h = torch.zeros(L * Q, requires_grad=True)
    W = torch.zeros(L * Q, L * Q, requires_grad=True)
    opt = torch.optim.LBFGS([h, W], lr=1.0, max_iter=max_iter, history_size=10, line_search_fn="strong_wolfe")
    calls = [0]

    def closure():
        opt.zero_grad()
        Js = 0.5 * (W + W.T) * block
        logits = (X @ Js + h).view(N, L, Q)
        nll = -(torch.log_softmax(logits, -1).gather(2, x[..., None]).squeeze(2).sum(1) * w).sum()
        # lambda_J on each unordered pair once (Js holds both ij and ji)
        loss = nll + lambda_h * h.pow(2).sum() + 0.5 * lambda_j * Js.pow(2).sum()
        loss.backward()
        calls[0] += 1
        if progress is not None:
            progress(min(calls[0], max_iter), max_iter)
        return loss

    opt.step(closure)
    with torch.no_grad():
        Js = (0.5 * (W + W.T) * block).view(L, Q, L, Q).permute(0, 2, 1, 3).contiguous()
    return Potts(h.detach().view(L, Q).clone(), Js)
