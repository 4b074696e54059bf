"""The field's generative family models from their own packages, as anchors beside the MDM:
arDCA (the `ardca` package: autoregressive DCA, Trinquier et al., Nat. Commun. 2021), fitted on
the same training rows with the same sequence weights, with the package's documented defaults
(its `arDCA train` parser: Adam lr 0.005, L2 1e-6 on the fields and 1e-4 on the couplings,
convergence 1e-2 on the loss, at most 1,000 epochs, pseudocount 1 / Neff, entropic column order).
One change: the port's epochs are full-batch, O(N L^2 q^2) each (about 30 s on one core at
13,734 rows x 119 columns), so past `max_rows` it fits a uniform random subsample of the rows with
their weights; the subsample's size is recorded in the settings.

Contacts from its couplings: arDCA's J is one-sided in its entropic order (column i reads the
columns before it); each pair's 20 x 20 block (the gap dropped) is taken from whichever side
holds it, double-centred, its Frobenius norm the score, then APC, as for every predictor.
Samples: arDCA draws a member exactly, one column after another (L steps of its own model).

plmDCA (the `pydca` package's C++ backend: pseudo-likelihood, its documented defaults: sequence
identity 0.8 for the weights, lambda_h = lambda_J = 0.2 (L - 1), 100 L-BFGS iterations) on the
same training rows (it weights them itself). Its couplings give contacts the same way. It is not
a sampler: its members are drawn by adabmDCA's Metropolis chains on its parameters (1,000
sweeps, the package's default), which is how the field generates from a Potts model.

Both packages are optional installs (`make anchors`): absent, AnchorUnavailable says how.
"""

from __future__ import annotations

import functools
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest.mock import patch

import numpy as np
import torch

from ...core.errors import UserError
from .alignment import GAP, SYMBOLS, Q
from .scoring import apc


class AnchorUnavailable(UserError, RuntimeError):
    """An anchor's package is not installed; the message says how to install it."""


class AnchorError(UserError, RuntimeError):
    """An anchor's fit failed (did not converge); the message says how."""


@dataclass
class ArDCAFit:
    model: Any  # arDCA.models.arDCA
    seconds: float
    settings: dict


def _tqdm():
    from tqdm import tqdm

    return tqdm


def _ardca():
    try:
        from arDCA.models import arDCA  # the package of the arDCA authors (PyPI: ardca)
    except ImportError:
        raise AnchorUnavailable("arDCA is not installed: `make anchors` (pip install ardca==0.1.1)") from None
    return arDCA


def fit_ardca(
    rows: np.ndarray, weights: np.ndarray, seed: int = 0, epochs: int = 1000, max_rows: int | None = None
) -> ArDCAFit:
    """arDCA on rows (N, L) value indices with their sequence weights, the package's defaults;
    past max_rows rows, a uniform subsample of max_rows of them (seeded) with their weights.
    AnchorError when the fit does not converge: a negative or non-finite loss (the package's
    own stop), or `epochs` epochs without its convergence test passing; nothing is returned then."""
    ArDCA = _ardca()
    n_rows = len(rows)
    if max_rows is not None and n_rows > max_rows:
        keep = np.sort(np.random.default_rng(seed).choice(n_rows, size=max_rows, replace=False))
        rows, weights = rows[keep], weights[keep]
    torch.manual_seed(seed)
    t0 = time.perf_counter()
    X = torch.nn.functional.one_hot(torch.as_tensor(rows, dtype=torch.long), Q).float()  # (N, L, Q)
    w = torch.as_tensor(weights, dtype=torch.float32)
    settings = {"lr": 0.005, "reg_h": 1e-6, "reg_J": 1e-4, "epsconv": 1e-2, "max_epochs": epochs}
    settings["pseudo_count"] = 1.0 / float(w.sum())
    if len(rows) < n_rows:
        settings["rows"], settings["rows_of"] = len(rows), n_rows
    model = ArDCA(L=rows.shape[1], q=Q)
    opt = torch.optim.Adam(model.parameters(), lr=settings["lr"])
    steps = [0]  # the package's fit says nothing of how it ended: count its optimiser steps
    opt.register_step_post_hook(lambda *_: steps.__setitem__(0, steps[0] + 1))
    try:
        with patch("arDCA.models.tqdm", functools.partial(_tqdm(), disable=True)):  # its bar: a line an epoch
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


def coupling_contacts(J: np.ndarray) -> np.ndarray:
    """(L, L) contact scores of a Potts model's couplings J (L, Q, L, Q) in the alignment's symbol
    order: each pair's 20 x 20 amino-acid block (the gap dropped), double-centred, its Frobenius
    norm, then APC. The one extraction every coupling-based anchor goes through."""
    aa = np.array([v for v in range(Q) if v != GAP])
    B = J[:, aa][:, :, :, aa].transpose(0, 2, 1, 3)  # (L, L, 20, 20)
    B = B - B.mean(2, keepdims=True) - B.mean(3, keepdims=True) + B.mean((2, 3), keepdims=True)
    score = np.sqrt((B**2).sum((2, 3)))
    np.fill_diagonal(score, 0.0)
    return apc(score)


def ardca_couplings(fit: ArDCAFit) -> np.ndarray:
    """arDCA's one-sided couplings in the alignment's column order, as a symmetric (L, Q, L, Q):
    J[pa, :, pb, :] of its entropic order holds a pair for pb before pa."""
    J = fit.model.J.detach().double().numpy()  # (L, q, L, q) in the entropic order
    pos = fit.model.sorting.detach().long().numpy()  # column -> its place in that order
    L = len(pos)
    out = np.zeros((L, Q, L, Q))
    for a in range(L):
        for b in range(a + 1, L):
            pa, pb = pos[a], pos[b]
            block = J[pa, :, pb, :] if pb < pa else J[pb, :, pa, :].T  # (q of a, q of b)
            out[a, :, b, :], out[b, :, a, :] = block, block.T
    return out


def ardca_contacts(fit: ArDCAFit) -> np.ndarray:
    """(L, L) APC'd Frobenius norms of arDCA's couplings (coupling_contacts)."""
    return coupling_contacts(ardca_couplings(fit))


def ardca_sample(fit: ArDCAFit, n: int, seed: int = 0) -> tuple[np.ndarray, float]:
    """n members drawn from arDCA -> ((n, L) value indices, seconds)."""
    torch.manual_seed(seed)
    t0 = time.perf_counter()
    with torch.no_grad():
        X = fit.model.sample(n_samples=n)  # (n, L, q) one-hot, alignment order
    return X.argmax(-1).numpy().astype(np.int64), time.perf_counter() - t0


# --------------------------------------------------------------------------- plmDCA (pydca)

PYDCA_STATES = "ACDEFGHIKLMNPQRSTVWY-"  # pydca's protein states (its RES_TO_INT - 1)
ADABM_STATES = "-ACDEFGHIKLMNPQRSTVWY"  # adabmDCA's protein tokens


@dataclass
class PottsFit:
    """A Potts model's parameters in the alignment's symbol order (alignment.SYMBOLS)."""

    h: np.ndarray  # (L, Q) fields
    J: np.ndarray  # (L, Q, L, Q) couplings, symmetric: J[i, a, j, b] = J[j, b, i, a]; J[i, :, i, :] = 0
    seconds: float
    settings: dict


def _pydca():
    try:
        from pydca.plmdca import plmdca  # KIT-MBS/pydca (PyPI: pydca), its C++ plmDCA backend
    except ImportError:
        raise AnchorUnavailable(
            "pydca is not installed: `make anchors` (pip install --no-deps --no-build-isolation pydca==1.23)"
        ) from None
    return plmdca


def fit_plmdca(rows: np.ndarray, threads: int = 1) -> PottsFit:
    """plmDCA on rows (N, L) value indices with the package's defaults (it weights the rows at
    identity 0.8 itself). AnchorError when its parameters are not finite."""
    plmdca = _pydca()
    N, L = rows.shape
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        fasta = Path(tmp) / "train.fasta"
        fasta.write_text("".join(f">r{n}\n{''.join(SYMBOLS[v] for v in row)}\n" for n, row in enumerate(rows)))
        model = plmdca.PlmDCA(str(fasta), "protein", num_threads=threads)
        flat = np.asarray(model.get_fields_and_couplings_from_backend(), dtype=np.float64)
        settings = {
            "seqid": model.sequence_identity,
            "lambda_h": model.lambda_h,
            "lambda_J": model.lambda_J,
            "max_iterations": model.max_iterations,
        }
    if not np.isfinite(flat).all():
        raise AnchorError("plmDCA did not converge: its parameters are not finite")
    perm = [PYDCA_STATES.index(c) for c in SYMBOLS]  # our value index -> pydca's state
    h = flat[: L * Q].reshape(L, Q)[:, perm]
    Jp = np.zeros((L, Q, L, Q))
    k = L * Q
    for i in range(L - 1):  # pydca's layout: for i < j, a q x q block, a-major
        for j in range(i + 1, L):
            block = flat[k : k + Q * Q].reshape(Q, Q)
            Jp[i, :, j, :], Jp[j, :, i, :] = block, block.T
            k += Q * Q
    J = Jp[:, perm][:, :, :, perm]
    return PottsFit(h, J, time.perf_counter() - t0, settings)


def potts_sample(fit: PottsFit, n: int, seed: int = 0, sweeps: int = 1000) -> tuple[np.ndarray, float]:
    """n members of a Potts model from adabmDCA's Metropolis chains -> ((n, L) value indices, seconds)."""
    try:
        from adabmDCA.api import DCAModel  # bmDCA's package (PyPI: adabmdca), installed with ardca
    except ImportError:
        raise AnchorUnavailable("adabmDCA is not installed: `make anchors` (pip install adabmdca==1.0.0)") from None
    to_adabm = [SYMBOLS.index(c) for c in ADABM_STATES]  # adabmDCA's token -> our value index
    params = {
        "bias": torch.as_tensor(np.ascontiguousarray(fit.h[:, to_adabm]), dtype=torch.float32),
        "coupling_matrix": torch.as_tensor(
            np.ascontiguousarray(fit.J[:, to_adabm][:, :, :, to_adabm]), dtype=torch.float32
        ),
    }
    t0 = time.perf_counter()
    seqs = DCAModel(params, alphabet="protein").sample(n, n_sweeps=sweeps, seed=seed)
    rows = np.array([[SYMBOLS.index(c) for c in s] for s in seqs], dtype=np.int64)
    return rows, time.perf_counter() - t0


# --------------------------------------------------------------------------- bmDCA (adabmDCA)


def fit_bmdca(rows: np.ndarray, chains: int = 1000, max_steps: int = 2000, seed: int = 0) -> PottsFit:
    """Boltzmann-machine DCA (adabmDCA) on rows (N, L) value indices: the package's defaults
    (Metropolis chains, 10 sweeps a step, lr 0.01, target Pearson 0.95 of the connected
    correlations, pseudocount 1 / Neff, its own weights at identity 0.8) but for the budget:
    `chains` persistent chains (default 10,000) and at most `max_steps` gradient steps (default
    50,000), because its default costs about 30 s a step on one CPU core for L ~ 100. Whether it
    reached its target within the budget is in settings ("converged", "pearson")."""
    try:
        from adabmDCA.api import train_model
    except ImportError:
        raise AnchorUnavailable("adabmDCA is not installed: `make anchors` (pip install adabmdca==1.0.0)") from None
    N, L = rows.shape
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        fasta = Path(tmp) / "train.fasta"
        fasta.write_text("".join(f">r{n}\n{''.join(SYMBOLS[v] for v in row)}\n" for n, row in enumerate(rows)))
        res = train_model(
            fasta, n_chains=chains, max_gradient_steps=max_steps, seed=seed, device="cpu", checkpoint_interval=None
        )
    params = res.model.params
    from_adabm = [ADABM_STATES.index(c) for c in SYMBOLS]  # our value index -> adabmDCA's token
    h = params["bias"].double().numpy()[:, from_adabm]
    J = params["coupling_matrix"].double().numpy()[:, from_adabm][:, :, :, from_adabm]
    if not (np.isfinite(h).all() and np.isfinite(J).all()):
        raise AnchorError(f"bmDCA did not converge: its parameters are not finite after {res.gradient_steps} steps")
    pearson = [float(x) for x in res.history.get("Pearson", [])]
    settings = {
        "chains": chains,
        "max_gradient_steps": max_steps,
        "gradient_steps": int(res.gradient_steps),
        "converged": bool(res.converged),
        "stop_reason": str(res.stop_reason),
        "pearson": round(pearson[-1], 4) if pearson else None,
    }
    return PottsFit(h, J, time.perf_counter() - t0, settings)
