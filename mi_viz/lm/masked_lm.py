"""Any Hugging Face masked LM on disk as a backbone: AntiBERTy (shipped in its PyPI wheel), Sapiens,
an ESM-2 directory, a BERT saved with `save_pretrained` (a protein LM, or a DNA one).

The core sees a domain's sequences in that domain's alphabet (`Alphabet`: proteins ESM-C's ids, 20
amino acids, MASK, PAD), so every backbone of a domain reads the same tokens and every map means the
same thing. This wrapper translates those ids into the LM's own vocabulary (its tokenizer must have
every letter), adds the LM's special tokens around the residues (`[CLS] ... [SEP]` for BERT,
`<cls> ... <eos>` for ESM), and returns the LM's logits at the alphabet's letters only (B, L, V, in
alphabet order: nothing else can be decoded), the final hidden states the MI head reads, any block's
output, and its last block's attention (DAWN). The loader names no alphabet: the domain passes its own.

Nothing is downloaded: a directory is read with `local_files_only`. Weights are read strictly
(missing and unexpected keys named) from model.safetensors, or from pytorch_model.bin with
torch.load(weights_only=True), which unpickles tensors and plain containers only, never code.
Keys a directory carries for other heads than the masked LM's (AntiBERTy's species / chain /
graft classifiers and its pooler) are dropped by name (`extra_heads`), and said so.

    lm = load_masked_lm("/path/to/esm2_t6_8M_UR50D", PROTEIN)   # config.json, weights, tokenizer files
    lm = load_masked_lm("antiberty", PROTEIN)                 # the antiberty==0.1.3 wheel's own folder
"""

from __future__ import annotations

import importlib.util
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn as nn
from safetensors.torch import load_file

from ..core.attention import LAST, Site, check_site, softmax_weights
from ..core.checkpoints import CheckpointError
from ..core.errors import UserError
from ..core.protocol import ModelOutput
from .alphabet import Alphabet
from .sapiens import SAPIENS, build_sapiens, sapiens_weights

ANTIBERTY = "antiberty"
GET_ANTIBERTY = (
    "AntiBERTy is not installed: `pip install antiberty==0.1.3` (its wheel carries the weights; "
    "1.0.0 downloads them at first use instead), or run `make setup`"
)


class MaskedLMError(UserError, ValueError):
    """A directory that is not a usable masked LM; the message says what is missing."""


@dataclass(frozen=True)
class LMFiles:
    """Where a masked LM's parts are: its config.json folder, the weights file, and either a
    tokenizer folder (AutoTokenizer) or a BERT vocab.txt; the key prefixes of other heads."""

    config_dir: Path
    weights: Path
    tokenizer_dir: Path | None = None
    vocab: Path | None = None
    extra_heads: tuple[str, ...] = ()
    name: str = ""


def antiberty_files() -> LMFiles:
    """AntiBERTy inside the installed antiberty==0.1.3 package (never copied into the tree)."""
    spec = importlib.util.find_spec(ANTIBERTY)
    if spec is None or not spec.submodule_search_locations:
        raise MaskedLMError(GET_ANTIBERTY)
    root = Path(list(spec.submodule_search_locations)[0]) / "trained_models"
    ck = root / "AntiBERTy_md_smooth"
    if not (ck / "pytorch_model.bin").exists():
        raise MaskedLMError(f"antiberty is installed but carries no weights at {ck} (1.0.0?). " + GET_ANTIBERTY)
    # the classifiers AntiBERTy trained beside its masked LM, and BERT's pooler: not the MLM's
    extra = ("cls.species.", "cls.chain.", "cls.graft.", "bert.pooler.", "bert.embeddings.position_ids")
    return LMFiles(ck, ck / "pytorch_model.bin", vocab=root / "vocab.txt", extra_heads=extra, name=ANTIBERTY)


def directory_files(path: str | os.PathLike) -> LMFiles:
    """A save_pretrained directory: config.json, model.safetensors or pytorch_model.bin, tokenizer files."""
    d = Path(path)
    if not d.is_dir():
        raise MaskedLMError(f"{d} is not a directory (a masked LM is a folder: config.json, weights, tokenizer)")
    if not (d / "config.json").exists():
        raise MaskedLMError(f"{d} has no config.json: not a Hugging Face model folder")
    weights = next((d / n for n in ("model.safetensors", "pytorch_model.bin") if (d / n).exists()), None)
    if weights is None:
        raise MaskedLMError(f"{d} has no model.safetensors or pytorch_model.bin")
    toks = ("tokenizer_config.json", "vocab.txt", "tokenizer.json")
    if not any((d / n).exists() for n in toks):
        raise MaskedLMError(f"{d} has no tokenizer ({', '.join(toks)}): save it beside the model")
    extra = ("bert.pooler.",) if json.loads((d / "config.json").read_text()).get("model_type") == "bert" else ()
    return LMFiles(d, weights, tokenizer_dir=d, extra_heads=extra, name=d.name)


def _read_weights(path: Path) -> dict[str, torch.Tensor]:
    try:
        if path.suffix == ".safetensors":
            return load_file(str(path))
        state = torch.load(path, map_location="cpu", weights_only=True)  # tensors only: no code unpickled
    except Exception as e:  # a truncated or foreign file: say which
        raise CheckpointError(f"{path} is not a readable weights file ({type(e).__name__}: {e})") from None
    if not isinstance(state, dict):
        raise CheckpointError(f"{path} does not hold a state dict")
    return state


class MaskedLMBackbone(nn.Module):
    """A transformers masked LM speaking the masked-model protocol over a domain's alphabet."""

    def __init__(self, lm: Any, tokenizer, alphabet: Alphabet, name: str = ""):
        super().__init__()
        self.lm = lm.eval()
        self.name = name
        self.alphabet = alphabet
        self.mask_id = alphabet.mask
        letters, values, MASK, PAD = alphabet.letters, alphabet.value_tokens, alphabet.mask, alphabet.pad
        cfg = lm.config
        self.d_model, self.n_layers = int(cfg.hidden_size), int(cfg.num_hidden_layers)
        # residues a row may hold: the positions less the two special tokens (and RoBERTa's positions
        # start after its padding index: pad + 1 more are never a token's)
        offset = int(cfg.pad_token_id) + 1 if getattr(cfg, "model_type", "") == "roberta" else 0
        self.max_length = int(getattr(cfg, "max_position_embeddings", 1026)) - 2 - offset
        vocab = tokenizer.get_vocab()
        missing = [a for a in letters if a not in vocab]
        if missing:
            raise MaskedLMError(f"the tokenizer has no token for {', '.join(missing)}: not an LM of this alphabet")
        if tokenizer.mask_token_id is None or tokenizer.pad_token_id is None:
            raise MaskedLMError("the tokenizer has no mask (or pad) token: not a masked LM")
        lookup = torch.full((max(int(values.max()), MASK, PAD) + 16,), tokenizer.unk_token_id or 0, dtype=torch.long)
        lookup[values] = torch.tensor([vocab[a] for a in letters])
        lookup[MASK], lookup[PAD] = tokenizer.mask_token_id, tokenizer.pad_token_id
        self.lookup: torch.Tensor
        self.register_buffer("lookup", lookup, persistent=False)  # our id -> the LM's id
        self.register_buffer("value_tokens", values.clone(), persistent=False)
        self.lm_values: torch.Tensor
        self.register_buffer("lm_values", lookup[values].clone(), persistent=False)  # (V,)
        one = tokenizer.build_inputs_with_special_tokens([int(lookup[values[0]])])
        at = one.index(int(lookup[values[0]]))
        self.prefix, self.suffix = one[:at], one[at + 1 :]  # e.g. [CLS] | [SEP]
        self.lm_pad = int(tokenizer.pad_token_id)

    @property
    def config(self):
        return self.lm.config

    def n_params(self) -> int:
        return sum(p.numel() for p in self.lm.parameters())

    def lm_tokens(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, L) alphabet ids, PAD only at the end -> (B, T) the LM's ids with its specials, and
        the (B, T) attention mask (1 on the specials and residues, 0 on padding)."""
        B, L = tokens.shape
        if L > self.max_length:
            raise UserError(f"length {L} is past this model's {self.max_length} residues")
        n = (tokens != self.alphabet.pad).sum(1)  # (B,) residues per row
        a, b = len(self.prefix), len(self.suffix)
        x = torch.full((B, a + L + b), self.lm_pad, dtype=torch.long, device=tokens.device)
        x[:, :a] = torch.tensor(self.prefix, device=tokens.device)
        x[:, a : a + L] = self.lookup[tokens]
        rows = torch.arange(B, device=tokens.device)
        for k, t in enumerate(self.suffix):
            x[rows, a + n + k] = t
        keep = torch.arange(a + L + b, device=tokens.device)[None] < (a + n + b)[:, None]
        return x, keep.long()

    def _run(self, tokens: torch.Tensor):
        x, keep = self.lm_tokens(tokens)
        out = self.lm(input_ids=x, attention_mask=keep, output_hidden_states=True)
        a, L = len(self.prefix), tokens.shape[1]
        return out.logits[:, a : a + L], [h[:, a : a + L] for h in out.hidden_states]

    def forward_tokens(self, tokens: torch.Tensor, hidden_layers: tuple[int, ...] = ()) -> ModelOutput:
        for i in hidden_layers:
            if not 0 <= i < self.n_layers:
                raise ValueError(f"hidden layer {i} does not exist: the backbone has blocks 0..{self.n_layers - 1}")
        logits, hs = self._run(tokens)  # (B, L, V_lm); hs[0] the embeddings, hs[i + 1] block i's output
        return ModelOutput(
            logits=logits[..., self.lm_values],  # (B, L, V) in alphabet order
            hidden=hs[-1],
            layers={i: hs[i + 1] for i in hidden_layers},
        )

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.forward_tokens(tokens).logits

    @torch.no_grad()
    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        """Mean-pooled final hidden states over the residues (PAD excluded): (B, L) -> (B, D)."""
        h = self._run(tokens)[1][-1]
        keep = (tokens != self.alphabet.pad).float()[..., None]  # (B, L, 1)
        return (h.float() * keep).sum(1) / keep.sum(1).clamp_min(1)

    def _attention_modules(self) -> list:
        return [m for m in self.lm.modules() if hasattr(m, "query") and hasattr(m, "key")]

    def attention_shape(self) -> tuple[int, int]:
        mods = self._attention_modules()
        return len(mods), mods[0].num_attention_heads

    def attention_probe(self, site: Site = LAST):
        """The site's self-attention module (the last block's by default) and its weights (B, L, L;
        the heads averaged, or one head's) over the residues, recomputed from that module's own query
        / key projections (rotary embeddings applied where the model has them, as ESM-2 does), the
        padding masked out."""
        check_site(site, *self.attention_shape())
        attn = self._attention_modules()[site.layer]
        a = len(self.prefix)

        def weights(args, kwargs):
            h = args[0] if args else kwargs["hidden_states"]  # (B, T, D)
            mask = args[1] if len(args) > 1 else kwargs.get("attention_mask")
            B, T, _ = h.shape
            H = attn.num_attention_heads
            q, k = (f(h).view(B, T, H, -1).transpose(1, 2) for f in (attn.query, attn.key))  # (B, H, T, Dh)
            if getattr(attn, "rotary_embeddings", None) is not None:
                q, k = attn.rotary_embeddings(q, k)
            allowed = None if mask is None else (mask > torch.finfo(mask.dtype).min / 2).expand(B, 1, T, T)
            w = softmax_weights(q, k, allowed, head=site.head)  # (B, T, T)
            L = T - a - len(self.suffix)
            return w[:, a : a + L, a : a + L]

        return attn, weights


def build_lm(files: LMFiles) -> tuple[nn.Module, object]:
    """The masked LM (built from its config, weights loaded strictly) and its tokenizer."""
    from transformers import AutoConfig, AutoModelForMaskedLM, AutoTokenizer, BertTokenizer
    from transformers import logging as hf_logging

    hf_logging.set_verbosity_error()
    try:
        config = AutoConfig.from_pretrained(files.config_dir, local_files_only=True)
        config.attn_implementation = "eager"
        lm = AutoModelForMaskedLM.from_config(config, attn_implementation="eager")
    except (ValueError, KeyError, OSError) as e:
        raise MaskedLMError(f"{files.config_dir} is not a masked LM transformers can build ({e})") from None
    try:
        tok = (
            BertTokenizer(str(files.vocab), do_lower_case=False)
            if files.vocab is not None
            else AutoTokenizer.from_pretrained(files.tokenizer_dir, local_files_only=True)
        )
    except (ValueError, OSError, TypeError) as e:
        raise MaskedLMError(f"cannot read the tokenizer of {files.config_dir} ({e})") from None
    state = _read_weights(files.weights)
    dropped = [k for k in state if k.startswith(files.extra_heads)] if files.extra_heads else []
    state = {k: v for k, v in state.items() if k not in set(dropped)}
    own = lm.state_dict()
    tied = _tied_names(lm)
    missing = sorted(k for k in set(own) - set(state) if k not in tied)
    unexpected = sorted(set(state) - set(own))
    shapes = [k for k in set(own) & set(state) if own[k].shape != state[k].shape]
    if missing or unexpected or shapes:
        raise CheckpointError(
            f"{files.weights} does not match the masked LM of {files.config_dir / 'config.json'}: "
            f"missing keys {missing[:8]}, unexpected keys {unexpected[:8]}, mis-shaped keys {sorted(shapes)[:8]}"
        )
    lm.load_state_dict(state, strict=False)  # every key checked above; tied weights follow their source
    lm.tie_weights()
    return lm.eval(), tok


def _tied_names(lm: nn.Module) -> set[str]:
    """Parameters that share storage with an earlier one (an output layer tied to the embeddings):
    a saved state dict may leave them out."""
    seen: dict[int, str] = {}
    tied = set()
    for name, p in lm.state_dict(keep_vars=True).items():
        ptr = p.data_ptr()
        if ptr in seen:
            tied.add(name)
        else:
            seen[ptr] = name
    return tied


_LOADED: dict[tuple, MaskedLMBackbone] = {}  # (spec, weights' mtime, device) -> the model: built once a process


def load_masked_lm(spec: str | os.PathLike, alphabet: Alphabet, device: str = "cpu") -> MaskedLMBackbone:
    """'antiberty' (the installed wheel), 'sapiens-vh' / 'sapiens-vl' (Sapiens' wheel), or a masked LM
    directory on disk, over the domain's alphabet; built once a process (a bench, its judge and its
    sweep share one model: they only read it), again only when its weights file changed."""
    weights = lm_weights(spec)
    key = (str(spec), alphabet, weights.stat().st_mtime_ns, str(device))
    if key not in _LOADED:
        _LOADED[key] = _build(spec, alphabet, device)
    return _LOADED[key]


def _build(spec: str | os.PathLike, alphabet: Alphabet, device: str) -> MaskedLMBackbone:
    if str(spec) in SAPIENS:
        lm, vocab = build_sapiens(str(spec))
        return MaskedLMBackbone(lm, vocab, alphabet, str(spec)).to(device).eval()
    files = antiberty_files() if str(spec) == ANTIBERTY else directory_files(spec)
    lm, tok = build_lm(files)
    return MaskedLMBackbone(lm, tok, alphabet, files.name).to(device).eval()


def lm_weights(spec: str | os.PathLike) -> Path:
    """The weights file of 'antiberty', a Sapiens model or a directory (what sweeps fingerprint)."""
    if str(spec) in SAPIENS:
        return sapiens_weights(str(spec))
    return (antiberty_files() if str(spec) == ANTIBERTY else directory_files(spec)).weights


def is_masked_lm(spec) -> bool:
    """'antiberty', a Sapiens model or a folder with a config.json: a spec load_masked_lm reads."""
    if spec is None:
        return False
    return str(spec) in (ANTIBERTY, *SAPIENS) or (Path(str(spec)) / "config.json").exists()
