"""Score MI heads on the fidelity report's own test states, without recomputing the truth.

    python benchmarks/heads_on_test_states.py --head checkpoints/candidates/sudoku_mi_head_7k_mix \
        [--head ...] [--out results/sudoku/head_candidates_test.csv]

results/sudoku/mi_report_pairs.npz (the mi-report of `make results`) holds the 100 held-out
decode states of the hard test puzzles and the ground truth of each of their 52,503 masked
pairs. Every head named here (and the shipped one, always first) is run on those states one
at a time, as the report runs it, and scored with the report's own metrics
(fidelity.metrics), plus Pearson over the pairs of two uncertain cells (both H > 0.1
nats), where the MI-guided sampler's budget acts.

Candidates are chosen on the dev set (training/head_probes.py --score: decode states of
the hard *validation* puzzles). This says what a chosen head scores where the issue's
target is stated, the test states; it is not a second dev set. A pairs file that is not
the shipped head's report (the head changed, the file did not) is refused by name: the
shipped head's recomputed estimates must equal the file's to float rounding.
Last stdout line: JSON.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mi_viz.bench import DEFAULT_HEAD, load_models  # noqa: E402
from mi_viz.fidelity import UNCERTAIN_NATS, head_at_pairs, metrics, pearson, read_pairs  # noqa: E402

COLUMNS = ("head", "n_params", "mix_layers", "attn_blocks", "n_pairs", "pearson", "spearman", "mae",
           "top_pair_recall", "auroc_structure_est", "pearson_uncertain", "auroc_structure_est_uncertain")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--head", action="append", default=[], help="a head checkpoint (repeat for several)")
    ap.add_argument("--pairs", default=str(ROOT / "results" / "sudoku" / "mi_report_pairs.npz"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=None, help="also write the rows here (CSV)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    pt, tokens = read_pairs(a.pairs)  # the report's pairs and its states (N, 81)
    tokens = torch.from_numpy(tokens.astype(np.int64))
    gt = pt.gt
    model, _, _ = load_models()
    rows = []
    for path in [str(DEFAULT_HEAD)] + a.head:
        _, head, _ = load_models(head=path, need_head=True)
        est = head_at_pairs(model, head, tokens, pt)
        if path == str(DEFAULT_HEAD):
            gap = float(np.abs(est - pt.est).max())
            if gap > 1e-5:
                raise SystemExit(f"{a.pairs} is not the shipped head's report (estimates differ by up to {gap:.3g} "
                                 f"nats): run the mi-report of `make results` first")
        m = metrics(dataclasses.replace(pt, est=est), tokens)
        unc = pt.hmin > UNCERTAIN_NATS
        name = str(Path(path).resolve().relative_to(ROOT)) if Path(path).resolve().is_relative_to(ROOT) else path
        rows.append({"head": name, "n_params": head.n_params(), "mix_layers": head.config.mix_layers,
                     "attn_blocks": len(head.attn_layers), **{k: m.get(k) for k in COLUMNS[4:] if k in m},
                     "pearson_uncertain": round(pearson(est[unc], gt[unc]), 4)})
        print(json.dumps(rows[-1]), flush=True)
    if a.out:
        with open(a.out, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=COLUMNS)
            w.writeheader()
            w.writerows(rows)
    print(json.dumps({"pairs": a.pairs, "n_states": len(tokens), "heads": rows}))


if __name__ == "__main__":
    main()
