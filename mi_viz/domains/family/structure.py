"""A family member's structure on the alignment's columns: its residue contacts (their precision
under a predictor's scores: scoring.py).

Contacts as the coevolution literature scores them (../shared/data/protein_families/README.md):
two mapped columns are in contact when their residues' C-beta atoms (C-alpha for glycine)
are under 8 A apart; only pairs at least 6 *residues* apart along the chain are scored (by
residue number, as CASP and the coevolution papers count it: columns the structure lacks do
not add to the separation); precision of the top L/5 (and L/2) pairs, L = the number of
mapped columns.

The column -> residue map comes from an indices file (column 1: the MSA column, 0-based;
column 4: the PDB residue number and chain), or, without one, from aligning the
structure's sequence to the alignment's profile (align_to_profile: global over the
columns, local over the sequence; tests/test_family.py checks it against the shipped
indices files).
"""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...core import strict_json
from ...core.errors import UserError
from ...core.paths import open_text
from .alignment import GAP, SYMBOLS

CONTACT_ANGSTROM = 8.0
MIN_SEPARATION = 6
THREE_TO_ONE = {
    "ALA": "A", "ARG": "R", "ASN": "N", "ASP": "D", "CYS": "C", "GLN": "Q", "GLU": "E", "GLY": "G",
    "HIS": "H", "ILE": "I", "LEU": "L", "LYS": "K", "MET": "M", "PHE": "F", "PRO": "P", "SER": "S",
    "THR": "T", "TRP": "W", "TYR": "Y", "VAL": "V", "MSE": "M",
}  # fmt: skip


class StructureError(UserError, ValueError):
    """A structure or column map that cannot be used; the message says what is wrong."""


@dataclass
class Residue:
    number: int  # PDB residue number
    insertion: str  # insertion code ('' when none)
    chain: str
    letter: str  # one-letter amino acid
    xyz: np.ndarray  # (3,) C-beta, or C-alpha for glycine (or when C-beta is absent)


def read_structure(path, chain: str | None = None) -> list[Residue]:
    """The residues of one chain (the first with amino acids, unless named) of a PDB file, with
    their C-beta (C-alpha for glycine) coordinates. StructureError names what is missing."""
    import biotite.structure.io.pdb as pdb

    p = Path(path)
    if not p.exists():
        raise StructureError(f"structure file not found: {p}")
    try:
        atoms = pdb.PDBFile.read(str(p)).get_structure(model=1)
    except Exception as e:  # biotite raises several types for a malformed file
        raise StructureError(f"{p.name} is not a readable PDB file ({type(e).__name__}: {e})") from None
    atoms = atoms[~atoms.hetero | (atoms.res_name == "MSE")]
    chains = list(dict.fromkeys(atoms.chain_id.tolist()))
    if not chains:
        raise StructureError(f"{p.name} holds no amino-acid residues")
    chain = chain or chains[0]
    if chain not in chains:
        raise StructureError(f"{p.name} has no chain {chain!r} (chains: {', '.join(chains)})")
    atoms = atoms[atoms.chain_id == chain]
    out: list[Residue] = []
    keys = list(dict.fromkeys(zip(atoms.res_id.tolist(), atoms.ins_code.tolist())))
    for num, ins in keys:
        r = atoms[(atoms.res_id == num) & (atoms.ins_code == ins)]
        name = str(r.res_name[0])
        if name not in THREE_TO_ONE:
            continue
        want = "CA" if name == "GLY" else "CB"
        sel = r[r.atom_name == want]
        if len(sel) == 0:
            sel = r[r.atom_name == "CA"]
        if len(sel) == 0:
            continue  # no backbone position for this residue: it cannot be scored
        out.append(Residue(int(num), str(ins), chain, THREE_TO_ONE[name], np.asarray(sel.coord[0], dtype=np.float64)))
    if not out:
        raise StructureError(f"{p.name}, chain {chain}: no residue with a C-alpha or C-beta atom")
    return out


def read_indices(path) -> dict[int, tuple[int, str, str]]:
    """An indices file -> {column (0-based): (PDB residue number, insertion code, chain)}."""
    p = Path(path)
    if not p.exists():
        raise StructureError(f"column map not found: {p}")
    out = {}
    for k, line in enumerate(p.read_text().splitlines()):
        if not line.strip():
            continue
        parts = line.split("\t")
        try:
            col = int(parts[0])
            resid, chain = parts[3].split()
            num = int("".join(ch for ch in resid if ch.isdigit() or ch == "-"))
            ins = "".join(ch for ch in resid if ch.isalpha())
        except (ValueError, IndexError):
            raise StructureError(
                f"{p.name}, line {k + 1}: expected 'column<TAB>residue<TAB>index<TAB>number chain', got {line!r}"
            ) from None
        out[col] = (num, ins, chain)
    if not out:
        raise StructureError(f"{p.name} maps no column")
    return out


def align_to_profile(seq: str, fi: np.ndarray, gap_open: float = -3.0, gap_extend: float = -0.5) -> dict[int, int]:
    """The structure's sequence onto the alignment's columns: {column: index into seq}.

    Dynamic programming with affine-free linear gaps: match score log(f_i(a) / b(a)) of the
    profile fi (L, 21) against background b (the profile's mean), a column left without a
    residue costs its gap log-odds (cheap where the family has gaps), residues between
    columns cost gap_extend, residues before the first and after the last column are free
    (the structure may hold more than the domain)."""
    L = len(fi)
    S = len(seq)
    prof = np.clip(fi, 1e-4, 1)
    bg = prof[:, :20].mean(0) / prof[:, :20].mean(0).sum()
    idx = np.array([SYMBOLS.index(a) if a in SYMBOLS[:20] else -1 for a in seq])
    match = np.where(idx[None, :] >= 0, np.log(prof[:, np.maximum(idx, 0)] / bg[np.maximum(idx, 0)][None]), -1.0)
    skip_col = np.log(prof[:, GAP] + 1e-3) * 0.5 + gap_open * (1 - prof[:, GAP])  # (L,) a column with no residue
    NEG = -1e9
    D = np.full((L + 1, S + 1), NEG)
    D[0, :] = 0.0  # free leading residues
    ptr = np.zeros((L + 1, S + 1), dtype=np.int8)  # 1 match, 2 skip column, 3 insert residue
    for i in range(1, L + 1):
        D[i, 0] = D[i - 1, 0] + skip_col[i - 1]
        ptr[i, 0] = 2
        for j in range(1, S + 1):
            best, how = D[i - 1, j - 1] + match[i - 1, j - 1], 1
            v = D[i - 1, j] + skip_col[i - 1]
            if v > best:
                best, how = v, 2
            v = D[i, j - 1] + (gap_extend if i < L else 0.0)  # residues after the last column: free
            if v > best:
                best, how = v, 3
            D[i, j], ptr[i, j] = best, how
    i, j = L, int(np.argmax(D[L]))
    out = {}
    while i > 0:
        how = ptr[i, j]
        if how == 1:
            out[i - 1] = j - 1
            i, j = i - 1, j - 1
        elif how == 2:
            i -= 1
        else:
            j -= 1
    return out


@dataclass
class ContactMap:
    """Distances between the structure's residues on the alignment's columns."""

    width: int  # alignment columns
    columns: list[int]  # mapped columns, ascending
    residues: list[str]  # the structure's residue at each mapped column ("D57 A")
    sequence: str  # the structure's sequence written into the columns ('-' where unmapped)
    distance: np.ndarray  # (M, M) Angstrom between mapped columns' C-beta / C-alpha
    source: dict = field(default_factory=dict)  # where it came from (files, map, chain)
    coords: np.ndarray | None = None  # (M, 3) those atoms' coordinates (Angstrom): the 3D view draws them
    positions: np.ndarray = field(init=False, repr=False)  # (M,) places along the chain (residue_positions)
    _separation: np.ndarray = field(init=False, repr=False)  # (L, L) separation(), made once

    def __post_init__(self):
        self.positions = residue_positions(self.residues, self.columns)  # (M,) place along the chain
        sep = np.full((self.width, self.width), -1, dtype=np.int64)
        c = np.asarray(self.columns)
        sep[np.ix_(c, c)] = np.abs(self.positions[:, None] - self.positions[None, :])
        self._separation = sep

    @property
    def n_mapped(self) -> int:
        return len(self.columns)

    def separation(self) -> np.ndarray:
        """(L, L) residues between two mapped columns along the chain (|position_i - position_j|);
        -1 where either column is unmapped (made once: contacts() and scored() read it on every step)."""
        return self._separation.copy()

    def contacts(self, cutoff: float = CONTACT_ANGSTROM) -> np.ndarray:
        """(L, L) bool over all columns: in contact (under cutoff), >= MIN_SEPARATION residues apart, both mapped."""
        out = np.zeros((self.width, self.width), dtype=bool)
        c = np.asarray(self.columns)
        out[np.ix_(c, c)] = self.distance < cutoff
        return out & self.scored()

    def scored(self) -> np.ndarray:
        """(L, L) bool: the pairs that are scored (both mapped, >= MIN_SEPARATION residues apart)."""
        return self._separation >= MIN_SEPARATION

    def to_json(self) -> dict:
        return {
            "format": "mi-viz-contacts-1",
            "width": self.width,
            "columns": self.columns,
            "residues": self.residues,
            "sequence": self.sequence,
            "distance": np.round(self.distance, 2).tolist(),
            "contact_angstrom": CONTACT_ANGSTROM,
            "min_separation": MIN_SEPARATION,
            "source": self.source,
            **({"coords": np.round(self.coords, 2).tolist()} if self.coords is not None else {}),
        }

    def save(self, path) -> Path:
        """NAME.json, or NAME.json.gz gzip-compressed (as shipped beside a checkpoint)."""
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        text = strict_json.dumps(self.to_json(), separators=(",", ":"))
        p.write_bytes(gzip.compress(text.encode(), mtime=0) if p.suffix == ".gz" else text.encode())
        return p

    @classmethod
    def load(cls, path) -> ContactMap:
        p = Path(path)
        try:
            with open_text(p) as f:
                d = json.load(f)
            if d.get("format") != "mi-viz-contacts-1":
                raise StructureError(f"{p.name} is not an mi-viz contact map (format {d.get('format')!r})")
            coords = np.asarray(d["coords"]) if "coords" in d else None  # maps written before the 3D view have none
            return cls(
                d["width"], d["columns"], d["residues"], d["sequence"], np.asarray(d["distance"]), d["source"], coords
            )
        except (OSError, EOFError, json.JSONDecodeError, KeyError) as e:
            raise StructureError(f"{p} is not a readable contact map ({type(e).__name__}: {e})") from None


RESIDUE = re.compile(r"^([A-Z])(-?\d+)([A-Za-z]?) (\S+)$")  # "D57 A", "G52A H": letter, number, insertion, chain


def residue_positions(residues: list[str], columns: list[int]) -> np.ndarray:
    """Each mapped residue's place along its chain, from its residue number: separations count the
    residues the structure lacks (a numbering gap is missing residues, as CASP counts them) and
    each residue with an insertion code (52A after 52) as one more. StructureError when the
    residues are not one chain in column order: a residue twice, or numbers that go back."""
    out = np.zeros(len(residues), dtype=np.int64)
    inserted, seen, chains = 0, dict[tuple[str, str, str], int](), set[str]()
    for k, (r, c) in enumerate(zip(residues, columns)):
        m = RESIDUE.match(r)
        if m is None:
            raise StructureError(f"column {c}: residue {r!r} is not 'letter number[insertion] chain' (e.g. 'D57 A')")
        _, num, ins, chain = m.groups()
        chains.add(chain)
        if (num, ins, chain) in seen:
            raise StructureError(f"residue {r} is mapped to two columns ({seen[(num, ins, chain)]} and {c})")
        seen[(num, ins, chain)] = c
        inserted += bool(ins)
        out[k] = int(num) + inserted
        if k and out[k] <= out[k - 1]:
            raise StructureError(
                f"residue numbers go back along the columns: {residues[k - 1]} at column {columns[k - 1]}, {r} at "
                f"column {c} (the column map or the chain's numbering is out of order)"
            )
    if len(chains) > 1:
        raise StructureError(
            f"the mapped residues come from {len(chains)} chains ({', '.join(sorted(chains))}): one, please"
        )
    return out


def contact_map(structure, width: int, fi: np.ndarray | None = None, indices=None, chain=None) -> ContactMap:
    """The structure's contact map on an alignment of `width` columns: through the indices
    file when given (it must agree with the structure's residues and the width), else by
    align_to_profile against the alignment's profile fi (L, 21)."""
    res = read_structure(structure, chain)
    if indices is not None:
        imap = read_indices(indices)
        bad = [c for c in imap if not 0 <= c < width]
        if bad:
            raise StructureError(
                f"{Path(indices).name} maps column {bad[0]} but the alignment has columns 0..{width - 1}: "
                "the column map belongs to another alignment"
            )
        by_key = {(r.number, r.insertion, r.chain): k for k, r in enumerate(res)}
        col_to_res = {}
        missing = []
        for col, key in sorted(imap.items()):
            k = by_key.get(key, by_key.get((key[0], key[1], res[0].chain)))
            if k is None:
                missing.append(f"{key[0]}{key[1]} {key[2]}")
            else:
                col_to_res[col] = k
        if missing and len(missing) > len(imap) // 2:
            raise StructureError(
                f"{Path(structure).name} lacks {len(missing)} of the {len(imap)} residues the column map names "
                f"(first: {', '.join(missing[:5])}): the structure and the map do not belong together"
            )
        how = {"map": Path(indices).name, "unmatched_in_structure": missing}
    else:
        if fi is None:
            raise StructureError("without a column map, the alignment's profile is needed to place the structure")
        col_to_res = align_to_profile("".join(r.letter for r in res), fi)
        how = {"map": "aligned to the profile (align_to_profile)"}
    if len(col_to_res) < 2 * MIN_SEPARATION:
        raise StructureError(
            f"only {len(col_to_res)} alignment columns map to residues of {Path(structure).name}: "
            "too few to score contacts (is it a member of this family?)"
        )
    cols = sorted(col_to_res)
    xyz = np.stack([res[col_to_res[c]].xyz for c in cols])
    dist = np.sqrt(((xyz[:, None] - xyz[None]) ** 2).sum(-1))
    seq = ["-"] * width
    for c in cols:
        seq[c] = res[col_to_res[c]].letter
    return ContactMap(
        width,
        cols,
        [
            f"{res[col_to_res[c]].letter}{res[col_to_res[c]].number}{res[col_to_res[c]].insertion} {res[0].chain}"
            for c in cols
        ],
        "".join(seq),
        dist,
        {"structure": Path(structure).name, "chain": res[0].chain, **how},
        xyz,
    )
