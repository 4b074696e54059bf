"""The protein alphabet: the 20 standard amino acids in ESM-C's token ids.

Tokens are ESM-C's own (esm.tokenization.EsmSequenceTokenizer), so that a sequence
means the same thing to our small backbone and to ESM-C 300M: 0 BOS (`<cls>`), 1 PAD,
2 EOS, 32 MASK, and ids 4..23 the amino acids in the order of AMINO_ACIDS. The core
sees a protein of length L as (L,) residue tokens: BOS / EOS are added by the backbone
(backbone.py), never by the decoder, so they can never be candidates.
"""

from __future__ import annotations

import torch

from ...core.errors import UserError
from ...lm.alphabet import Alphabet

AMINO_ACIDS = "LAGVSERTIDPKQNFYMHWC"  # ESM-C ids 4..23, in this order
BOS, PAD, EOS, MASK = 0, 1, 2, 32
FIRST_AA = 4
VALUE_TOKENS = torch.arange(FIRST_AA, FIRST_AA + len(AMINO_ACIDS))  # (20,)
MASK_CHARS = "_"  # how a masked position is written in a prompt
MAX_LENGTH = 512  # the longest protein the app and the CLI accept (the training data's cap)

_TO_ID = {a: FIRST_AA + k for k, a in enumerate(AMINO_ACIDS)}


class SequenceError(UserError, ValueError):
    """A protein sequence or prompt that cannot be used; the message says what and where."""


def clean(text: str) -> str:
    """Upper case, whitespace removed (a pasted sequence may wrap)."""
    return "".join(str(text).split()).upper()


def encode(text: str, allow_mask: bool = False, max_length: int = MAX_LENGTH) -> torch.Tensor:
    """A sequence (or, with allow_mask, a prompt with '_' for masked positions) -> (L,) tokens.

    Raises SequenceError naming every letter outside the 20 standard amino acids and its
    1-based positions, an empty input, or a length past max_length."""
    s = clean(text)
    if not s:
        raise SequenceError("the sequence is empty")
    if len(s) > max_length:
        raise SequenceError(f"the sequence has {len(s)} residues; the limit is {max_length}")
    bad: dict[str, list[int]] = {}
    for k, ch in enumerate(s):
        if ch not in _TO_ID and not (allow_mask and ch in MASK_CHARS):
            bad.setdefault(ch, []).append(k + 1)
    if bad:
        parts = [
            f"{ch!r} at position{'s' if len(p) > 1 else ''} {', '.join(map(str, p[:5]))}{' ...' if len(p) > 5 else ''}"
            for ch, p in bad.items()
        ]
        allowed = f"the 20 standard amino acids ({AMINO_ACIDS})" + (
            " or '_' for a masked position" if allow_mask else ""
        )
        raise SequenceError(f"not {allowed}: " + "; ".join(parts))
    return torch.tensor([MASK if ch in MASK_CHARS else _TO_ID[ch] for ch in s], dtype=torch.long)


def decode(tokens) -> str:
    """(L,) tokens -> a string; MASK as '_' (any other non-residue token is an error)."""
    out = []
    for t in torch.as_tensor(tokens).tolist():
        if t == MASK:
            out.append("_")
        elif FIRST_AA <= t < FIRST_AA + len(AMINO_ACIDS):
            out.append(AMINO_ACIDS[t - FIRST_AA])
        else:
            raise SequenceError(f"token {t} is not an amino acid or MASK")
    return "".join(out)


def masked_of_length(length: int, max_length: int = MAX_LENGTH) -> torch.Tensor:
    """The all-masked start of an unconditional decode: (L,) MASK."""
    if not 1 <= length <= max_length:
        raise SequenceError(f"length must be 1..{max_length}, got {length}")
    return torch.full((length,), MASK, dtype=torch.long)


# what a pretrained masked LM is loaded over (mi_viz.lm: the loader names no alphabet of its own)
PROTEIN_ALPHABET = Alphabet(AMINO_ACIDS, tuple(int(t) for t in VALUE_TOKENS), MASK, PAD)
