"""Score the committed family contact maps again: results/family/NAME/contacts.json's precisions
and AUROCs from the maps beside it (contacts.npz) and the shipped contact map, through the same
function `python -m mi_viz contacts` scores with (pipelines.contact_fields).

    python -m experiments.runs.family_rescore [--families PF00595 ...]

For a change of the scoring rule (issue 49: separation counted in residues along the chain, not
alignment columns) without the hours of ground truth the maps cost: only the score fields are
rewritten, every other field (rows, passes, seconds) stays as measured. Prints what moved.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from mi_viz.core import strict_json
from mi_viz.domains.family import family_domain, shipped_families
from mi_viz.domains.family.pipelines import contact_fields

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--families", nargs="*", default=None, help="default: every shipped family with a contact report")
    a = ap.parse_args(argv)
    for name in a.families or shipped_families():
        folder = ROOT / "results" / "family" / name
        if not (folder / "contacts.npz").exists():
            continue
        dom = family_domain(name)
        assert dom.contact_map is not None  # a shipped family with a contact report has its map
        z = np.load(folder / "contacts.npz")
        old = json.loads((folder / "contacts.json").read_text())
        new = contact_fields({k: z[k] for k in z.files}, dom.contact_map)
        moved = {k: (old.get(k), v) for k, v in new.items() if old.get(k) != v}
        (folder / "contacts.json").write_text(strict_json.dumps({**old, **new}, indent=1))
        print(name, strict_json.dumps(moved))


if __name__ == "__main__":
    main()
