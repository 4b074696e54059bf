"""Pretrained masked language models that more than one domain reads (proteins, antibodies, a DNA
toy): a Hugging Face masked LM on disk, AntiBERTy's and Sapiens' wheels. Each is loaded over the
alphabet the domain names (`Alphabet`: its value letters and the token ids the core uses for them,
MASK and PAD); the loader itself knows no alphabet, and checks the LM's tokenizer has every letter."""

from .alphabet import Alphabet

__all__ = ["Alphabet"]
