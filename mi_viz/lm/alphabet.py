"""What a domain's tokens mean to a masked LM: the value letters, in the order of the core's value
token ids, and the core's MASK and PAD ids. A domain declares one (proteins: ESM-C's ids for the 20
amino acids; a DNA toy: its 4 bases) and the loader maps it onto the LM's own vocabulary."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Alphabet:
    letters: str  # the values, in the order of value_ids ("LAGV...", "ACGT")
    value_ids: tuple[int, ...]  # the core's token id of each letter
    mask: int  # the core's MASK id
    pad: int  # the core's PAD id (right padding of rows of unequal length)

    def __post_init__(self):
        if len(self.letters) != len(self.value_ids) or len(set(self.letters)) != len(self.letters):
            raise ValueError(f"an alphabet needs one distinct letter a value id: {self.letters!r}, {self.value_ids}")
        if {self.mask, self.pad} & set(self.value_ids) or self.mask == self.pad:
            raise ValueError("MASK, PAD and the value ids must be distinct")

    @property
    def value_tokens(self) -> torch.Tensor:
        """(V,) the value ids as a tensor (what a backbone's value_tokens holds)."""
        return torch.tensor(self.value_ids)
