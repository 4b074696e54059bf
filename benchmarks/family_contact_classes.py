"""Every contact predictor of a family by the field's conventions: precision at top L, L/2 and L/5
in each separation class (residues along the chain: short 6-11, medium 12-23, long >= 24, all >= 6), and the backbone's
categorical Jacobian as a second extraction beside its conditional MI.

    python -m benchmarks.family_contact_classes [--families PF00595 ...] [--rows 50]

The same reading `python -m mi_viz contacts` writes for any family (family/reading.py). Reads each
family's committed maps (results/family/NAME/contacts.npz: the backbone's conditional
MI and its head's, MIp, the Potts model's, all APC'd), computes the categorical Jacobian of its
backbone (jacobian.categorical_jacobian) on --rows held-out rows (2 random half-masks each) and on
the alignment's consensus row (--consensus-masks masks), caches those maps beside (jacobian.npz),
reads the backbone's attention on the same rows as DAWN reads it (attention.npz),
fits the field's anchors on the training rows from their packages (anchors.py: arDCA, plmDCA;
cached as ardca.npz, plmdca.npz with their 200 members), and writes
results/family/NAME/contact_classes.json. The alignment is the user's
(../shared/data/protein_families here, --data elsewhere); nothing of it is written.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from mi_viz.core import strict_json
from mi_viz.domains.family import family_domain, shipped_families
from mi_viz.domains.family.alignment import read_alignment
from mi_viz.domains.family.reading import ANCHORS, AnchorSettings, JacobianBudget, contact_reading
from mi_viz.domains.family.train import data_for

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--families", nargs="*", default=None, help="default: every shipped family with a contact report")
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "protein_families"))
    ap.add_argument("--rows", type=int, default=50, help="held-out rows the Jacobian averages over")
    ap.add_argument("--consensus-masks", type=int, default=40, help="masks of the consensus row")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-anchors", action="store_true", help="skip the anchors (optional installs)")
    ap.add_argument(
        "--anchors",
        nargs="*",
        default=["ardca", "plmdca"],
        choices=ANCHORS,
        help="the anchors to fit where no fit is committed (one that is, is reported anyway); bmDCA only on "
        "request: the same Potts model's contacts as plmDCA's at many times the cost",
    )
    ap.add_argument(
        "--ardca-max-rows", type=int, default=4000, help="arDCA fits a random subsample of the training rows past this"
    )
    ap.add_argument("--bmdca-chains", type=int, default=1000, help="bmDCA's persistent chains (its default 10,000)")
    ap.add_argument("--bmdca-steps", type=int, default=2000, help="bmDCA's gradient-step budget")
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    for name in a.families or shipped_families():
        folder = ROOT / "results" / "family" / name
        if not (folder / "contacts.npz").exists():
            continue
        dom = family_domain(name)
        model = dom.load_model()
        data = data_for(dom.meta, read_alignment(Path(a.data) / name / f"{name}.align.80.fasta"))
        assert dom.contact_map is not None  # a shipped family with a contact report has its map
        res = contact_reading(
            folder,
            name,
            model,
            data,
            dom.contact_map,
            JacobianBudget(a.rows, a.consensus_masks, a.seed),
            [] if a.no_anchors else a.anchors,
            AnchorSettings(a.seed, a.ardca_max_rows, a.bmdca_chains, a.bmdca_steps),
        )
        print(strict_json.dumps({"family": name, **{k: v["precision_long_L"] for k, v in res["predictors"].items()}}))


if __name__ == "__main__":
    main()
