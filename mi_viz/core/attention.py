"""A backbone's own attention as a training-free dependency proxy (DAWN, Luo et al. 2026).

The blocks use fused attention (scaled_dot_product_attention), which never forms the weights.
A model that exposes its attention says where its last block's attention is and how to turn
that module's inputs into weights (`attention_probe`); `recording` hooks it for the length of
a pass and recomputes the weights from the very inputs that pass fed it: no second backbone
pass, one extra Q / K projection and an L x L softmax per head (counted in wall time, not as a
pass). The map is the last block's, averaged over its heads, as DAWN reads LLaDA's.

    with recording(model) as box:
        out = model.forward_tokens(tokens)
    A = box[-1]  # (B, L, L): row q, column k = how much position q attends to position k
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import torch
from torch import nn

from .errors import UserError

# (the hooked module's positional args, its keyword args) -> (B, L, L) head-averaged weights
WeightsFn = Callable[[tuple, dict], torch.Tensor]


class NoAttention(UserError, ValueError):
    """The backbone does not expose its attention (a rule or report that reads it cannot run)."""


def probe_of(model) -> tuple[nn.Module, WeightsFn]:
    probe = getattr(model, "attention_probe", None)
    if probe is None:
        raise NoAttention(f"{type(model).__name__} does not expose its attention (no attention_probe)")
    return probe()


@contextmanager
def recording(model) -> Iterator[list[torch.Tensor]]:
    """Within it, each forward pass of `model` appends its last block's head-averaged attention
    (B, L, L) to the yielded list."""
    module, weights = probe_of(model)
    box: list[torch.Tensor] = []
    handle = module.register_forward_pre_hook(
        lambda m, args, kwargs: box.append(weights(args, kwargs)), with_kwargs=True
    )
    try:
        yield box
    finally:
        handle.remove()


def softmax_weights(q: torch.Tensor, k: torch.Tensor, allowed: torch.Tensor | None = None) -> torch.Tensor:
    """(B, H, L, Dh) queries and keys -> (B, L, L) softmax attention averaged over the heads, as
    scaled_dot_product_attention weighs them (allowed (B, 1, L, L) bool: where attention may go)."""
    s = (q.float() @ k.float().transpose(-1, -2)) / q.shape[-1] ** 0.5  # (B, H, L, L)
    if allowed is not None:
        s = s.masked_fill(~allowed, float("-inf"))
    return torch.softmax(s, -1).mean(1)


def sinks(A: torch.Tensor, factor: float) -> torch.Tensor:
    """(..., L, L) attention -> (..., L) bool: keys whose mean incoming attention is over factor / L,
    factor times a uniform share (DAWN's sink filter, scaled to the length: its absolute 0.01
    on LLaDA's thousands of positions is about ten uniform shares)."""
    L = A.shape[-1]
    return A.mean(-2) > factor / L


def dependency_map(A: torch.Tensor, factor: float = 10.0) -> torch.Tensor:
    """The attention read as a symmetric pairwise score: sinks' columns and the diagonal zeroed,
    then max(A_qk, A_kq) (an edge in either direction is a conflict, as DAWN reads it)."""
    A = A.clone()
    A.masked_fill_(sinks(A, factor).unsqueeze(-2), 0.0)
    A.diagonal(dim1=-2, dim2=-1).zero_()
    return torch.maximum(A, A.transpose(-1, -2))
