"""One way to read a state: backbone pass -> marginals -> (optionally) the MI head's map.

Every place that shows or scores an MI map (decode, the reports, the app, the figure,
the benchmarks) goes through read_state, so that what a page draws is bit for bit what
the sampler decided on.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

import torch

from .attention import LAST, Site, dependency_map, recording
from .mi import marginals
from .protocol import MaskedModel, ModelOutput


@dataclass
class Reading:
    out: ModelOutput  # the backbone pass (logits, hidden states, the blocks the head reads)
    masked: torch.Tensor  # (B, L) bool
    logp: torch.Tensor  # (B, L, V) float32 log-marginals
    entropy: torch.Tensor  # (B, L) nats, 0 on unmasked positions
    mi: torch.Tensor | None  # (B, L, L) the head's map, None without a head
    attention: torch.Tensor | None = None  # (B, L, L) the last block's head-averaged attention, when asked


def read_state(
    model: MaskedModel, tokens: torch.Tensor, head: Any = None, attention: bool = False, site: Site = LAST
) -> Reading:
    """One backbone pass over tokens (B, L) and, with a head, its MI map from the same pass;
    with attention, the pass's last-block attention too (core.attention: no second pass).
    Autograd follows the caller's mode (decode and the app run under inference_mode)."""
    ctx: AbstractContextManager[list[torch.Tensor]] = recording(model, site) if attention else nullcontext([])
    with ctx as box:
        out = head.backbone_pass(model, tokens) if head is not None else model.forward_tokens(tokens)
    masked = tokens == model.mask_id
    logp, H = marginals(out.logits, masked)
    mi = head.read(out, masked, logp, H) if head is not None else None
    return Reading(out, masked, logp, H, mi, box[-1] if attention else None)


def read_steps(
    model: MaskedModel,
    states: list[list[int]],
    head: Any = None,
    attention: bool = False,
    batch: int = 64,
    site: Site = LAST,
) -> tuple[list[torch.Tensor] | None, list[torch.Tensor] | None]:
    """Every step's state of a decode (the trace's StepRecord.tokens) read in batched passes, never
    a pass per step: the head's map of each state (None without a head) and, with attention, the
    backbone's attention as a dependency map (core.attention.dependency_map; NoAttention for a
    model without a probe). The viewer's payload and the export benchmark read both from here."""
    est: list[torch.Tensor] = []
    att: list[torch.Tensor] = []
    x = torch.tensor(states)  # (T, L)
    with torch.inference_mode():
        for i in range(0, len(x), batch):
            r = read_state(model, x[i : i + batch], head, attention=attention, site=site)
            if r.mi is not None:
                est += list(r.mi)
            if r.attention is not None:
                att += list(dependency_map(r.attention))
    return (est if head is not None else None), (att if attention else None)
