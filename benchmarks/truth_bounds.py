"""Which entropy bound does the ground-truth MI map obey, and what does the head's bound cost?

    python benchmarks/truth_bounds.py [--pairs results/sudoku/mi_report_pairs.npz] \
        [--out results/sudoku/truth_bounds.json]

The map is the mean of I(i->j) <= H_i and I(j->i) <= H_j, so it is bounded by
(H_i + H_j)/2; min(H_i, H_j) bounds it only where the model is a consistent joint. The
shipped head is capped at min(H_i, H_j) (docs/mi.md, `excess`). This reads the
fidelity report's pairs file (every masked pair of its 100 held-out states, truth and
head), recomputes the marginal entropies of those states with the same MDM, and prints
how many pairs lie above each bound and how much of the head's squared error sits on
the pairs above the min. Last stdout line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mi_viz.fidelity import entropy_bounds, read_pairs  # noqa: E402
from mi_viz.models import load_mdm  # noqa: E402
from mi_viz.models.sudoku_mdm import MASK_TOKEN  # noqa: E402
from mi_viz.samplers import marginals  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", default=str(ROOT / "results" / "sudoku" / "mi_report_pairs.npz"))
    ap.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "sudoku_mdm"))
    ap.add_argument("--out", default=str(ROOT / "results" / "sudoku" / "truth_bounds.json"))
    a = ap.parse_args()
    pt, tok = read_pairs(a.pairs)
    model, _ = load_mdm(a.checkpoint)
    tokens = torch.as_tensor(tok).long()  # (N, 81)
    with torch.no_grad():
        _, H = marginals(model.forward_tokens(tokens).logits, tokens == MASK_TOKEN)  # (N, 81)
    H = H.numpy()
    s, i, j = pt.state, pt.i, pt.j
    if pt.hmin is not None and not np.allclose(np.minimum(H[s, i], H[s, j]), pt.hmin, atol=1e-5):
        raise SystemExit(f"{a.pairs} was not made with {a.checkpoint}: its entropies differ")
    res = {"pairs_file": str(Path(a.pairs).relative_to(ROOT) if Path(a.pairs).is_relative_to(ROOT) else a.pairs),
           "n_states": int(len(tokens)), **entropy_bounds(pt.gt, pt.est, np.minimum(H[s, i], H[s, j]), (H[s, i] + H[s, j]) / 2)}
    for k, v in res.items():
        print(f"{k:<34} {v}")
    Path(a.out).write_text(json.dumps(res, indent=1) + "\n")
    print(json.dumps(res))


if __name__ == "__main__":
    main()
