"""The antibody data: natural-like human V domains from OLGA's recombination models, split.

    python training/make_antibody_data.py            # -> data/antibody/ (seconds)

- test.tsv / val.tsv: the chains whose regions are infilled (Table 2's inputs and the defaults'
  validation): 64 + 32 heavy, 32 + 16 kappa, 32 + 16 lambda;
- reference_test.tsv.gz / reference_val.tsv.gz: 500 heavy + 500 light chains each, the judges'
  reference (k-means JSD of embeddings, CDR3 pair statistics), never infilled.
Every set from its own seed, so no chain is shared by construction (checked: identical chains are
dropped from the later sets). The MI data set draws its training chains from other seeds
(training/make_antibody_mi_dataset.py). OLGA is a pre-selection model of V(D)J recombination:
these chains are germline (no somatic mutation), natural-like, not natural (data/README.md).
"""

from __future__ import annotations

import argparse

from mi_viz.core import strict_json
from mi_viz.domains.antibody import DATA
from mi_viz.domains.antibody.chains import write_chains
from mi_viz.domains.antibody.numbering import number
from mi_viz.domains.antibody.recombination import generate

SETS = {  # name -> (seed, heavy, kappa, lambda)
    "test": (1, 64, 32, 32),
    "val": (2, 32, 16, 16),
    "reference_test": (3, 500, 250, 250),
    "reference_val": (4, 500, 250, 250),
}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(DATA))
    a = ap.parse_args(argv)
    seen: set[str] = set()
    summary = {}
    for name, (seed, *counts) in SETS.items():
        records = []
        for chain, n, off in zip(("heavy", "kappa", "lambda"), counts, (0, 100, 200)):
            got = 0
            for c in generate(chain, 3 * n, seed * 1000 + off):
                if got == n:
                    break
                if c.sequence in seen:
                    continue
                s, e = number(c.sequence).regions["cdr3"]
                if c.sequence[s - 1 : e + 1] != c.junction:  # the numbering tool and OLGA agree on the CDR3
                    continue
                seen.add(c.sequence)
                got += 1
                records.append((f"{name}_{chain[0]}{got:04d}", c))
        path = write_chains(f"{a.out}/{name}.tsv" + (".gz" if name.startswith("reference") else ""), records)
        summary[name] = {"path": path.name, "chains": len(records)}
    print(strict_json.dumps(summary))


if __name__ == "__main__":
    main()
