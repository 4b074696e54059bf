"""A bidirectional transformer over the 81 Sudoku cells: the masked diffusion model.

Tokens 0..8 are the digits 1..9, token 9 is MASK. The model sees only token and
position embeddings: no row / column / box features, so that whatever rule
structure the MI maps show was learned, not told. Read top to bottom like
nanoGPT's model.py.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from ...core.attention import LAST, Site, check_site, softmax_weights
from ...core.checkpoints import load_module, save_module
from ...core.objective import random_mask
from ...core.protocol import ConfiguredModel, ModelOutput

MASK_TOKEN = 9
N_VALUES = 9
N_CELLS = 81


@dataclass
class MDMConfig:
    n_layers: int = 6  # transformer blocks (esm's names: n_layers, n_heads)
    n_heads: int = 4  # attention heads; d_model must divide evenly
    d_model: int = 128  # width
    mlp_ratio: int = 4  # hidden width of the MLP, as a multiple of d_model
    dropout: float = 0.0
    seq_len: int = N_CELLS
    n_tokens: int = N_VALUES + 1  # 9 digits + MASK

    def __post_init__(self):
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model {self.d_model} is not divisible by n_heads {self.n_heads}")
        for k in ("n_layers", "n_heads", "d_model", "mlp_ratio", "seq_len"):
            if getattr(self, k) <= 0:
                raise ValueError(f"{k} must be positive")

    def to_dict(self):
        return asdict(self)


class Block(nn.Module):
    """Pre-LayerNorm transformer block with full (bidirectional) attention."""

    def __init__(self, c: MDMConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(c.d_model)
        self.qkv = nn.Linear(c.d_model, 3 * c.d_model)
        self.proj = nn.Linear(c.d_model, c.d_model)
        self.ln2 = nn.LayerNorm(c.d_model)
        self.fc = nn.Linear(c.d_model, c.mlp_ratio * c.d_model)
        self.fc_out = nn.Linear(c.mlp_ratio * c.d_model, c.d_model)
        self.n_head = c.n_heads
        self.dropout = c.dropout

    def forward(self, x):  # x (B, L, D)
        B, L, D = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(D, dim=2)
        q, k, v = (t.view(B, L, self.n_head, D // self.n_head).transpose(1, 2) for t in (q, k, v))  # (B, H, L, Dh)
        a = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0)
        x = x + self.proj(a.transpose(1, 2).reshape(B, L, D))
        return x + self.fc_out(F.gelu(self.fc(self.ln2(x))))


class SudokuMDM(nn.Module, ConfiguredModel):
    mask_id = MASK_TOKEN

    def __init__(self, config: MDMConfig):
        super().__init__()
        self.config = config
        c = config
        self.tok_emb = nn.Embedding(c.n_tokens, c.d_model)
        self.pos_emb = nn.Embedding(c.seq_len, c.d_model)
        self.blocks = nn.ModuleList([Block(c) for _ in range(c.n_layers)])
        self.ln_f = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, N_VALUES)
        self.register_buffer("value_tokens", torch.arange(N_VALUES), persistent=False)
        self.apply(self._init)
        for name, p in self.named_parameters():  # GPT-2 style scaled residual projections
            if name.endswith("proj.weight") or name.endswith("fc_out.weight"):
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * c.n_layers))

    @staticmethod
    def _init(m):
        # Token and position embeddings at the SAME scale: a throwaway probe measured
        # that std 0.02 positions next to std 1 tokens learn nothing for 2k+ steps.
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, 0.0, 0.02)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, 0.0, 0.02)

    def forward(self, tokens, keep: tuple[int, ...] = ()):
        """tokens (B, L) long -> logits (B, L, 9), hidden (B, L, D) [, {block: (B, L, D)} for block in keep]."""
        pos = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.tok_emb(tokens) + self.pos_emb(pos)[None]
        layers = {}
        for i, blk in enumerate(self.blocks):
            x = blk(x)
            if i in keep:
                layers[i] = x
        h = self.ln_f(x)
        return (self.head(h), h, layers) if keep else (self.head(h), h)

    def attention_shape(self) -> tuple[int, int]:
        return len(self.blocks), int(self.config.n_heads)

    def attention_probe(self, site: Site = LAST):
        """The site's block, and its attention (B, L, L; the heads averaged, or one head's) from that
        block's input (core.attention.recording)."""
        check_site(site, *self.attention_shape())
        blk = self.blocks[site.layer]

        def weights(args, kwargs):
            x = args[0]  # (B, L, D): the block's input
            B, L, D = x.shape
            q, k, _ = blk.qkv(blk.ln1(x)).split(D, dim=2)
            q, k = (t.view(B, L, blk.n_head, D // blk.n_head).transpose(1, 2) for t in (q, k))  # (B, H, L, Dh)
            return softmax_weights(q, k, head=site.head)

        return blk, weights

    def forward_tokens(self, tokens, hidden_layers: tuple[int, ...] = ()) -> ModelOutput:
        for i in hidden_layers:
            if not 0 <= i < len(self.blocks):
                raise ValueError(f"hidden layer {i} does not exist: the model has blocks 0..{len(self.blocks) - 1}")
        if not hidden_layers:
            logits, hidden = self(tokens)
            return ModelOutput(logits=logits, hidden=hidden)
        logits, hidden, layers = self(tokens, tuple(hidden_layers))
        return ModelOutput(logits=logits, hidden=hidden, layers=layers)


def boards_to_tokens(boards) -> torch.Tensor:
    """Boards (0 = blank, 1..9) -> tokens (B, 81): digit d -> d-1, blank -> MASK."""
    t = torch.as_tensor(boards, dtype=torch.long)
    return torch.where(t > 0, t - 1, torch.full_like(t, MASK_TOKEN))


def tokens_to_boards(tokens: torch.Tensor) -> torch.Tensor:
    """Tokens (B, 81) -> boards (B, 81), MASK -> 0."""
    return torch.where(tokens == MASK_TOKEN, torch.zeros_like(tokens), tokens + 1)


def mdm_loss(model, x0: torch.Tensor, generator: torch.Generator | None = None, weight_by_t: bool = False):
    """The MDM objective: t ~ U(0,1), mask each cell with prob. t, CE on masked cells.

    x0 (B, L) clean tokens. Returns the mean cross-entropy over masked cells
    (optionally weighted 1/t, the ELBO weighting; off by default because it
    puts most weight on nearly clean boards, which decoding rarely sees).
    """
    B, L = x0.shape
    masked, t = random_mask(torch.ones_like(x0, dtype=torch.bool), generator, min_t=1e-3)  # (B, L), (B, 1)
    xt = torch.where(masked, torch.full_like(x0, MASK_TOKEN), x0)
    logits, _ = model(xt)
    ce = F.cross_entropy(logits.float().reshape(-1, N_VALUES), x0.reshape(-1), reduction="none").view(B, L)
    w = masked.float() / t if weight_by_t else masked.float()
    return (ce * w).sum() / masked.sum()


MDM_KIND = "sudoku-mdm"


def save_mdm(path, model: SudokuMDM, step: int = 0, metrics: dict | None = None, extra: dict | None = None):
    return save_module(path, model, MDM_KIND, step, metrics, extra)


LEGACY_KEYS = {"n_layer": "n_layers", "n_head": "n_heads"}  # config names of checkpoints made before 0.4


def config_from(**c) -> MDMConfig:
    """An MDMConfig from a checkpoint's config, older names read as today's."""
    return MDMConfig(**{LEGACY_KEYS.get(k, k): v for k, v in c.items()})


def load_mdm(path, device: str = "cpu") -> tuple[SudokuMDM, dict]:
    """Build the MDM from the checkpoint's config and load its weights strictly."""
    return load_module(path, MDM_KIND, config_from, SudokuMDM, device, ignore_prefix="opt.")
