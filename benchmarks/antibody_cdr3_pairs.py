"""CDR3s judged by pair statistics against references nobody here generated (a judge that did not generate).

    python -m benchmarks.antibody_cdr3_pairs [--bootstrap 200]

Parallel infill draws coupled positions independently, which is what pair statistics see (the
families' judge, family/pairstats.py). Each infilled CDR3 (IMGT 105-117, the rows kept by
`sweep --save-rows`: results/antibody/olga/cdr3/rows/*.csv.gz, sequential's beside them) is placed
on CDR3 columns anchored at both ends, as IMGT numbers a CDR3: its first ceil(n/2) residues
from 105 on, the rest ending at 117, the columns between them gaps (a length the other sets
have not met adds its columns). Against the heavy chains of the OLGA reference
(data/antibody/reference_test.tsv.gz, 1,000 chains of which the heavy ones count): Pearson of
the connected correlations C_ij(a, b) and of the single-position frequencies. The ceiling at
the same sample size: the 64 test chains' own CDR3s (OLGA's, like the reference, never
AntiBERTy's) on the same terms. Intervals: a bootstrap over each set's CDR3s (+-1.645 sd).
Writes results/antibody/olga/cdr3_pairs.json.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
from pathlib import Path

import numpy as np

from benchmarks.report import save
from mi_viz.domains.antibody.chains import read_chains
from mi_viz.domains.family.alignment import parse_row
from mi_viz.domains.family.pairstats import connected, flat_pearson

ROOT = Path(__file__).resolve().parents[1]
ROWS = ROOT / "results" / "antibody" / "olga" / "cdr3" / "rows"


def anchored(cdr3s: list[str]) -> list[str]:
    """CDR3s of any length as rows of one width: the first ceil(n/2) residues left-aligned, the
    rest right-aligned, '-' between (the longest length sets the width)."""
    width = max(len(s) for s in cdr3s)
    out = []
    for s in cdr3s:
        k = (len(s) + 1) // 2
        out.append(s[:k] + "-" * (width - len(s)) + s[k:])
    return out


def judged(sets: dict[str, list[str]], reference: list[str], bootstrap: int, seed: int = 0) -> dict:
    """Each set's pair and single statistics against the reference, on one column layout."""
    names = list(sets)
    rows = np.stack([parse_row(r) for r in anchored([*reference, *(s for n in names for s in sets[n])])])  # (N, W)
    ref, at = rows[: len(reference)], len(reference)
    f_ref, c_ref = connected(ref)
    g = np.random.default_rng(seed)
    out = {}
    for name in names:
        x = rows[at : at + len(sets[name])]
        at += len(x)
        f, c = connected(x)
        est = flat_pearson(c, c_ref)
        draws = (g.integers(0, len(x), len(x)) for _ in range(bootstrap))
        bs = [flat_pearson(connected(x[i])[1], c_ref) for i in draws]
        sd = float(np.std(bs))
        out[name] = {
            "n": len(x),
            "pair_corr_pearson": round(est, 4),
            "pair_corr_sd": round(sd, 4),
            "pair_corr_ci90": [round(est - 1.645 * sd, 4), round(est + 1.645 * sd, 4)],
            "single_freq_pearson": round(flat_pearson(f, f_ref), 4),
        }
    return out


def read_rows(path: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO(gzip.decompress(path.read_bytes()).decode())))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reference", default=str(ROOT / "data" / "antibody" / "reference_test.tsv.gz"))
    ap.add_argument("--bootstrap", type=int, default=200)
    a = ap.parse_args(argv)
    reference = [c.junction[1:-1] for _, c in read_chains(a.reference) if c.chain == "heavy"]
    files = sorted(ROWS.glob("*.csv.gz"), key=lambda f: (f.name != "sequential.csv.gz", f.name))
    first = read_rows(files[0])
    sets = {"natural (the test chains' own CDR3s)": [r["natural"] for r in first]}
    sets.update({f.name.removesuffix(".csv.gz"): [r["infill"] for r in read_rows(f)] for f in files})
    res = {
        "reference": f"{Path(a.reference).name}: {len(reference)} heavy chains' CDR3s (IMGT 105-117)",
        "layout": "anchored at both ends (first ceil(n/2) residues from 105, the rest ending at 117)",
        "bootstrap": a.bootstrap,
        "sets": judged(sets, reference, a.bootstrap),
    }
    summary = {k: v["pair_corr_pearson"] for k, v in res["sets"].items()}
    save(res, ROOT / "results" / "antibody" / "olga" / "cdr3_pairs.json", summary)


if __name__ == "__main__":
    main()
