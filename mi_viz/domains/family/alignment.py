"""A protein family's multiple sequence alignment (MSA): rows of one width over 21 symbols.

The symbols are the 20 standard amino acids in ESM-C's order and the gap, so a family row
means the same thing to a family backbone as a protein does to ESM-C (ids 4..23 and ESM-C's
'-' id 30). Conventions of the coevolution literature (plmDCA, CCMpred, Dunn et al. 2008):

- '.' is a gap; X, B, Z, J, U, O (an unknown or ambiguous residue) are read as a gap too
  and counted (AlignmentStats.unknown), as plmDCA does;
- sequence weights: w_n = 1 / #{m : identity(n, m) >= theta}, theta = 0.8, where identity
  is the share of the L columns at which two rows carry the same symbol (gaps included);
  Neff = sum_n w_n;
- a held-out split that never separates two rows at >= theta identity: rows are grouped by
  single linkage at theta and whole groups are held out.

Anything else (lower-case insert states, digits, rows of another width, too few rows) is an
AlignmentError that names the row and the column.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ...core.errors import UserError

SYMBOLS = "LAGVSERTIDPKQNFYMHWC-"  # value index 0..20: ESM-C's amino-acid order, then the gap
GAP = 20
Q = len(SYMBOLS)  # 21
TOKEN_OF_VALUE = torch.tensor(list(range(4, 24)) + [30])  # (21,) ESM-C token id of each symbol
AS_GAP = set(".XBZJUO")  # read as a gap (counted as unknown unless '.')
MIN_ROWS = 20  # fewer rows than this cannot train or split anything
IDENTITY = 0.8  # theta of the weights and the split

_INDEX = {a: k for k, a in enumerate(SYMBOLS)}
for _c in AS_GAP:
    _INDEX[_c] = GAP


class AlignmentError(UserError, ValueError):
    """An alignment that cannot be used; the message says which row and column, and why."""


@dataclass
class Alignment:
    names: list[str]  # (N,) FASTA headers (first word)
    rows: np.ndarray  # (N, L) uint8 value indices 0..20 (20 = gap)
    unknown: int = 0  # letters read as a gap because they name no standard residue (X, B, Z, ...)
    source: str = ""  # file name, for messages and results

    @property
    def width(self) -> int:
        return int(self.rows.shape[1])

    def __len__(self) -> int:
        return int(self.rows.shape[0])

    def sha256(self) -> str:
        """Content fingerprint (rows only): which alignment a checkpoint or a result was made from."""
        return hashlib.sha256(np.ascontiguousarray(self.rows).tobytes()).hexdigest()[:16]

    def subset(self, idx) -> Alignment:
        idx = np.asarray(idx)
        return Alignment([self.names[i] for i in idx], self.rows[idx], 0, self.source)


def row_string(row: np.ndarray) -> str:
    return "".join(SYMBOLS[int(v)] for v in row)


def parse_row(text: str, width: int | None = None, allow_mask: bool = False) -> np.ndarray:
    """One aligned row as text -> (L,) value indices; with allow_mask, '_' is -1 (masked).
    AlignmentError names the first bad column (1-based)."""
    s = "".join(str(text).split())
    if width is not None and len(s) != width:
        raise AlignmentError(f"the row has {len(s)} columns; this family's alignment has {width}")
    out = np.empty(len(s), dtype=np.int16)
    for k, ch in enumerate(s):
        if allow_mask and ch == "_":
            out[k] = -1
        elif ch.upper() in _INDEX and not ch.islower():
            out[k] = _INDEX[ch]
        else:
            allowed = f"{SYMBOLS[:20]}, '-' or '.'" + (", '_' for a masked column" if allow_mask else "")
            raise AlignmentError(f"column {k + 1}: {ch!r} is not one of {allowed}")
    return out


def parse_alignment(text: str, source: str = "alignment", min_rows: int = MIN_ROWS) -> Alignment:
    """Aligned FASTA text -> Alignment. Every row must have the first row's width."""
    names: list[str] = []
    seqs: list[list[str]] = []
    cur: list[str] | None = None
    for line in io.StringIO(text):
        line = line.strip()
        if not line:
            continue
        if line.startswith(">"):
            names.append(line[1:].split()[0] if line[1:].split() else f"row{len(names) + 1}")
            seqs.append([])
            cur = seqs[-1]
        elif cur is None:
            raise AlignmentError(f"{source}: no FASTA header before the first row (a record starts with '>')")
        else:
            cur.append(line)
    if not seqs:
        raise AlignmentError(f"{source}: no FASTA record found (a record starts with a '>' header line)")
    width = len("".join(seqs[0]))
    if width == 0:
        raise AlignmentError(f"{source}: row 1 ({names[0]}) is empty")
    rows = np.empty((len(seqs), width), dtype=np.uint8)
    unknown = 0
    for n, (name, parts) in enumerate(zip(names, seqs)):
        s = "".join(parts)
        if len(s) != width:
            raise AlignmentError(
                f"{source}: row {n + 1} ({name}) has {len(s)} columns, row 1 has {width}: "
                "an alignment's rows all have one width"
            )
        try:
            rows[n] = parse_row(s)
        except AlignmentError as e:
            raise AlignmentError(f"{source}: row {n + 1} ({name}), {e}") from None
        unknown += sum(ch in "XBZJUO" for ch in s)
    if len(rows) < min_rows:
        raise AlignmentError(f"{source}: {len(rows)} rows; a family model needs at least {min_rows}")
    return Alignment(names, rows, unknown, source)


def read_alignment(path, min_rows: int = MIN_ROWS) -> Alignment:
    p = Path(path)
    if not p.exists():
        raise AlignmentError(f"alignment file not found: {p}")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise AlignmentError(f"{p} is not a readable text file ({e})") from None
    return parse_alignment(text, p.name, min_rows)


# --------------------------------------------------------------------------- identity, weights, split


def _identity_blocks(rows: np.ndarray, block: int = 256):
    """Yield (start, (b, N) float32 identity of rows start..start+b against every row):
    one-hot matrix products, so N = 15,000 rows take seconds, not minutes."""
    N, L = rows.shape
    oh = torch.zeros(N, L * Q)
    oh[torch.arange(N)[:, None], torch.arange(L)[None] * Q + torch.as_tensor(rows, dtype=torch.long)] = 1.0
    for s in range(0, N, block):
        yield s, (oh[s : s + block] @ oh.T).numpy() / L


def sequence_weights(rows: np.ndarray, theta: float = IDENTITY) -> np.ndarray:
    """w_n = 1 / #{m : identity(n, m) >= theta} (n itself included): (N,) float64."""
    counts = np.zeros(len(rows))
    for s, ident in _identity_blocks(rows):
        counts[s : s + len(ident)] = (ident >= theta - 1e-6).sum(1)
    return 1.0 / counts


def identity_groups(rows: np.ndarray, theta: float = IDENTITY) -> np.ndarray:
    """(N,) group label: connected components of the graph 'identity >= theta' (single linkage)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    ii, jj = [], []
    for s, ident in _identity_blocks(rows):
        a, b = np.nonzero(ident >= theta - 1e-6)
        ii.append(a + s)
        jj.append(b)
    i, j = np.concatenate(ii), np.concatenate(jj)
    g = coo_matrix((np.ones(len(i)), (i, j)), shape=(len(rows), len(rows)))
    return connected_components(g, directed=False)[1]


def split_heldout(rows: np.ndarray, frac: float = 0.1, seed: int = 0, theta: float = IDENTITY) -> np.ndarray:
    """(N,) bool, True = held out: whole identity groups (identity_groups) drawn in a seeded
    random order until `frac` of the rows are held out, so that no held-out row has a training
    row at >= theta identity."""
    groups = identity_groups(rows, theta)
    order = np.random.default_rng(seed).permutation(groups.max() + 1)
    sizes = np.bincount(groups)
    held = np.zeros(len(rows), dtype=bool)
    target, n = frac * len(rows), 0
    for g in order:
        if n >= target:
            break
        held[groups == g] = True
        n += sizes[g]
    return held


# --------------------------------------------------------------------------- frequencies


def frequencies(rows: np.ndarray, weights: np.ndarray | None = None, pseudocount: float = 0.0):
    """Weighted single and pair frequencies: f_i (L, Q) and f_ij (L, L, Q, Q), each mixed with
    the uniform distribution at `pseudocount` (the convention of MIp and Potts fits):
    f = (1 - lambda) f_data + lambda / Q (pairs: / Q^2; the diagonal blocks stay consistent)."""
    N, L = rows.shape
    w = np.ones(N) if weights is None else np.asarray(weights, dtype=np.float64)
    w = w / w.sum()
    oh = np.zeros((N, L, Q))
    oh[np.arange(N)[:, None], np.arange(L)[None], rows] = 1.0
    fi = np.einsum("n,nia->ia", w, oh)
    X = oh.reshape(N, L * Q)
    fij = ((X * w[:, None]).T @ X).reshape(L, Q, L, Q).transpose(0, 2, 1, 3)  # (L, L, Q, Q)
    lam = pseudocount
    fi = (1 - lam) * fi + lam / Q
    fij = (1 - lam) * fij + lam / Q**2
    idx = np.arange(L)
    fij[idx, idx] = np.einsum("ia,ab->iab", fi, np.eye(Q))  # a column with itself: f_i on the diagonal
    return fi, fij
