"""A backbone's own attention as a training-free dependency proxy (DAWN, Luo et al. 2026).

The blocks use fused attention (scaled_dot_product_attention), which never forms the weights.
A model that exposes its attention says where its last block's attention is and how to turn
that module's inputs into weights (`attention_probe`); `recording` hooks it for the length of
a pass and recomputes the weights from the very inputs that pass fed it: no second backbone
pass, one extra Q / K projection and an L x L softmax per head (counted in wall time, not as a
pass). The map is the last block's, averaged over its heads, as DAWN reads LLaDA's; a Site names
another block or one head (the app's viewer lets a user pick them).

    with recording(model) as box:
        out = model.forward_tokens(tokens)
    A = box[-1]  # (B, L, L): row q, column k = how much position q attends to position k
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from .errors import InputError, UserError

# (the hooked module's positional args, its keyword args) -> (B, L, L) weights (one head's, or their mean)
WeightsFn = Callable[[tuple, dict], torch.Tensor]


@dataclass(frozen=True)
class Site:
    """Which attention is read: a block (0-based; -1 the last, DAWN's) and one head (None: the mean
    over the block's heads)."""

    layer: int = -1
    head: int | None = None

    def name(self, n_layers: int) -> str:
        block = n_layers + self.layer + 1 if self.layer < 0 else self.layer + 1
        heads = "mean of its heads" if self.head is None else f"head {self.head + 1}"
        return f"block {block} of {n_layers}, {heads}"


LAST = Site()  # the last block, its heads averaged: what DAWN and the viewer read by default


def check_site(site: Site, n_layers: int, n_heads: int) -> None:
    """A site the backbone has, or InputError naming the blocks and heads it has."""
    if not -n_layers <= site.layer < n_layers:
        raise InputError(f"attention block {site.layer + 1} does not exist: the backbone has blocks 1..{n_layers}")
    if site.head is not None and not 0 <= site.head < n_heads:
        raise InputError(f"attention head {site.head + 1} does not exist: each block has heads 1..{n_heads}")


class NoAttention(UserError, ValueError):
    """The backbone does not expose its attention (a rule or report that reads it cannot run)."""


def probe_of(model: Any, site: Site = LAST) -> tuple[nn.Module, WeightsFn]:
    probe = getattr(model, "attention_probe", None)
    if probe is None:
        raise NoAttention(f"{type(model).__name__} does not expose its attention (no attention_probe)")
    return probe(site)


def attention_shape(model: Any) -> tuple[int, int]:
    """(blocks, heads a block) of a backbone that exposes its attention (NoAttention otherwise)."""
    shape = getattr(model, "attention_shape", None)
    if shape is None:
        raise NoAttention(f"{type(model).__name__} does not expose its attention (no attention_shape)")
    return shape()


@contextmanager
def recording(model: Any, site: Site = LAST) -> Iterator[list[torch.Tensor]]:
    """Within it, each forward pass of `model` appends the site's attention (B, L, L) to the yielded
    list (by default the last block's, its heads averaged)."""
    module, weights = probe_of(model, site)
    box: list[torch.Tensor] = []
    handle = module.register_forward_pre_hook(
        lambda m, args, kwargs: box.append(weights(args, kwargs)), with_kwargs=True
    )
    try:
        yield box
    finally:
        handle.remove()


def softmax_weights(
    q: torch.Tensor, k: torch.Tensor, allowed: torch.Tensor | None = None, head: int | None = None
) -> torch.Tensor:
    """(B, H, L, Dh) queries and keys -> (B, L, L) softmax attention averaged over the heads (or one
    head's), as scaled_dot_product_attention weighs them (allowed (B, 1, L, L) bool: where attention may go)."""
    if head is not None:
        q, k = q[:, head : head + 1], k[:, head : head + 1]
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
