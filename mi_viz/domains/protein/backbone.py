"""ESM-C backbones behind the masked-model protocol: our small one, and ESM-C 300M.

Both are ESM-C's network (EvolutionaryScale's esm package: `esm.models.esmc.ESMC`, built here
from esm's own blocks, ESMCCore, with the same state dict): the small one is
built with a small d_model / depth and trained by training/train_protein_mdm.py; ESM-C
300M is d_model 960, 15 heads, 30 layers with the released weights. The core sees a
protein as (B, L) residue tokens (alphabet.py); this wrapper adds BOS / EOS, runs ESMC,
and returns logits restricted to the 20 amino acids and the final hidden states of the
residues only, so nothing outside the 20 standard amino acids can ever be decoded.

ESM-C 300M's weights are never downloaded unless the caller asks (allow_download): they
are read from a file the user names or from the local Hugging Face cache (offline).
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn as nn

from ...core.attention import LAST, Site, check_site, softmax_weights
from ...core.checkpoints import CheckpointError, checkpoint_paths, load_module, load_state_strict, save_module
from ...core.errors import MissingFileError, UserError
from ...core.objective import masked_cross_entropy
from ...core.protocol import ConfiguredModel, ModelOutput, check_sizes
from .alphabet import BOS, EOS, FIRST_AA, MASK, PAD, VALUE_TOKENS

PROTEIN_MDM_KIND = "protein-mdm"
ESMC_300M = "esmc_300m"
ESMC_300M_REPO = "EvolutionaryScale/esmc-300m-2024-12"
ESMC_300M_FILE = "data/weights/esmc_300m_2024_12_v0.pth"  # inside the snapshot, as esm.pretrained reads it
GET_ESMC_300M = (
    "ESM-C 300M weights are not on this machine: download them once with "
    "`python -m mi_viz fetch-esmc` (Hugging Face, about 1.2 GB), or pass --backbone PATH/TO/"
    "esmc_300m_2024_12_v0.pth"
)


class BackboneUnavailable(UserError, RuntimeError):
    """An optional backbone whose weights are absent; the message says how to get them."""


@dataclass
class ProteinMDMConfig:
    d_model: int = 256  # ESMC width
    n_heads: int = 4  # ESMC attention heads (d_model / n_heads is the head width)
    n_layers: int = 4  # ESMC transformer blocks
    name: str = "esmc-small"  # what the app and the results call it

    def __post_init__(self):
        check_sizes(self)

    def to_dict(self):
        return asdict(self)


class ESMCCore(nn.Module):
    """esm.models.esmc.ESMC's network, built from esm's own blocks (esm.layers): the same modules
    under the same names, so the same state dict (ours, and ESM-C 300M's released weights) and
    the same forward pass without flash attention (tests/test_protein.py checks both against
    ESMC itself). Why not ESMC: importing esm.models.esmc pulls in transformers and biotite (the
    ESM3 structure and client code) for nothing a forward pass uses: seconds of start-up in the
    app, and 60 MB of wheels a GPU lease cannot carry."""

    def __init__(self, d_model: int, n_heads: int, n_layers: int):
        super().__init__()
        from esm.layers.regression_head import RegressionHead
        from esm.layers.transformer_stack import TransformerStack

        self.embed = nn.Embedding(64, d_model)
        self.transformer = TransformerStack(d_model, n_heads, None, n_layers, n_layers_geom=0, use_flash_attn=False)
        self.sequence_head = RegressionHead(d_model, 64)

    def forward(self, sequence_tokens: torch.Tensor):
        """(B, T) tokens -> (logits (B, T, 64), final embeddings (B, T, D), hidden states (n_layers, B, T, D)),
        padding masked out of attention as ESMC does when no sequence_id is given."""
        x, _, hiddens = self.transformer(self.embed(sequence_tokens), sequence_id=sequence_tokens != PAD)
        return self.sequence_head(x), x, torch.stack(hiddens, 0)


class ESMCBackbone(nn.Module, ConfiguredModel):
    """An ESMC speaking the masked-model protocol over residue tokens (B, L)."""

    mask_id = MASK

    def __init__(self, config: ProteinMDMConfig):
        super().__init__()
        self.config = config
        # without flash attention: esm's blocks use scaled_dot_product_attention (CPU, any GPU)
        self.esmc = ESMCCore(config.d_model, config.n_heads, config.n_layers)
        self.register_buffer("value_tokens", VALUE_TOKENS.clone(), persistent=False)

    def with_specials(self, tokens: torch.Tensor) -> torch.Tensor:
        """(B, L) residues, PAD only at the end -> (B, L + 2): BOS, residues, EOS, then PAD."""
        B, L = tokens.shape
        n = (tokens != PAD).sum(1)  # (B,) residues per row
        x = torch.full((B, L + 2), PAD, dtype=torch.long, device=tokens.device)
        x[:, 0] = BOS
        x[:, 1 : L + 1] = tokens
        x[torch.arange(B, device=tokens.device), n + 1] = EOS
        return x

    def esmc_logits(self, tokens: torch.Tensor, hidden_layers: tuple[int, ...] = ()):
        """ESMC on (B, L) residues -> its 20-way logits (B, L, 20), final hidden (B, L, D) and
        {block: (B, L, D)} for the blocks asked for; BOS / EOS stripped."""
        logits, emb, hidden = self.esmc(self.with_specials(tokens))
        vt = torch.as_tensor(self.value_tokens)
        v0, v1 = int(vt[0]), int(vt[-1]) + 1
        layers = {i: hidden[i][:, 1:-1] for i in hidden_layers}  # type: ignore[index]  # hidden: (n_layers, B, T, D)
        return logits[:, 1:-1, v0:v1], emb[:, 1:-1], layers  # (B, L, 20): the 20 standard amino acids only

    def attention_shape(self) -> tuple[int, int]:
        blocks = self.esmc.transformer.blocks
        return len(blocks), blocks[0].attn.n_heads

    def attention_probe(self, site: Site = LAST):
        """The site's attention module (the last block's by default), and its weights (B, L, L; the
        heads averaged, or one head's) over the residues (BOS / EOS dropped), recomputed as esm's
        MultiHeadAttention forms them: the QKV projection, q / k LayerNorms, rotary, the sequence-id
        mask (core.attention.recording)."""
        check_site(site, *self.attention_shape())
        m = self.esmc.transformer.blocks[site.layer].attn

        def weights(args, kwargs):
            x, seq_id = args  # (B, T, D), (B, T) bool
            q, k, _ = torch.chunk(m.layernorm_qkv(x), 3, dim=-1)
            q, k = m._apply_rotary(m.q_ln(q).to(q.dtype), m.k_ln(k).to(q.dtype))
            B, T, D = q.shape
            q, k = (t.view(B, T, m.n_heads, D // m.n_heads).transpose(1, 2) for t in (q, k))  # (B, H, T, Dh)
            allowed = None if seq_id is None else (seq_id.unsqueeze(-1) == seq_id.unsqueeze(-2)).unsqueeze(1)
            return softmax_weights(q, k, allowed, head=site.head)[:, 1:-1, 1:-1]

        return m, weights

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """(B, L) residues -> 20-way logits (B, L, 20): what training (and DDP) calls."""
        return self.esmc_logits(tokens)[0]

    def forward_tokens(self, tokens: torch.Tensor, hidden_layers: tuple[int, ...] = ()) -> ModelOutput:
        for i in hidden_layers:
            if not 0 <= i < self.config.n_layers:
                raise ValueError(
                    f"hidden layer {i} does not exist: the backbone has blocks 0..{self.config.n_layers - 1}"
                )
        logits, hidden, layers = self.esmc_logits(tokens, tuple(hidden_layers))
        return ModelOutput(logits=logits, hidden=hidden, layers=layers)

    @torch.no_grad()
    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        """Mean-pooled final hidden states over the residues (PAD excluded): (B, L) -> (B, D).
        The embedding the paper's k-means JSD clusters."""
        _, h, _ = self.esmc_logits(tokens)
        keep = (tokens != PAD).float()[..., None]  # (B, L, 1)
        return (h.float() * keep).sum(1) / keep.sum(1).clamp_min(1)


def masked_lm_loss(
    model: ESMCBackbone, x0: torch.Tensor, generator: torch.Generator | None = None, mask_ratio: float | None = None
) -> tuple[torch.Tensor, int]:
    """The MDM objective on proteins: per sequence t ~ U(0, 1) (or a fixed mask_ratio), each
    residue masked with probability t, cross-entropy over the 20 amino acids on the masked
    residues. x0 (B, L) residue tokens, PAD at the end of short rows. Returns (mean CE over
    masked residues, number of masked residues). Generation starts all-masked and ends nearly
    clean, so every ratio matters: no 1/t weighting (it would put most weight on clean rows)."""
    target = (x0 - FIRST_AA).clamp(0, len(VALUE_TOKENS) - 1)  # (B, L) class 0..19
    return masked_cross_entropy(model, x0, x0 != PAD, target, MASK, generator, mask_ratio)  # model may be DDP


# --------------------------------------------------------------------------- checkpoints


def save_protein_mdm(path, model: ESMCBackbone, step: int = 0, metrics: dict | None = None, extra: dict | None = None):
    return save_module(path, model, PROTEIN_MDM_KIND, step, metrics, extra)


def load_protein_mdm(path, device: str = "cpu") -> tuple[ESMCBackbone, dict]:
    """Our small backbone from its checkpoint, loaded strictly (optimizer state 'opt.' ignored)."""
    return load_module(path, PROTEIN_MDM_KIND, ProteinMDMConfig, ESMCBackbone, device, ignore_prefix="opt.")


ESMC_300M_CONFIG = ProteinMDMConfig(d_model=960, n_heads=15, n_layers=30, name=ESMC_300M)


def esmc_300m_weights(allow_download: bool = False) -> Path:
    """The released weights file in the local Hugging Face cache (offline), or, with
    allow_download, after fetching the snapshot. BackboneUnavailable when absent."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        root = snapshot_download(
            ESMC_300M_REPO,
            local_files_only=not allow_download,
            allow_patterns=[ESMC_300M_FILE],
            cache_dir=os.environ.get("HF_HUB_CACHE"),
        )  # the env as it is now, not at import
    except LocalEntryNotFoundError:
        raise BackboneUnavailable(GET_ESMC_300M) from None
    p = Path(root) / ESMC_300M_FILE
    if not p.exists():
        raise BackboneUnavailable(GET_ESMC_300M)
    return p


def load_esmc_300m(
    weights: str | os.PathLike | None = None, device: str = "cpu", allow_download: bool = False
) -> ESMCBackbone:
    """ESM-C 300M behind the protocol, from `weights` (the released .pth file) or the local
    Hugging Face cache. The file is read with torch.load(weights_only=True): tensors only,
    no code is ever unpickled. Loaded strictly: missing / unexpected keys are named."""
    path = Path(weights) if weights is not None else esmc_300m_weights(allow_download)
    if not path.exists():
        raise BackboneUnavailable(f"no ESM-C 300M weights at {path}. " + GET_ESMC_300M)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # a truncated / foreign file: say which
        raise CheckpointError(f"{path} is not a readable ESM-C weights file ({type(e).__name__}: {e})") from None
    if not isinstance(state, dict):
        raise CheckpointError(f"{path} does not hold a state dict")
    model = ESMCBackbone(ESMC_300M_CONFIG)
    load_state_strict(model.esmc, state, where=f"ESM-C 300M weights {path}")
    return model.to(device).eval()


def weights_file(spec: str | os.PathLike) -> Path:
    """The file holding a backbone's weights, for fingerprints: 'esmc_300m' (the local cache;
    BackboneUnavailable if absent), a .pth file, or one of our checkpoints' .safetensors."""
    s = str(spec)
    if s == ESMC_300M:
        return esmc_300m_weights()
    p = Path(s) if s.endswith(".pth") else checkpoint_paths(s)[0]
    if not p.exists():
        raise MissingFileError(f"backbone weights not found: {p}")
    return p


def load_backbone(spec: str | os.PathLike, device: str = "cpu", allow_download: bool = False) -> ESMCBackbone:
    """A backbone by name or path: 'esmc_300m' (local cache), a .pth file (ESM-C 300M
    weights), or one of our checkpoints (NAME, NAME.json or NAME.safetensors)."""
    s = str(spec)
    if s == ESMC_300M:
        return load_esmc_300m(device=device, allow_download=allow_download)
    if s.endswith(".pth"):
        return load_esmc_300m(s, device=device)
    return load_protein_mdm(s, device=device)[0]
