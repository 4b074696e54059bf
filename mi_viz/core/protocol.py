"""The two small protocols the core reads: a masked model, and the domain around it.

The MI code, the samplers, the head and the benchmarks only need a forward pass that
returns logits over the candidate values and the hidden states of the same pass, the
token ids of those values, and the mask token (MaskedModel). Everything that knows what
a token *means* (a Sudoku digit, an amino acid), which positions are known to depend on
each other, how a finished decode is scored and how a state is drawn sits behind one
Domain object per folder of mi_viz/domains/. The core never imports a domain: it is
handed one (tests/test_imports.py checks the rule).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import torch


@dataclass
class ModelOutput:
    logits: torch.Tensor  # (B, L, V) over the candidate values, not the whole vocabulary
    hidden: torch.Tensor | None  # (B, L, D) final hidden states the MI head reads
    layers: dict[int, torch.Tensor] = field(default_factory=dict)  # block index -> (B, L, D), only those asked for


class MaskedModel(Protocol):
    mask_id: int  # token id of MASK
    value_tokens: torch.Tensor  # (V,) token id of each candidate value
    d_model: int  # width of the hidden states (what an MI head reads)
    n_layers: int  # blocks whose outputs forward_tokens can return

    def forward_tokens(self, tokens: torch.Tensor, hidden_layers: tuple[int, ...] = ()) -> ModelOutput:
        """tokens (B, L) long; hidden_layers: block outputs to return as well."""
        ...


class Domain(Protocol):
    """What the core needs to know about one kind of sequence (in the spirit of esm's client API):
    every member below is read by the core, and nothing else is (mypy checks each shipped domain
    against this class: mi_viz/domains/__init__.py).

    encode / decode turn user input into (B, L) tokens and back; groups says which inputs share
    a length (one batch each); load_model builds the domain's masked model from a checkpoint (its
    shipped default when spec is None); relations gives the known dependence structure, if any;
    score judges finished decodes item by item and summarize a set of them."""

    name: str  # "sudoku", "protein", "family": the CLI's and the app's key
    # this domain's sampler defaults over the registry's ({"eb": {"gamma": 8.0}, ...}): budgets in
    # nats scale with the entropies, which differ by domain (samplers.config_for)
    sampler_defaults: dict[str, dict]
    # columns of score()'s rows that a sweep's saved rows (--save-rows) leave out because the row's
    # index recovers them: the input (item i of the inputs) and the output (decoding is deterministic)
    unsaved_columns: tuple[str, ...]
    # the temperature a decode starts at in the CLI and the app: 0 (argmax) where an input has one
    # answer (Sudoku), 1 where outputs are sampled (argmax would write the consensus, or repeats)
    default_temperature: float

    @property
    def default_model(self) -> Any: ...  # the shipped backbone's checkpoint path (sweeps fingerprint it)

    def load_model(self, spec: Any = None, device: str = "cpu") -> Any: ...  # a MaskedModel

    # path of the shipped MI head for the default model, or None; a domain with several backbones may take
    # default_head(spec), the backbone as load_model takes it (models.head_path passes it when given)
    def default_head(self) -> Any: ...

    def encode(self, items: list) -> torch.Tensor: ...  # user inputs -> (B, L) starting tokens

    def decode(self, tokens: torch.Tensor) -> list: ...  # (B, L) tokens -> user-facing objects

    def groups(self, items: list) -> list[list[int]]: ...  # indices of the inputs that share a length

    def relations(self, length: int) -> tuple[np.ndarray, tuple[str, ...]] | None:
        """(L, L) int codes (0 = no known relation) and a name per code, or None (none known)."""
        ...

    def score(self, items: list, final: torch.Tensor) -> list[dict]:
        """One row per decoded item (B rows) from its input and its final (B, L) tokens."""
        ...

    def summarize(self, rows: list[dict]) -> dict: ...  # set-level columns of a benchmark's summary

    def judge(self, model: Any, reference: Any = None) -> Callable[[list[dict]], dict]:
        """A scorer of decoded sets: score()'s rows -> the set's columns that need a model or a
        reference (the JSD to natural proteins, a family's pair statistics, an infill's pseudo-
        log-likelihood). Built once (a reference is embedded once), called per set by the CLI, the
        sweeps and the app alike: no view scores a set itself."""
        ...


class AppDomain(Domain, Protocol):
    """What the app's pages read from a domain beyond the core's contract: the mask token, the
    values' display names and a position's name (mypy checks every shipped domain against it)."""

    mask_id: int
    value_names: tuple[str, ...]

    def position_name(self, i: int, length: int = ...) -> str: ...


class ConfiguredModel:
    """What a backbone built from a size config exposes to the core (MaskedModel's d_model and
    n_layers, read from its config) and to the reports (its parameter count). A mixin beside
    nn.Module."""

    config: Any

    @property
    def d_model(self) -> int:
        return self.config.d_model

    @property
    def n_layers(self) -> int:
        return self.config.n_layers

    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())  # type: ignore[attr-defined]


def check_sizes(config: Any) -> None:
    """A transformer size config's invariants, by name: positive sizes, heads dividing the width."""
    for k in ("d_model", "n_heads", "n_layers"):
        if int(getattr(config, k)) <= 0:
            raise ValueError(f"{k} must be positive")
    if config.d_model % config.n_heads:
        raise ValueError(f"d_model {config.d_model} is not divisible by n_heads {config.n_heads}")
