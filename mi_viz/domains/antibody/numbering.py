"""Antibody regions by a numbering tool: riot-na (PyPI riot-na 5.2.0, self-contained), IMGT scheme.

IMGT's regions of a V domain: FWR1 (1-26), CDR1 (27-38), FWR2 (39-55), CDR2 (56-65), FWR3
(66-104, ending at the conserved Cys 104), CDR3 (105-117, between Cys 104 and Trp / Phe 118),
FWR4 (118-128). riot-na aligns a chain to its germline V and J genes (human, mouse and alpaca
genes) and reports each region's residues.

A chain as deposited in a structure often carries more than its V domain: the constant domain CH1
or CL after it (SAbDab's heavy chains: 200-230 residues), a tag or a signal peptide before it. A
model trained on V domains (AntiBERTy, Sapiens) reads such a chain out of its distribution, so
`v_domain` keeps IMGT 1..128's residues and says what it cut (`Numbered.note`): trimming is not
an error. A chain riot-na cannot number is refused by name, and `refusal` says why where a second
tool can tell: ANARCI's HMMs (an optional install, with HMMER's hmmscan) recognise a T-cell
receptor chain; nucleotides and letters are named before any alignment.
"""

from __future__ import annotations

import contextlib
import io
import shutil
from dataclasses import dataclass, field
from functools import lru_cache

from ...core.errors import UserError

SCHEME = "IMGT"
REGIONS = ("fwr1", "cdr1", "fwr2", "cdr2", "fwr3", "cdr3", "fwr4")
CHAINS = {"igh": "heavy", "igk": "kappa", "igl": "lambda"}
SPECIES = ("human", "mouse", "alpaca")  # riot-na 5.2.0's germline sets
# below this identity of the V segment to its closest germline, riot-na's species is a guess: a
# chicken VH is "human IGHV3-23" at 0.68; SAbDab's human and mouse chains (somatically mutated)
# sit at 0.74-1.00 (docs/results-antibody.md, the sets' table)
SPECIES_IDENTITY = 0.7
TCR = {"A": "alpha", "B": "beta", "G": "gamma", "D": "delta"}


class NumberingError(UserError, ValueError):
    """A chain the numbering tool cannot number, or a region it does not have."""


@dataclass(frozen=True)
class Numbered:
    """A V domain's regions: name -> (start, end), 0-based, end exclusive, in `sequence` (the V
    domain itself once v_domain trimmed it; the chain as given from number)."""

    sequence: str
    locus: str  # "igh", "igk", "igl"
    regions: dict[str, tuple[int, int]]
    v_call: str = ""
    j_call: str = ""
    species: str = ""  # riot-na's species of the closest V gene (human, mouse, alpaca)
    v_identity: float = 1.0  # of the V segment to that gene
    c_call: str = ""  # the constant gene riot-na found after the V domain, if any
    trimmed: tuple[int, int] = (0, 0)  # residues cut before and after the V domain (v_domain)
    imgt: tuple[str, ...] = field(default=(), repr=False)  # each residue's IMGT number ('111A'), where known

    @property
    def heavy(self) -> bool:
        return self.locus == "igh"

    @property
    def species_uncertain(self) -> bool:
        return self.v_identity < SPECIES_IDENTITY

    def span(self, region: str) -> tuple[int, int]:
        """A region's (start, end), or NumberingError naming the regions there are."""
        if region not in self.regions:
            raise NumberingError(f"no region {region!r}: this chain has {', '.join(self.regions)}")
        s, e = self.regions[region]
        if e <= s:
            raise NumberingError(f"region {region} is empty in this chain")
        return s, e

    @property
    def note(self) -> str:
        """What a reader should know about this chain's numbering (empty when nothing): the residues
        trimmed around the V domain, a species riot-na could only guess."""
        parts = []
        before, after = self.trimmed
        if after:
            what = f"the constant region ({self.c_call})" if self.c_call else "residues past the V domain's FWR4"
            parts.append(f"{after} residues after IMGT 128 trimmed: {what}")
        if before:
            parts.append(f"{before} residues before IMGT 1 trimmed (a leader or tag)")
        if self.species_uncertain:
            parts.append(
                f"species not modelled by the numbering: the closest germline ({self.species} {self.v_call}) "
                f"is only {self.v_identity:.0%} identical"
            )
        return "; ".join(parts)

    def describe(self) -> str:
        """One line a user reads: chain type, species, V and J genes."""
        sp = f"{self.species}?" if self.species_uncertain else self.species
        return f"{CHAINS.get(self.locus, self.locus)} chain, {sp}, {self.v_call} / {self.j_call}"


@lru_cache(maxsize=1)
def _riot():
    try:
        from riot_na import create_riot_aa
    except ImportError:
        raise NumberingError("riot-na is not installed: `pip install riot-na==5.2.0` (make setup)") from None
    return create_riot_aa()


def _letters(seq: str, name: str) -> str:
    seq = "".join(str(seq).split()).upper()
    if not seq:
        raise NumberingError(f"{name} is empty")
    if set(seq) <= set("ACGTUN"):
        raise NumberingError(f"{name} reads as nucleotides ({len(seq)} letters of ACGT): give the amino-acid chain")
    return seq


MIN_V_DOMAIN = 70  # residues: a fragment shorter than this is named too short when riot-na cannot number it


def number(sequence: str, name: str = "chain") -> Numbered:
    """A chain's IMGT regions by riot-na, in the chain as given (about 6 ms a chain; 2 s to start
    the aligner once). NumberingError, with the reason refusal finds, if it cannot be numbered."""
    from riot_na import Scheme

    seq = _letters(sequence, name)
    r = _riot().run_on_sequence(name, seq, scheme=Scheme.IMGT)
    if r.locus is None or r.cdr3_start_aa is None:
        if len(seq) < MIN_V_DOMAIN:  # what a user most needs to hear about a fragment, before any aligner's word
            raise NumberingError(
                f"{name}: {len(seq)} residues are too short for a V domain (about 110-130 residues, FWR1 to FWR4): "
                "give the whole chain"
            )
        raise NumberingError(f"{name}: {refusal(seq)}")
    offset = seq.find(r.sequence_aa) if r.sequence_aa else 0
    regions = {}
    for reg in REGIONS:
        s, e = getattr(r, f"{reg}_start_aa"), getattr(r, f"{reg}_end_aa")
        if s is not None and e is not None:
            regions[reg] = (offset + int(s) - 1, offset + int(e))  # 1-based inclusive -> 0-based half-open
    if "cdr3" not in regions:
        raise NumberingError(f"{name}: riot-na found no CDR3 in this chain")
    imgt = [""] * len(seq)
    for pos, num in (r.positional_scheme_mapping or {}).items():
        if 0 <= offset + int(pos) < len(seq):
            imgt[offset + int(pos)] = str(num)
    return Numbered(
        seq,
        str(r.locus),
        regions,
        str(r.v_call or ""),
        str(r.j_call or ""),
        str(r.locus_species or ""),
        float(r.v_identity_aa) if r.v_identity_aa is not None else 1.0,
        str(r.c_call or ""),
        imgt=tuple(imgt),
    )


def v_domain(sequence: str, name: str = "chain") -> Numbered:
    """The chain's V domain (IMGT 1..128's residues: FWR1's first to FWR4's last) with its regions;
    what lay before or after it is cut and counted in `trimmed` (Numbered.note says so)."""
    n = number(sequence, name)
    start = n.regions.get("fwr1", n.regions["cdr3"])[0]
    end = n.regions.get("fwr4", n.regions["cdr3"])[1]
    if (start, end) == (0, len(n.sequence)):
        return n
    shifted = {k: (s - start, e - start) for k, (s, e) in n.regions.items()}
    return Numbered(
        n.sequence[start:end],
        n.locus,
        shifted,
        n.v_call,
        n.j_call,
        n.species,
        n.v_identity,
        n.c_call,
        trimmed=(start, len(n.sequence) - end),
        imgt=n.imgt[start:end],
    )


def refusal(seq: str) -> str:
    """Why riot-na could not number a chain, as far as a second tool can tell: ANARCI (if installed,
    with hmmscan) recognises T-cell receptor chains and antibody V domains of species riot-na has
    no genes for; otherwise the chain is said not to be an antibody V domain riot-na models."""
    generic = f"riot-na cannot number this chain as an antibody V domain ({SCHEME}; human, mouse and alpaca genes)"
    hit = _anarci_type(seq)
    if hit is None:  # no ANARCI or no hmmscan here: say what would tell more (a TCR named as one)
        return generic + "; with HMMER installed (make hmmer) a T-cell receptor or another species would be named"
    chain, species = hit
    if chain == "":
        return (
            f"not an antibody or T-cell receptor V domain (neither riot-na nor ANARCI numbers it; {len(seq)} residues)"
        )
    if chain in TCR:
        return (
            f"a T-cell receptor {TCR[chain]} chain (ANARCI, {species}), not an antibody: the backbones model antibodies"
        )
    return f"an antibody {chain} chain ANARCI calls {species}, which riot-na cannot number (no {species} genes)"


def _anarci_type(seq: str) -> tuple[str, str] | None:
    """(ANARCI's chain type or '' for no hit, its species), or None when ANARCI cannot run here."""
    if shutil.which("hmmscan") is None:
        return None
    try:
        from anarci import anarci
    except ImportError:
        return None
    with contextlib.redirect_stdout(io.StringIO()):  # ANARCI prints its species fallback to stdout
        _, alignments, _ = anarci([("q", seq)], scheme="imgt", assign_germline=False, output=False)
    found = alignments[0]
    if not found:
        return "", ""
    return str(found[0]["chain_type"]), str(found[0]["species"])
