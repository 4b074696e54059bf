"""Marginal entropy and ground-truth pairwise conditional mutual information.

For masked positions i, j and context C (the unmasked tokens), the model's own
conditionals define a joint

    P(x_i = v, x_j = w | C) = P(x_i = v | C) * P(x_j = w | C, x_i = v)

where the second factor comes from one forward pass with x_i set to v. One pass
per (i, v): O(#masked * |V|) passes, batched and chunked here. From that joint:

    I_{i->j} = sum_v P(v) KL( P(x_j | C, x_i=v) || M_j )

Choice of M_j (documented in docs/mi.md): by default ("joint") M_j is the
marginal implied by the joint, M_j(w) = sum_v P(v) P(w | v). Then I_{i->j} is the
exact mutual information of a proper joint distribution: >= 0 and <= H(M_j).
The paper's formula uses the model's own marginal P(x_j | C) ("model"); it
equals the "joint" value plus KL(M_j || P(x_j|C)) >= 0, i.e. it also counts the
model's inconsistency as dependence. Both are available.

Conditioning on i or on j gives two estimates when the model is not a perfectly
consistent joint: the map is their mean, and |I_{i->j} - I_{j->i}| is returned
as a self-consistency diagnostic.

Pruning: values with P(x_i = v | C) < eps are not expanded (no pass). The kept
values' probabilities are renormalised to sum to 1 and the MI is that of the
renormalised joint; the dropped mass per position is reported. eps = 0 is exact.

Scope: `positions` restricts the map to pairs inside a subset of the masked positions
(only those are conditioned on: one pass per kept value of each). Every entry inside
the subset is the same number the full map has, because I_{i->j} needs only the passes
that condition on i. The mi-gt sampler uses it to expand only the positions its rule
can still admit.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch


def entropy_from_logp(logp: torch.Tensor) -> torch.Tensor:
    """Entropy in nats from log-probabilities over the last axis: (..., V) -> (...). The one
    entropy formula of the package (samplers, head, ground truth, reports)."""
    return (-(logp.exp() * logp).sum(-1)).clamp_min(0)


def entropy(logits: torch.Tensor) -> torch.Tensor:
    """Entropy in nats of softmax(logits) over the last axis, computed in float64: (..., V) -> (...)."""
    H = entropy_from_logp(torch.log_softmax(logits.double(), dim=-1))
    return H.to(logits.dtype if logits.is_floating_point() else torch.float)


def marginals(logits: torch.Tensor, masked: torch.Tensor):
    """A pass's log-marginals and entropies, as every sampler reads them (and hands them
    to the MI head): logits (B, L, V), masked (B, L) -> logp (B, L, V), H (B, L) in nats,
    zero on unmasked cells. float32, so that the head, the app and the benchmarks see
    bit for bit what the decoder saw."""
    logp = torch.log_softmax(logits.float(), -1)
    return logp, entropy_from_logp(logp) * masked


@dataclass
class GroundTruthMI:
    mi: torch.Tensor  # (B, L, L) symmetrised MI, nats; 0 on the diagonal and off the masked set
    directed: torch.Tensor  # (B, L, L) I_{i->j}: row i is the position conditioned on
    asymmetry: torch.Tensor  # (B, L, L) |I_{i->j} - I_{j->i}|
    entropy: torch.Tensor  # (B, L) marginal entropy of each masked position (0 elsewhere)
    dropped_mass: torch.Tensor  # (B, L) probability mass of the values pruned at position i (0 out of scope)
    passes: torch.Tensor  # (B,) forward passes used per state, the base pass included
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)


@torch.no_grad()
def ground_truth_mi(
    model,
    tokens: torch.Tensor,  # (B, L) long
    eps: float = 1e-3,
    chunk: int = 512,
    marginal: str = "joint",
    progress: Callable[[int, int], None] | None = None,
    base_logits: torch.Tensor | None = None,  # (B, L, V) if the caller already ran the base pass
    positions: torch.Tensor | None = None,  # (B, L) bool: map only pairs inside these (default: all masked)
) -> GroundTruthMI:
    """Exact pairwise conditional MI between the masked positions of each state.

    Memory is bounded by `chunk` sequences per forward pass, whatever the number
    of masked positions; `progress(done, total)` is called after each chunk.
    """
    if marginal not in ("joint", "model"):
        raise ValueError("marginal must be 'joint' or 'model'")
    t0 = time.perf_counter()
    dev = tokens.device
    B, L = tokens.shape
    masked = tokens == model.mask_id  # (B, L)
    scope = masked if positions is None else masked & positions.to(dev)  # (B, L) positions conditioned on
    vt = model.value_tokens.to(dev)  # (V,)
    base_passes = 0
    if base_logits is None:
        base_logits = model.forward_tokens(tokens).logits
        base_passes = 1
    p = torch.softmax(base_logits.double(), -1)  # (B, L, V)
    V = p.shape[-1]

    # queries: every (state b, masked position i, value v) with p >= eps
    keep = (p >= eps) & scope[..., None]  # (B, L, V)
    # a position in scope must expand at least its most likely value
    top = p.argmax(-1, keepdim=True)
    keep |= torch.zeros_like(keep).scatter(-1, top, True) & scope[..., None]
    qb, qi, qv = keep.nonzero(as_tuple=True)  # (Q,)
    kept_mass = (p * keep).sum(-1)  # (B, L)
    w = p[qb, qi, qv] / kept_mass[qb, qi]  # (Q,) renormalised weights
    dropped = torch.where(scope, 1.0 - kept_mass, torch.zeros_like(kept_mass))

    Q = qb.numel()
    q_probs = torch.empty(Q, L, V, dtype=torch.float64, device=dev)
    done = 0
    for s in range(0, Q, chunk):
        e = min(Q, s + chunk)
        x = tokens[qb[s:e]].clone()  # (C, L)
        x[torch.arange(e - s, device=dev), qi[s:e]] = vt[qv[s:e]]
        q_probs[s:e] = torch.softmax(model.forward_tokens(x).logits.double(), -1)
        done = e
        if progress is not None:
            progress(done, Q)

    # implied marginal of j given conditioning on i: M[b, i, j, :] = sum_v w * q
    M = torch.zeros(B, L, L, V, dtype=torch.float64, device=dev)
    M.index_put_((qb, qi), w[:, None, None] * q_probs, accumulate=True)
    if marginal == "joint":
        ref = M[qb, qi]  # (Q, L, V)
    else:
        ref = p[qb]  # (Q, L, V) the model's own marginal of every j
    kl = (q_probs * (torch.log(q_probs.clamp_min(1e-300)) - torch.log(ref.clamp_min(1e-300)))).sum(-1)  # (Q, L)
    directed = torch.zeros(B, L, L, dtype=torch.float64, device=dev)
    directed.index_put_((qb, qi), w[:, None] * kl, accumulate=True)
    pair = scope[:, :, None] & scope[:, None, :]
    pair &= ~torch.eye(L, dtype=torch.bool, device=dev)[None]
    directed = torch.where(pair, directed.clamp_min(0), torch.zeros_like(directed))
    mi = 0.5 * (directed + directed.transpose(1, 2))
    asym = (directed - directed.transpose(1, 2)).abs()
    H = entropy_from_logp(torch.log_softmax(base_logits.double(), -1)) * masked  # (B, L)
    passes = torch.bincount(qb, minlength=B) + base_passes
    return GroundTruthMI(
        mi=mi.float(),
        directed=directed.float(),
        asymmetry=asym.float(),
        entropy=H.float(),
        dropped_mass=dropped.float(),
        passes=passes,
        seconds=time.perf_counter() - t0,
        extra={"directed64": directed, "mi64": mi},
    )
