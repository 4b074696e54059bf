"""The field's generative family models from their own packages, as anchors beside the MDM:
arDCA (the `ardca` package: autoregressive DCA, Trinquier et al., Nat. Commun. 2021), fitted on
the same training rows with the same sequence weights, with the package's documented defaults
(its `arDCA train` parser: Adam lr 0.005, L2 1e-6 on the fields and 1e-4 on the couplings,
convergence 1e-2 on the loss, at most 1,000 epochs, pseudocount 1 / Neff, entropic column order).

Contacts from its couplings: arDCA's J is one-sided in its entropic order (column i reads the
columns before it); each pair's 20 x 20 block (the gap dropped) is taken from whichever side
holds it, double-centred, its Frobenius norm the score, then APC, as for every predictor.
Samples: arDCA draws a member exactly, one column after another (L steps of its own model).

`ardca` is an optional install (`make anchors`): absent, AnchorUnavailable says how to get it.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any
from unittest.mock import patch

import numpy as np
import torch

from ...core.errors import UserError
from .alignment import GAP, Q
from .structure import apc


class AnchorUnavailable(UserError, RuntimeError):
    """An anchor's package is not installed; the message says how to install it."""


class AnchorError(UserError, RuntimeError):
    """An anchor's fit failed (did not converge); the message says how."""


@dataclass
class ArDCAFit:
    model: Any  # arDCA.models.arDCA
    seconds: float
    settings: dict


def _ardca():
    try:
        from arDCA.models import arDCA  # the package of the arDCA authors (PyPI: ardca)
    except ImportError:
        raise AnchorUnavailable("arDCA is not installed: `make anchors` (pip install ardca==0.1.1)") from None
    return arDCA


def fit_ardca(rows: np.ndarray, weights: np.ndarray, seed: int = 0, epochs: int = 1000) -> ArDCAFit:
    """arDCA on rows (N, L) value indices with their sequence weights, the package's defaults.
    AnchorError when the fit does not converge: a negative or non-finite loss (the package's
    own stop), or `epochs` epochs without its convergence test passing; nothing is returned then."""
    ArDCA = _ardca()
    torch.manual_seed(seed)
    t0 = time.perf_counter()
    X = torch.nn.functional.one_hot(torch.as_tensor(rows, dtype=torch.long), Q).float()  # (N, L, Q)
    w = torch.as_tensor(weights, dtype=torch.float32)
    settings = {"lr": 0.005, "reg_h": 1e-6, "reg_J": 1e-4, "epsconv": 1e-2, "max_epochs": epochs}
    settings["pseudo_count"] = 1.0 / float(w.sum())
    model = ArDCA(L=rows.shape[1], q=Q)
    opt = torch.optim.Adam(model.parameters(), lr=settings["lr"])
    steps = [0]  # the package's fit says nothing of how it ended: count its optimiser steps
    opt.register_step_post_hook(lambda *_: steps.__setitem__(0, steps[0] + 1))
    try:
        with patch.dict(os.environ, {"TQDM_DISABLE": "1"}):  # its progress bar, one line an epoch
            model.fit(
                X=X,
                weights=w,
                optimizer=opt,
                max_epochs=epochs,
                epsconv=settings["epsconv"],
                pseudo_count=settings["pseudo_count"],
                use_entropic_order=True,
                reg_h=settings["reg_h"],
                reg_J=settings["reg_J"],
            )
    except ValueError as e:  # "Negative loss encountered"
        raise AnchorError(f"arDCA did not converge: {e}") from None
    if not all(bool(torch.isfinite(p).all()) for p in model.parameters()):
        raise AnchorError(f"arDCA did not converge: its parameters are not finite after {steps[0]} epochs")
    if steps[0] >= epochs:
        raise AnchorError(
            f"arDCA did not converge in {epochs} epochs (its test: the loss changes by less than "
            f"{settings['epsconv']} in one epoch); allow more epochs or check the alignment"
        )
    settings["epochs_run"] = steps[0]
    return ArDCAFit(model, time.perf_counter() - t0, settings)


def ardca_contacts(fit: ArDCAFit) -> np.ndarray:
    """(L, L) APC'd Frobenius norms of the double-centred couplings in the alignment's column order."""
    m = fit.model
    J = m.J.detach().double()  # (L, q, L, q) in the entropic order: J[i, :, j, :] for j before i
    pos = m.sorting.detach().long()  # column -> its place in that order
    L = len(pos)
    aa = [v for v in range(Q) if v != GAP]
    score = np.zeros((L, L))
    for a in range(L):
        for b in range(a + 1, L):
            pa, pb = int(pos[a]), int(pos[b])
            block = J[pa, :, pb, :] if pb < pa else J[pb, :, pa, :].T  # (q of a, q of b)
            block = block[aa][:, aa]
            block = block - block.mean(0, keepdim=True) - block.mean(1, keepdim=True) + block.mean()
            score[a, b] = score[b, a] = float(block.pow(2).sum().sqrt())
    return apc(score)


def ardca_sample(fit: ArDCAFit, n: int, seed: int = 0) -> tuple[np.ndarray, float]:
    """n members drawn from arDCA -> ((n, L) value indices, seconds)."""
    torch.manual_seed(seed)
    t0 = time.perf_counter()
    with torch.no_grad():
        X = fit.model.sample(n_samples=n)  # (n, L, q) one-hot, alignment order
    return X.argmax(-1).numpy().astype(np.int64), time.perf_counter() - t0
