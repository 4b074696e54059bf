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

The same conditioned passes give DEMASK's dependence (Ringel et al. 2026, arXiv 2604.02560),
the expected total-variation influence of i on j, at no extra pass:

    D_{i->j} = sum_v P(v) TV( P(x_j | C, x_i=v), M_j ),   TV(a, b) = 1/2 sum_w |a(w) - b(w)|

with the same M_j (`marginal`), the same pruning and the same orientation as `directed`
(row i is the position conditioned on; DEMASK writes it D_{ji}, "the influence of i on j").
Its map is symmetrised as the MI map is (the mean of both directions), with its own asymmetry.
0 <= D <= 1; D = 0 exactly when I = 0 (both vanish iff every conditional equals the marginal).

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

from .protocol import MaskedModel


def entropy_from_logp(logp: torch.Tensor) -> torch.Tensor:
    """Entropy in nats from log-probabilities over the last axis: (..., V) -> (...). The one
    entropy formula of the package (samplers, head, ground truth, reports)."""
    return (-(logp.exp() * logp).sum(-1)).clamp_min(0)


def entropy(logits: torch.Tensor) -> torch.Tensor:
    """Entropy in nats of softmax(logits) over the last axis, computed in float64: (..., V) -> (...)."""
    H = entropy_from_logp(torch.log_softmax(logits.double(), dim=-1))
    return H.to(logits.dtype if logits.is_floating_point() else torch.float)


def marginals(logits: torch.Tensor, masked: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
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
    tv: torch.Tensor | None = None  # (B, L, L) symmetrised expected TV influence (DEMASK's D), in [0, 1]
    tv_directed: torch.Tensor | None = None  # (B, L, L) D_{i->j}: row i conditioned on, as `directed`
    tv_asymmetry: torch.Tensor | None = None  # (B, L, L) |D_{i->j} - D_{j->i}|


DENSE_BYTES = 256 * 2**20  # above this, the ground truth streams its passes (see ground_truth_mi)


@dataclass
class Expansions:
    """The (state, position, value) triples the ground truth conditions on: one pass each."""

    qb: torch.Tensor  # (Q,) state
    qi: torch.Tensor  # (Q,) position conditioned on
    qv: torch.Tensor  # (Q,) value index (into value_tokens)
    w: torch.Tensor  # (Q,) float64 renormalised P(x_i = v | C) over the kept values
    p: torch.Tensor  # (B, L, V) float64 marginals of the base pass
    scope: torch.Tensor  # (B, L) positions conditioned on
    dropped: torch.Tensor  # (B, L) pruned probability mass


def expansions(p: torch.Tensor, scope: torch.Tensor, eps: float) -> Expansions:
    """Every (b, i, v) with p >= eps among the positions in scope, the most likely value of each
    always kept; weights renormalised over the kept values. p (B, L, V) float64, scope (B, L)."""
    keep = (p >= eps) & scope[..., None]  # (B, L, V)
    top = p.argmax(-1, keepdim=True)  # a position in scope expands at least its most likely value
    keep |= torch.zeros_like(keep).scatter(-1, top, True) & scope[..., None]
    qb, qi, qv = keep.nonzero(as_tuple=True)  # (Q,) sorted by state, then position, then value
    kept_mass = (p * keep).sum(-1)  # (B, L)
    w = p[qb, qi, qv] / kept_mass[qb, qi]  # (Q,)
    dropped = torch.where(scope, 1.0 - kept_mass, torch.zeros_like(kept_mass))
    return Expansions(qb, qi, qv, w, p, scope, dropped)


@torch.no_grad()
def ground_truth_cost(
    model: MaskedModel,
    tokens: torch.Tensor,
    eps: float = 1e-3,
    chunk: int = 512,
    base_logits: torch.Tensor | None = None,
    seconds_per_pass: float | None = None,
) -> dict:
    """What ground_truth_mi(model, tokens, eps) would cost, before running it: passes per state
    (one per kept (position, value), plus the base pass) and an estimate of the seconds, from
    one timed forward pass of a full chunk unless seconds_per_pass is given (a caller that has
    measured it on this machine). Lets the app and the CLI warn or refuse past a cap."""
    masked = tokens == model.mask_id
    t0 = time.perf_counter()
    if base_logits is None:
        base_logits = model.forward_tokens(tokens).logits
    ex = expansions(torch.softmax(base_logits.double(), -1), masked, eps)
    passes = torch.bincount(ex.qb, minlength=tokens.shape[0]) + 1  # (B,)
    Q = int(ex.qb.numel())
    if seconds_per_pass is None:
        n = max(1, min(chunk, Q))
        probe = tokens[ex.qb[:n]] if Q else tokens[:1]
        model.forward_tokens(probe)  # warm: a first call's allocations would read as a 20x slower pass
        t0 = time.perf_counter()
        model.forward_tokens(probe)
        seconds_per_pass = (time.perf_counter() - t0) / n
    return {
        "passes": passes.tolist(),
        "total_passes": int(passes.sum()),
        "masked": masked.sum(1).tolist(),
        "seconds_per_pass": seconds_per_pass,
        "seconds": round(seconds_per_pass * int(passes.sum()), 3),
    }


@dataclass(frozen=True)
class MIRun:
    """How the exact maps are computed, never what they are (the maps are the same for any value):
    conditioned sequences per forward pass, the bytes of float64 intermediates past which each
    position's row is reduced as soon as its passes are done, a progress callback (passes done,
    passes in all), and the base pass's logits (B, L, V) when the caller already ran it (then it is
    not run, nor counted, again)."""

    chunk: int = 512
    max_dense_bytes: int = DENSE_BYTES
    progress: Callable[[int, int], None] | None = None
    base_logits: torch.Tensor | None = None


@torch.no_grad()
def ground_truth_mi(
    model: MaskedModel,
    tokens: torch.Tensor,  # (B, L) long
    eps: float = 1e-3,
    marginal: str = "joint",
    positions: torch.Tensor | None = None,  # (B, L) bool: map only pairs inside these (default: all masked)
    tv: bool = True,  # DEMASK's TV influence beside the MI (False: the MI alone; benchmarks.tv_overhead times both)
    rows: bool = False,  # True: the directed maps keep each conditioned position's whole row (every masked j)
    run: MIRun = MIRun(),
) -> GroundTruthMI:
    """Exact pairwise conditional MI between the masked positions of each state.

    Passes run in chunks of `run.chunk` sequences; `run.progress(done, total)` is called after each.
    While the float64 intermediates (every pass's (L, V) marginals and the (B, L, L, V)
    implied marginals) fit in run.max_dense_bytes, they are kept whole (the path every committed
    Sudoku result ran); past it (proteins: a fully masked length-512 state would need about
    1 GB) each conditioned position is reduced to its row of the map as soon as its last
    value's pass is done, so memory stays at one chunk of passes plus the (B, L, L) map
    (tests check both paths give the same map).

    rows=True keeps, in `directed` and `tv_directed`, the row of every position in scope against
    every masked position (the passes conditioning on i give all of row i); the symmetrised maps
    stay inside scope x scope. A caller expanding a few positions at a time (decoding.LazyMap)
    reads its pairs from those rows.
    """
    if marginal not in ("joint", "model"):
        raise ValueError("marginal must be 'joint' or 'model'")
    t0 = time.perf_counter()
    dev = tokens.device
    B, L = tokens.shape
    masked = tokens == model.mask_id  # (B, L)
    scope = masked if positions is None else masked & positions.to(dev)  # (B, L) positions conditioned on
    vt = model.value_tokens.to(dev)  # (V,)
    base_passes, base_logits, chunk, progress = 0, run.base_logits, run.chunk, run.progress
    if base_logits is None:
        base_logits = model.forward_tokens(tokens).logits
        base_passes = 1
    p = torch.softmax(base_logits.double(), -1)  # (B, L, V)
    V = p.shape[-1]
    ex = expansions(p, scope, eps)
    qb, qi, qv, w, dropped = ex.qb, ex.qi, ex.qv, ex.w, ex.dropped
    Q = qb.numel()

    def passes_of(s: int, e: int) -> torch.Tensor:  # the conditioned passes s..e: (C, L, V) float64 marginals
        x = tokens[qb[s:e]].clone()  # (C, L)
        x[torch.arange(e - s, device=dev), qi[s:e]] = vt[qv[s:e]]
        out = torch.softmax(model.forward_tokens(x).logits.double(), -1)
        if progress is not None:
            progress(e, Q)
        return out

    if (Q * L * V + B * L * L * V) * 8 <= run.max_dense_bytes:
        q_probs = torch.empty(Q, L, V, dtype=torch.float64, device=dev)
        for s in range(0, Q, chunk):
            e = min(Q, s + chunk)
            q_probs[s:e] = passes_of(s, e)
        # implied marginal of j given conditioning on i: M[b, i, j, :] = sum_v w * q
        M = torch.zeros(B, L, L, V, dtype=torch.float64, device=dev)
        M.index_put_((qb, qi), w[:, None, None] * q_probs, accumulate=True)
        if marginal == "joint":
            ref = M[qb, qi]  # (Q, L, V)
        else:
            ref = p[qb]  # (Q, L, V) the model's own marginal of every j
        kl, tv_q = divergences(q_probs, ref, tv)  # (Q, L) each
        directed = torch.zeros(B, L, L, dtype=torch.float64, device=dev)
        directed.index_put_((qb, qi), w[:, None] * kl, accumulate=True)
        tv_dir = torch.zeros(B, L, L, dtype=torch.float64, device=dev)
        if tv_q is not None:
            tv_dir.index_put_((qb, qi), w[:, None] * tv_q, accumulate=True)
    else:
        directed, tv_dir = _directed_streamed(passes_of, ex, chunk, marginal, tv)
    off = ~torch.eye(L, dtype=torch.bool, device=dev)[None]
    pair = scope[:, :, None] & scope[:, None, :] & off  # (B, L, L)
    row = scope[:, :, None] & masked[:, None, :] & off if rows else pair  # where the directed maps are kept
    directed = torch.where(row, directed.clamp_min(0), torch.zeros_like(directed))
    tv_dir = torch.where(row, tv_dir.clamp(0, 1), torch.zeros_like(tv_dir))
    d_in, t_in = directed * pair, tv_dir * pair  # the symmetrised maps and diagnostics: scope x scope only
    mi = 0.5 * (d_in + d_in.transpose(1, 2))
    asym = (d_in - d_in.transpose(1, 2)).abs()
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
        extra={"directed64": directed, "mi64": mi, "tv_directed64": tv_dir},
        tv=(0.5 * (t_in + t_in.transpose(1, 2))).float() if tv else None,
        tv_directed=tv_dir.float() if tv else None,
        tv_asymmetry=(t_in - t_in.transpose(1, 2)).abs().float() if tv else None,
    )


def divergences(q: torch.Tensor, ref: torch.Tensor, tv: bool = True) -> tuple[torch.Tensor, torch.Tensor | None]:
    """KL(q || ref) and TV(q, ref) (None when not asked) over the last axis: (..., V) float64 each ->
    (...) each. MI and DEMASK's influence read the same conditioned marginals; only this reduction differs."""
    kl = (q * (torch.log(q.clamp_min(1e-300)) - torch.log(ref.clamp_min(1e-300)))).sum(-1)
    return kl, 0.5 * (q - ref).abs().sum(-1) if tv else None


def _directed_streamed(
    passes_of: Callable[[int, int], torch.Tensor], ex: Expansions, chunk: int, marginal: str, tv: bool = True
) -> tuple[torch.Tensor, torch.Tensor]:
    """I_{i->j} and D_{i->j} for every conditioned (b, i), reducing each group of passes (all kept
    values of one (b, i): consecutive, since the expansions are sorted) to its rows as soon as it
    is complete: memory is one chunk of passes plus the open groups, never (Q, L, V)."""
    qb, qi, w, p, Q = ex.qb, ex.qi, ex.w, ex.p, ex.qb.numel()
    B, L = p.shape[0], p.shape[1]
    directed = torch.zeros(B, L, L, dtype=torch.float64, device=p.device)
    tv_dir = torch.zeros(B, L, L, dtype=torch.float64, device=p.device)
    key = qb * L + qi  # (Q,) group id, non-decreasing
    bounds = torch.nonzero(torch.diff(key, prepend=key[:1] - 1)).squeeze(1).tolist() + [Q]  # group starts, then Q
    buf, buf_start, g = [], 0, 0  # probs of passes buf_start.. not yet reduced; next group to reduce
    for s in range(0, Q, chunk):
        e = min(Q, s + chunk)
        buf.append(passes_of(s, e))
        have = torch.cat(buf) if len(buf) > 1 else buf[0]  # (e - buf_start, L, V)
        while g + 1 < len(bounds) and bounds[g + 1] <= e:
            a, z = bounds[g] - buf_start, bounds[g + 1] - buf_start
            P, wg = have[a:z], w[bounds[g] : bounds[g + 1]]  # (n, L, V), (n,)
            ref = (wg[:, None, None] * P).sum(0) if marginal == "joint" else p[qb[bounds[g]]]  # (L, V)
            kl, tv_g = divergences(P, ref[None], tv)  # (n, L) each
            directed[qb[bounds[g]], qi[bounds[g]]] = (wg[:, None] * kl).sum(0)
            if tv_g is not None:
                tv_dir[qb[bounds[g]], qi[bounds[g]]] = (wg[:, None] * tv_g).sum(0)
            g += 1
        used = bounds[g] - buf_start if g < len(bounds) else have.shape[0]
        buf, buf_start = [have[used:]], buf_start + used
    return directed, tv_dir
