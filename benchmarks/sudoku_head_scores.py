"""Each shipped Sudoku MI head scored on the committed MI report's states (the app's head picker).

    python -m benchmarks.sudoku_head_scores --out results/sudoku/head_scores.csv

The report (results/sudoku/mi_report_pairs.npz: 100 hard test states and the shipped backbone's
ground truth at every masked pair) is read again by each head in HEADS (the shipped one; the previous release's baseline
was retired from the tree at 0.53 MB, its row with it), each state alone as mi_report reads it
(mi_report.head_at_pairs), and scored with the report's own metrics. The estimator page computes
the same numbers live; the sidebar quotes this file. Prints the CSV.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import sys
from pathlib import Path

from mi_viz.core.mi_head import load_head
from mi_viz.core.mi_report import head_at_pairs, metrics, read_pairs
from mi_viz.domains import get_domain

ROOT = Path(__file__).resolve().parents[1]
HEADS = ("checkpoints/sudoku_mi_head",)
COLUMNS = ("pearson", "spearman", "mae", "top_pair_recall", "auroc_structure_est", "auroc_structure_est_uncertain")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", default=str(ROOT / "results" / "sudoku" / "mi_report_pairs.npz"))
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    sudoku = get_domain("sudoku")
    model = sudoku.load_model()
    pt, tokens = read_pairs(a.pairs)
    rows = []
    for name in HEADS:
        head, _ = load_head(ROOT / name)
        est = head_at_pairs(model, head, tokens, pt)  # (P,)
        m = metrics(dataclasses.replace(pt, est=est), tokens, sudoku.mask_id)
        n_params = sum(p.numel() for p in head.parameters())
        rows.append(
            {"head": name, "n_params": n_params, "mix_layers": head.config.mix_layers, "n_pairs": m["n_pairs"]}
            | {k: m.get(k) for k in COLUMNS}
        )
    out = open(a.out, "w", newline="") if a.out else sys.stdout
    w = csv.DictWriter(out, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
    if a.out:
        out.close()
        print(Path(a.out).read_text(), end="")


if __name__ == "__main__":
    main()
