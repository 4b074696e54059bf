"""A family backbone: ESM-C's network (esm's blocks, as the small protein backbone) trained with
the masked-diffusion objective on one family's aligned rows, the gap a token of its own.

Tokens are ESM-C's ids (amino acids 4..23, the gap '-' 30, MASK 32), so the protein pages
and the core read a family row as they read a protein; the logits are restricted to those
21 ids. Every row has the alignment's width: no padding, no crop.

The checkpoint is self-describing: besides the network's config, its JSON `extra` names the
family, the alignment it was trained on (file name, sha256 of its rows), the split (seed,
identity, held-out share) so that the held-out rows can be recomputed from the same file,
and the contact map shipped beside it (NAME.contacts.json.gz; a training run writes NAME.contacts.json).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import torch
import torch.nn as nn

from ...core.checkpoints import load_module, save_module
from ...core.objective import masked_cross_entropy
from ...core.protocol import check_sizes
from ..protein.alphabet import MASK, PAD
from ..protein.backbone import ESMCBackbone, ESMCCore
from .alignment import TOKEN_OF_VALUE, Q

FAMILY_MDM_KIND = "family-mdm"

VALUE_OF_TOKEN = torch.full((64,), -1, dtype=torch.long)  # ESM-C id -> value index 0..20 (-1: none)
VALUE_OF_TOKEN[TOKEN_OF_VALUE] = torch.arange(Q)


@dataclass
class FamilyMDMConfig:
    d_model: int = 128  # ESMC width
    n_heads: int = 4  # ESMC attention heads
    n_layers: int = 4  # ESMC transformer blocks
    width: int = 0  # the alignment's columns (every row has this length)
    family: str = ""  # e.g. "PF00595"
    name: str = "esmc-family"
    column_embedding: bool = True  # a learned embedding per alignment column, added to the token's (see FamilyCore)

    def __post_init__(self):
        check_sizes(self)
        if self.width < 0:
            raise ValueError("width must be >= 0")

    def to_dict(self):
        return asdict(self)


class FamilyCore(ESMCCore):
    """ESMCCore plus a learned embedding per position (BOS, the alignment's columns, EOS).

    Why: in an alignment a position *is* a column with its own role (a core residue, a loop,
    a binding site), and pairwise couplings are between columns. ESM-C's rotary attention
    only sees relative offsets, so every column's identity has to be inferred from its
    distance to BOS; with a column embedding the network can key its attention on columns
    directly, as a Potts model's couplings do (docs/results-family.md has the ablation)."""

    def __init__(self, d_model: int, n_heads: int, n_layers: int, width: int):
        super().__init__(d_model, n_heads, n_layers)
        self.column = nn.Embedding(width + 2, d_model)

    def forward(self, sequence_tokens: torch.Tensor):
        T = sequence_tokens.shape[1]
        x = self.embed(sequence_tokens) + self.column.weight[:T]
        x, _, hiddens = self.transformer(x, sequence_id=sequence_tokens != PAD)
        return self.sequence_head(x), x, torch.stack(hiddens, 0)


class FamilyBackbone(ESMCBackbone):
    """ESMCBackbone over aligned rows (B, L): logits over the 20 amino acids and the gap."""

    def __init__(self, config: FamilyMDMConfig):
        super().__init__(config)  # type: ignore[arg-type]  # the same fields ESMCBackbone reads, and more
        if config.column_embedding:
            if config.width <= 0:
                raise ValueError("a column embedding needs the alignment's width")
            self.esmc = FamilyCore(config.d_model, config.n_heads, config.n_layers, config.width)
        self.value_tokens = TOKEN_OF_VALUE.clone()

    def esmc_logits(self, tokens: torch.Tensor, hidden_layers: tuple[int, ...] = ()):
        logits, emb, hidden = self.esmc(self.with_specials(tokens))
        layers = {i: hidden[i][:, 1:-1] for i in hidden_layers}
        return logits[:, 1:-1][..., self.value_tokens], emb[:, 1:-1], layers  # (B, L, 21)


def to_tokens(values) -> torch.Tensor:
    """Value indices (..., L) (0..20; -1 = masked) -> ESM-C token ids."""
    v = torch.as_tensor(values, dtype=torch.long)
    return torch.where(v < 0, torch.full_like(v, MASK), TOKEN_OF_VALUE[v.clamp_min(0)])


def to_values(tokens) -> torch.Tensor:
    """ESM-C token ids (..., L) -> value indices (MASK -> -1)."""
    t = torch.as_tensor(tokens, dtype=torch.long)
    return torch.where(t == MASK, torch.full_like(t, -1), VALUE_OF_TOKEN[t.clamp(0, 63)])


def family_lm_loss(
    model, x0: torch.Tensor, generator: torch.Generator | None = None, mask_ratio: float | None = None
) -> tuple[torch.Tensor, int]:
    """The MDM objective on aligned rows: per row t ~ U(0, 1) (or a fixed mask_ratio), each
    column masked with probability t (at least one), cross-entropy over the 21 symbols on the
    masked columns. x0 (B, L) tokens. Returns (mean CE over masked columns, their count).
    No 1/t weighting, as for the protein backbone: generation starts all-masked, every ratio counts."""
    target = VALUE_OF_TOKEN.to(x0.device)[x0]  # (B, L) class 0..20
    return masked_cross_entropy(model, x0, torch.ones_like(x0, dtype=torch.bool), target, MASK, generator, mask_ratio)


def save_family_mdm(path, model: FamilyBackbone, step: int = 0, metrics: dict | None = None, extra: dict | None = None):
    return save_module(path, model, FAMILY_MDM_KIND, step, metrics, extra)


def load_family_mdm(path, device: str = "cpu") -> tuple[FamilyBackbone, dict]:
    """A family backbone and its checkpoint metadata, loaded strictly (optimizer state 'opt.' ignored)."""
    return load_module(path, FAMILY_MDM_KIND, FamilyMDMConfig, FamilyBackbone, device, ignore_prefix="opt.")


def masked_rows(rows: np.ndarray, n: int, seed: int) -> torch.Tensor:
    """n of the rows (the held-out ones: the MI report's and attention_vs_mi's states), each masked
    at a ratio ~ U(0.05, 0.95) (>= 2 masked): (n, L) tokens."""
    g = np.random.default_rng(seed)
    L = rows.shape[1]
    x = to_tokens(rows[g.integers(0, len(rows), n)])
    for s in range(n):
        m = np.asarray(g.random(L) < g.uniform(0.05, 0.95))
        m[g.choice(L, 2, replace=False)] = True
        x[s, torch.as_tensor(m)] = MASK
    return x
