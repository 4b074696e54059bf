"""Antibody chains on disk: a TSV (gzip optional) of id, chain type, V and J genes, the CDR3
junction and the V domain; or a user's FASTA / pasted chains, numbered on reading."""

from __future__ import annotations

import csv
import gzip
import io
from pathlib import Path

from ..protein.alphabet import SequenceError, clean, encode
from ..protein.fasta import parse_fasta
from .recombination import Chain

COLUMNS = ("id", "chain", "v_gene", "j_gene", "junction", "sequence")


def write_chains(path, records: list[tuple[str, Chain]]) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO()
    w = csv.writer(buf, delimiter="\t", lineterminator="\n")
    w.writerow(COLUMNS)
    for rid, c in records:
        w.writerow((rid, c.chain, c.v_gene, c.j_gene, c.junction, c.sequence))
    data = buf.getvalue().encode()
    p.write_bytes(gzip.compress(data, mtime=0) if p.suffix == ".gz" else data)
    return p


def read_chains(path) -> list[tuple[str, Chain]]:
    """[(id, Chain)] from a chains TSV (.tsv or .tsv.gz)."""
    p = Path(path)
    raw = p.read_bytes()
    text = (gzip.decompress(raw) if p.suffix == ".gz" else raw).decode()
    rows = list(csv.DictReader(io.StringIO(text), delimiter="\t"))
    return [(r["id"], Chain(r["sequence"], r["junction"], r["chain"], r["v_gene"], r["j_gene"])) for r in rows]


def read_user_chains(text: str, check: bool = True) -> list[tuple[str, str]]:
    """[(id, chain)] from FASTA text or one chain a line; with check, every chain's letters checked
    (nucleotides named: SequenceError at the first bad chain); without, each is checked where it is
    infilled (a bench then skips the bad ones by name)."""
    text = text.strip()
    if not text:
        raise SequenceError("no chain given")
    recs = (
        parse_fasta(text)
        if text.startswith(">")
        else [(f"chain{k + 1}", clean(s)) for k, s in enumerate(text.splitlines()) if s.strip()]
    )
    for rid, s in recs if check else ():
        if set(s) <= set("ACGTUN"):
            raise SequenceError(f"{rid} reads as nucleotides: give the amino-acid chain")
        try:
            encode(s)
        except SequenceError as e:
            raise SequenceError(f"{rid}: {e}") from None
    return recs
