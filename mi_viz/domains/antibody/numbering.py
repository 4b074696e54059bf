"""Antibody regions by a numbering tool: riot-na (PyPI riot-na 5.2.0, self-contained), IMGT scheme.

IMGT's regions of a V domain: FWR1 (1-26), CDR1 (27-38), FWR2 (39-55), CDR2 (56-65), FWR3
(66-104, ending at the conserved Cys 104), CDR3 (105-117, between Cys 104 and Trp / Phe 118),
FWR4 (118-128). riot-na aligns a chain to its germline V and J genes and reports each region's
residues; a chain it cannot number (not an antibody, a fragment, nucleotides) is refused by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ...core.errors import UserError

SCHEME = "IMGT"
REGIONS = ("fwr1", "cdr1", "fwr2", "cdr2", "fwr3", "cdr3", "fwr4")
CHAINS = {"igh": "heavy", "igk": "kappa", "igl": "lambda"}


class NumberingError(UserError, ValueError):
    """A chain the numbering tool cannot number, or a region it does not have."""


@dataclass(frozen=True)
class Numbered:
    """A V domain's regions: name -> (start, end), 0-based, end exclusive, in the chain as given."""

    sequence: str
    locus: str  # "igh", "igk", "igl"
    regions: dict[str, tuple[int, int]]
    v_call: str = ""
    j_call: str = ""

    @property
    def heavy(self) -> bool:
        return self.locus == "igh"

    def span(self, region: str) -> tuple[int, int]:
        """A region's (start, end), or NumberingError naming the regions there are."""
        if region not in self.regions:
            raise NumberingError(f"no region {region!r}: this chain has {', '.join(self.regions)}")
        s, e = self.regions[region]
        if e <= s:
            raise NumberingError(f"region {region} is empty in this chain")
        return s, e


@lru_cache(maxsize=1)
def _riot():
    try:
        from riot_na import create_riot_aa
    except ImportError:
        raise NumberingError("riot-na is not installed: `pip install riot-na==5.2.0` (make setup)") from None
    return create_riot_aa()


def number(sequence: str, name: str = "chain") -> Numbered:
    """A chain's IMGT regions by riot-na (about 6 ms a chain; 2 s to start the aligner once)."""
    from riot_na import Scheme

    seq = "".join(str(sequence).split()).upper()
    if seq and set(seq) <= set("ACGTUN"):
        raise NumberingError(f"{name} reads as nucleotides ({len(seq)} letters of ACGT): give the amino-acid chain")
    r = _riot().run_on_sequence(name, seq, scheme=Scheme.IMGT)
    if r.locus is None or r.cdr3_start_aa is None:
        raise NumberingError(f"{name}: riot-na cannot number this chain as an antibody V domain ({SCHEME})")
    offset = seq.find(r.sequence_aa) if r.sequence_aa else 0
    regions = {}
    for reg in REGIONS:
        s, e = getattr(r, f"{reg}_start_aa"), getattr(r, f"{reg}_end_aa")
        if s is not None and e is not None:
            regions[reg] = (offset + int(s) - 1, offset + int(e))  # 1-based inclusive -> 0-based half-open
    if "cdr3" not in regions:
        raise NumberingError(f"{name}: riot-na found no CDR3 in this chain")
    return Numbered(seq, str(r.locus), regions, str(r.v_call or ""), str(r.j_call or ""))
