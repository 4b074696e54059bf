"""Sapiens (BioPhi; Prihoda et al. 2022, mAbs 14:2020203; MIT): a second pretrained antibody masked LM,
heavy and light models, its weights inside PyPI's `sapiens==1.0.4` wheel.

Each model is a fairseq RoBERTa "small" (4 layers, 128 wide, 8 heads, FFN 256, 144 positions;
0.57 M parameters) trained on human OAS V domains (heavy: 20 M sequences; light: kappa and lambda
together). The wheel's `models/v1/checkpoint_vh.pt` / `checkpoint_vl.pt` are fairseq checkpoints:
pickles whose only non-tensor object is the training run's `argparse.Namespace`. They are read
with `torch.load(weights_only=True)` with that one class allowed by name (no code is unpickled),
and the fairseq state dict is mapped key by key onto `transformers`' RobertaForMaskedLM (the same
post-LayerNorm encoder, learned positions offset by the padding index, a dense-GELU-LayerNorm LM
head): every fairseq key must land and every RoBERTa key must be filled, except the one
RoBERTa has and fairseq does not (token-type embeddings, a single type: zeros). fairseq itself
is never imported (the package declares it; install Sapiens with `--no-deps`).
tests/test_antibody.py checks the logits against a forward written in plain torch from fairseq's
TransformerSentenceEncoder.

Tokens (fairseq's Dictionary): <s> 0, <pad> 1, </s> 2, <unk> 3, the 20 amino acids 4..23 in
dict.txt's order (A C D ... Y), <mask> 24; a chain reads `<s> residues </s>`.
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

import torch

from ..core.checkpoints import CheckpointError
from ..core.errors import UserError

SAPIENS = {"sapiens-vh": "checkpoint_vh.pt", "sapiens-vl": "checkpoint_vl.pt"}
GET_SAPIENS = (
    "Sapiens is not installed: `pip install --no-deps sapiens==1.0.4` (its wheel carries the weights; "
    "--no-deps: fairseq, which it declares, is never needed; 1.1.0 downloads its weights instead), or run `make setup`"
)
SPECIALS = ("<s>", "<pad>", "</s>", "<unk>")


class SapiensError(UserError, ValueError):
    """Sapiens is absent, or its files are not what this loader reads."""


def sapiens_dir() -> Path:
    """The installed wheel's models/v1 folder (the package is located, never imported: its
    __init__ imports fairseq)."""
    spec = importlib.util.find_spec("sapiens")
    if spec is None or not spec.submodule_search_locations:
        raise SapiensError(GET_SAPIENS)
    d = Path(list(spec.submodule_search_locations)[0]) / "models" / "v1"
    if not all((d / f).exists() for f in (*SAPIENS.values(), "dict.txt")):
        raise SapiensError(f"sapiens is installed but {d} lacks its checkpoints (1.1.0?). " + GET_SAPIENS)
    return d


def sapiens_weights(name: str) -> Path:
    if name not in SAPIENS:
        raise SapiensError(f"unknown Sapiens model {name!r}: choose {', '.join(SAPIENS)}")
    return sapiens_dir() / SAPIENS[name]


class FairseqVocab:
    """The few tokenizer methods MaskedLMBackbone reads, over fairseq's dictionary."""

    def __init__(self, symbols: list[str]):
        self.symbols = symbols
        self.index = {s: i for i, s in enumerate(symbols)}
        self.pad_token_id, self.unk_token_id, self.mask_token_id = (
            self.index["<pad>"],
            self.index["<unk>"],
            self.index["<mask>"],
        )

    def get_vocab(self) -> dict[str, int]:
        return dict(self.index)

    def build_inputs_with_special_tokens(self, ids: list[int]) -> list[int]:
        return [self.index["<s>"], *ids, self.index["</s>"]]


def read_checkpoint(path: Path) -> tuple[dict[str, torch.Tensor], argparse.Namespace]:
    """The fairseq checkpoint's model state and training arguments; only argparse.Namespace is allowed
    besides tensors and plain containers."""
    try:
        with torch.serialization.safe_globals([argparse.Namespace]):
            ck = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # a truncated or foreign file: say which
        raise CheckpointError(f"{path} is not a readable Sapiens checkpoint ({type(e).__name__}: {e})") from None
    if not isinstance(ck, dict) or "model" not in ck or "args" not in ck:
        raise CheckpointError(f"{path} is not a fairseq checkpoint (no 'model' and 'args')")
    return ck["model"], ck["args"]


def fairseq_to_roberta(state: dict[str, torch.Tensor], n_layers: int) -> dict[str, torch.Tensor]:
    """fairseq RoBERTa (decoder.sentence_encoder.*, decoder.lm_head.*) -> RobertaForMaskedLM's keys.
    CheckpointError names any fairseq key left without a place."""
    enc, out = "decoder.sentence_encoder.", {}
    names = {
        f"{enc}embed_tokens.weight": "roberta.embeddings.word_embeddings.weight",
        f"{enc}embed_positions.weight": "roberta.embeddings.position_embeddings.weight",
        f"{enc}emb_layer_norm.weight": "roberta.embeddings.LayerNorm.weight",
        f"{enc}emb_layer_norm.bias": "roberta.embeddings.LayerNorm.bias",
        "decoder.lm_head.dense.weight": "lm_head.dense.weight",
        "decoder.lm_head.dense.bias": "lm_head.dense.bias",
        "decoder.lm_head.layer_norm.weight": "lm_head.layer_norm.weight",
        "decoder.lm_head.layer_norm.bias": "lm_head.layer_norm.bias",
        "decoder.lm_head.weight": "lm_head.decoder.weight",
        "decoder.lm_head.bias": "lm_head.bias",
    }
    per_layer = {
        "self_attn.q_proj": "attention.self.query",
        "self_attn.k_proj": "attention.self.key",
        "self_attn.v_proj": "attention.self.value",
        "self_attn.out_proj": "attention.output.dense",
        "self_attn_layer_norm": "attention.output.LayerNorm",
        "fc1": "intermediate.dense",
        "fc2": "output.dense",
        "final_layer_norm": "output.LayerNorm",
    }
    for i in range(n_layers):
        for a, b in per_layer.items():
            for w in ("weight", "bias"):
                names[f"{enc}layers.{i}.{a}.{w}"] = f"roberta.encoder.layer.{i}.{b}.{w}"
    unplaced = sorted(set(state) - set(names))
    absent = sorted(set(names) - set(state))
    if unplaced or absent:
        raise CheckpointError(
            f"not the Sapiens RoBERTa layout: keys without a place {unplaced[:8]}, missing {absent[:8]}"
        )
    for a, b in names.items():
        out[b] = state[a].float()
    return out


def build_sapiens(name: str) -> tuple[torch.nn.Module, FairseqVocab]:
    """One Sapiens model (sapiens-vh or sapiens-vl) as a transformers RobertaForMaskedLM, loaded strictly."""
    from transformers import RobertaConfig, RobertaForMaskedLM

    path = sapiens_weights(name)
    state, args = read_checkpoint(path)
    residues = [line.split()[0] for line in (path.parent / "dict.txt").read_text().split("\n") if line.strip()]
    symbols = [*SPECIALS, *residues, "<mask>"]
    d, layers = int(args.encoder_embed_dim), int(args.encoder_layers)
    cfg = RobertaConfig(
        vocab_size=len(symbols),
        hidden_size=d,
        num_hidden_layers=layers,
        num_attention_heads=int(args.encoder_attention_heads),
        intermediate_size=int(args.encoder_ffn_embed_dim),
        max_position_embeddings=int(args.max_positions) + 2,  # fairseq offsets positions by the padding index
        type_vocab_size=1,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        layer_norm_eps=1e-5,  # fairseq's LayerNorm
        hidden_act=str(args.activation_fn),
        hidden_dropout_prob=float(args.dropout),
        attention_probs_dropout_prob=float(args.attention_dropout),
    )
    if getattr(args, "encoder_normalize_before", False):
        raise CheckpointError(f"{path}: a pre-LayerNorm encoder, which RobertaForMaskedLM is not")
    lm = RobertaForMaskedLM._from_config(cfg, attn_implementation="eager")  # eager: the attention DAWN reads
    if not torch.equal(state["decoder.lm_head.weight"], state["decoder.sentence_encoder.embed_tokens.weight"]):
        raise CheckpointError(f"{path}: its LM head is not tied to its token embeddings, as RoBERTa's is")
    mapped = fairseq_to_roberta(state, layers)
    if mapped["roberta.embeddings.word_embeddings.weight"].shape[0] != len(symbols):
        raise CheckpointError(f"{path}: {mapped['roberta.embeddings.word_embeddings.weight'].shape[0]} tokens, "
                              f"the dictionary {len(symbols)}")  # fmt: skip
    own = lm.state_dict()
    mapped["roberta.embeddings.token_type_embeddings.weight"] = torch.zeros_like(
        own["roberta.embeddings.token_type_embeddings.weight"]
    )  # fairseq has no token types: one type, adding nothing
    optional = {"lm_head.decoder.bias", "roberta.embeddings.position_ids"}  # tied to lm_head.bias; a buffer
    missing = sorted(set(own) - set(mapped) - optional)
    unexpected = sorted(set(mapped) - set(own))
    shapes = sorted(k for k in set(own) & set(mapped) if own[k].shape != mapped[k].shape)
    if missing or unexpected or shapes:
        raise CheckpointError(f"{path} -> RobertaForMaskedLM: missing {missing[:8]}, unexpected {unexpected[:8]}, "
                              f"mis-shaped {shapes[:8]}")  # fmt: skip
    lm.load_state_dict(mapped, strict=False)  # every key checked above
    lm.tie_weights()
    return lm.eval(), FairseqVocab(symbols)
