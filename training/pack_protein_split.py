"""The protein training split, whole, in the fewest bytes a GPU lease can carry.

    python training/pack_protein_split.py [--split train|val] [--limit N] [--out runs/gpu_carry/train.fasta.xz]

Rebuilt from the source corpus and the committed split (data/protein/splits.tsv.gz lists
every held-out id; every other unique record is train: training/make_protein_data.py), so
no MMseqs2 run is needed. Written as FASTA with the record ids, xz-compressed (lzma preset 6:
protein text is close to its ~4.2 bits per residue entropy, so nothing much smaller exists
short of a model); read back transparently by mi_viz.domains.protein.fasta (.xz). Prints a
one-line JSON: sequences, residues, bytes.
"""

from __future__ import annotations

import argparse
import gzip
import json
import lzma
from pathlib import Path

from mi_viz.core import strict_json
from mi_viz.domains.protein.fasta import read_fasta

ROOT = Path(__file__).resolve().parents[1]


def split_records(source: Path, splits: Path, split: str = "train") -> list[tuple[str, str]]:
    """One split of the unique sequences of the source (first record of each kept, as
    make_protein_data.py dedups): train is every id the committed split does not hold out."""
    with gzip.open(splits, "rt") as f:
        split_of = dict(line.split("\t")[::2] for line in f.read().splitlines()[1:])
    seen, out = set(), []
    for rid, seq in read_fasta(source, validate=False):
        if seq in seen:
            continue
        seen.add(seq)
        if split_of.get(rid, "train") == split:
            out.append((rid, seq))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fasta", default=str(ROOT.parent / "shared" / "data" / "swissprot_goa_2014.fasta.gz"))
    ap.add_argument("--splits", default=str(ROOT / "data" / "protein" / "splits.tsv.gz"))
    ap.add_argument("--split", choices=("train", "val", "test"), default="train")
    ap.add_argument("--limit", type=int, default=None, help="the first N sequences only (after the count check)")
    ap.add_argument("--expect", type=int, default=None, help="the split's size stats.json states (default: read it)")
    ap.add_argument("--out", default=str(ROOT / "runs" / "gpu_carry" / "train.fasta.xz"))
    a = ap.parse_args(argv)
    recs = split_records(Path(a.fasta), Path(a.splits), a.split)
    expect = a.expect
    if expect is None:
        stats = json.loads((Path(a.splits).parent / "stats.json").read_text())
        expect = stats["split_sequences"][a.split]
    if len(recs) != expect:
        raise SystemExit(
            f"rebuilt {len(recs):,} {a.split} sequences, stats.json says {expect:,}: not the committed split"
        )
    recs = recs[: a.limit]
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".part")
    with lzma.open(tmp, "wt", preset=6, encoding="utf-8") as f:
        for rid, seq in recs:
            f.write(f">{rid}\n{seq}\n")
    tmp.replace(out)
    print(
        strict_json.dumps(
            {"sequences": len(recs), "residues": sum(len(s) for _, s in recs), "bytes": out.stat().st_size}
        )
    )


if __name__ == "__main__":
    main()
