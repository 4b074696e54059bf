"""FASTA in and out, through Biopython (Bio.SeqIO), with errors a user can act on."""

from __future__ import annotations

import io
import lzma
from pathlib import Path

from ...core.paths import open_text
from .alphabet import SequenceError, clean, encode


def _open(path):
    p = Path(path)
    if not p.exists():
        raise SequenceError(f"FASTA file not found: {p}")
    return open_text(p)  # .xz: the packed training split a GPU lease carries (training/pack_protein_split.py)


def parse_fasta(text: str) -> list[tuple[str, str]]:
    """FASTA text -> [(id, sequence)], sequences cleaned (upper case, no whitespace).
    Raises SequenceError when the text holds no record (for instance, no '>' header)."""
    from Bio import SeqIO

    if not text.lstrip().startswith(">"):
        raise SequenceError("no FASTA record found (a record starts with a '>' header line)")
    try:
        records = [(r.id, clean(str(r.seq))) for r in SeqIO.parse(io.StringIO(text), "fasta")]
    except (ValueError, UnicodeDecodeError) as e:
        raise SequenceError(f"not readable as FASTA ({e})") from None
    if not records:
        raise SequenceError("no FASTA record found (a record starts with a '>' header line)")
    return records


def read_fasta(path, validate: bool = True) -> list[tuple[str, str]]:
    """[(id, sequence)] from a FASTA file (.gz and .xz read transparently). With validate, a
    sequence outside the 20 standard amino acids raises SequenceError naming its record."""
    try:
        with _open(path) as f:
            records = parse_fasta(f.read())
    except (OSError, UnicodeDecodeError, EOFError, lzma.LZMAError) as e:
        raise SequenceError(f"{path} is not a readable FASTA file ({e})") from None
    if validate:
        for rid, seq in records:
            try:
                encode(seq)
            except SequenceError as e:
                raise SequenceError(f"{path}, record {rid}: {e}") from None
    return records


def write_fasta(path, records, width: int = 80) -> Path:
    """Write [(id, sequence)] as FASTA (lines of `width` residues)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with open(p, "w", encoding="utf-8") as f:
        for rid, seq in records:
            f.write(f">{rid}\n")
            for k in range(0, len(seq), width):
                f.write(seq[k : k + width] + "\n")
    return p
