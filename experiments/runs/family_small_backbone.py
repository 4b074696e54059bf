"""Would a smaller PDZ backbone read its contacts better? (issue 49's PDZ lever: the backbone)

    python -m experiments.runs.family_small_backbone [--run runs/pdz_small] [--data DIR]

PDZ's shipped backbone (128 wide, 4 blocks, 1.1 M parameters) saw 1,199 training rows and its
held-out loss turned at step 1,400: perhaps too large for its data. This trains one a fifth its
size (64 wide, 3 blocks; `mi_viz train-family`, 16 minutes at most on one core, the same split,
steps and schedule), reads its contacts as every family's are read (`mi_viz contacts`: the
Jacobian on the same 50 held-out rows, two half-masks each; attention; the anchors beside) and
writes results/family/PF00595/small_backbone.json: its held-out figures and contact precisions
beside the shipped backbone's. Steps already done in --run are not repeated (about 25 minutes of
one core in all, the anchors' fits included).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from mi_viz.core import strict_json

ROOT = Path(__file__).resolve().parents[1]
FAMILY, STRUCTURE = "PF00595", "2H3L_A"
KEYS = ("precision_all_L5", "precision_all_L2", "precision_long_L")
SIZE = ["--d-model", "64", "--n-heads", "4", "--n-layers", "3"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", default=str(ROOT / "runs" / "pdz_small"))
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "protein_families"))
    a = ap.parse_args(argv)
    run, fam = Path(a.run), Path(a.data) / FAMILY
    files = ["--msa", str(fam / f"{FAMILY}.align.80.fasta"), "--structure", str(fam / f"{STRUCTURE}.pdb"),
             "--map", str(fam / f"{STRUCTURE}.indices")]  # fmt: skip
    ckpt = run / f"family_{FAMILY}"
    cli = [sys.executable, "-m", "mi_viz"]
    if not Path(str(ckpt) + ".json").exists():
        subprocess.run([*cli, "train-family", *files, "--out", str(ckpt), "--family", FAMILY, *SIZE,
                        "--minutes", "16", "--threads", "1"], check=True)  # fmt: skip
    if not (run / "contact_classes.json").exists():
        # the conditional MI on 4 rows only (not read here); the Jacobian on the committed 50
        subprocess.run([*cli, "contacts", "--backbone", str(ckpt), *files, "--rows", "4", "--masks-per-row", "1",
                        "--jacobian-rows", "50", "--consensus-masks", "0", "--potts-iter", "50",
                        "--out", str(run / "contacts.json"), "--threads", "1"], check=True)  # fmt: skip
    small = json.loads((run / "contact_classes.json").read_text())
    shipped = json.loads((ROOT / "results" / "family" / FAMILY / "contact_classes.json").read_text())
    meta = {w: json.loads(Path(str(c) + ".json").read_text()) for w, c in
            (("small", ckpt), ("shipped", ROOT / "checkpoints" / f"family_{FAMILY}"))}  # fmt: skip
    res = {
        "family": FAMILY,
        "backbones": {
            w: {
                "config": {k: m["config"][k] for k in ("d_model", "n_heads", "n_layers")},
                "step": m["step"],
                "heldout": m["metrics"],
                "wall_seconds": m["extra"]["wall_seconds"],
            }
            for w, m in meta.items()
        },  # fmt: skip
        "jacobian_cost_small": small["jacobian_cost"],
        "scores": {
            f"{w} {p}": {k: r["predictors"][p][k] for k in KEYS}
            for w, r in (("small", small), ("shipped", shipped))
            for p in ("jacobian_rows", "attention", "mip")
        },
    }
    out = ROOT / "results" / "family" / FAMILY / "small_backbone.json"
    out.write_text(strict_json.dumps(res, indent=1) + "\n")
    print(strict_json.dumps(res["scores"]))


if __name__ == "__main__":
    main()
