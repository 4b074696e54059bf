"""Does the consensus row's Jacobian add to the held-out rows'? (issue 49's PDZ lever, no recomputation)

    python -m experiments.runs.family_jacobian_blend [--data DIR]

Each family's two committed Jacobian maps (results/family/NAME/jacobian.npz: 50 held-out rows, and
the consensus row under 40 masks) blended as share * z(consensus) + (1 - share) * z(rows), each
map z-scored over the pairs >= 6 columns apart, at shares 0, 0.25, 0.5, 0.75 and 1; every blend
scored like every predictor (class_precisions, separation in residues) and by the structure-free
criterion (reading.structure_free_choice: the held-out rows' own MIp over its top W/5 pairs). The
criterion's pick is what a user without a structure would get; MIp stands beside it. Writes
results/family/jacobian_blend.json in seconds (no model pass).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from mi_viz.core import strict_json
from mi_viz.domains.family import family_domain
from mi_viz.domains.family.alignment import read_alignment
from mi_viz.domains.family.predictors import committed_maps
from mi_viz.domains.family.reading import structure_free_choice
from mi_viz.domains.family.scoring import class_precisions
from mi_viz.domains.family.train import data_for

ROOT = Path(__file__).resolve().parents[1]
FAMILIES = ("PF00595", "PF00076", "PF00072", "PF00018", "PF00085")
SHARES = (0.0, 0.25, 0.5, 0.75, 1.0)
KEYS = ("precision_all_L5", "precision_long_L")


def zscored(m: np.ndarray) -> np.ndarray:
    """A map standardised over its pairs >= 6 columns apart, so two maps' scales can be mixed."""
    i, j = np.triu_indices(len(m), 6)
    v = m[i, j]
    return (m - v.mean()) / (v.std() + 1e-12)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "protein_families"))
    a = ap.parse_args(argv)
    out: dict = {"shares": list(SHARES), "families": {}}
    for fam in FAMILIES:
        dom = family_domain(fam)
        assert dom.contact_map is not None
        data = data_for(dom.meta, read_alignment(Path(a.data) / fam / f"{fam}.align.80.fasta"))
        maps = committed_maps(ROOT / "results" / "family" / fam)
        rows, cons = zscored(maps["jacobian_rows"]), zscored(maps["jacobian_consensus"])
        blends = {f"share {s:g}": s * cons + (1 - s) * rows for s in SHARES}
        crit = structure_free_choice({"jacobian_rows": rows, "jacobian_consensus": cons}, data)  # the names it knows
        scores = {}
        for name, m in blends.items():
            c = structure_free_choice({"jacobian_rows": m}, data)["scores"]["jacobian_rows"]
            p = class_precisions(m, dom.contact_map)
            scores[name] = {"criterion": c, **{k: p[k] for k in KEYS}}
        pick = max(scores, key=lambda n: scores[n]["criterion"])
        mip = class_precisions(maps["mip"], dom.contact_map)
        out["families"][fam] = {
            "blends": scores,
            "criterion_pick": pick,
            "committed_choice": crit["chosen"],
            "mip": {k: mip[k] for k in KEYS},
        }
        print(fam, pick, scores[pick], "mip", out["families"][fam]["mip"], flush=True)
    path = ROOT / "results" / "family" / "jacobian_blend.json"
    path.write_text(strict_json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
