"""The protein head's numbers read honestly: beside its Pearson with the truth, its within-state
Pearson and two trivial baselines on the same held-out pairs, and a shuffled-residue control
of the truth itself.

    python -m benchmarks.protein_head_baselines [--proteins 24] [--out results/protein/head_baselines.json]

1. The committed report's pairs (results/protein/mi_report_pairs.npz: 64 held-out states, the
   truth and the shipped head at every masked pair): each state's entropies are read again
   from the shipped backbone (one pass), and protein.report.head_vs_baselines fits the two
   baselines (separation; separation + the two entropies) on half of the states and scores
   them and the head on the other half, pooled and within a state.
2. Shuffled residues: --proteins test proteins (length 50-100) each masked at a random half of
   its positions, the ground truth of that state and of the same state with the unmasked
   residues shuffled among the unmasked positions (composition kept, order destroyed). A
   truth that measures sequence structure should change; one that reads composition and
   separation should not. Reports both means, overall and between neighbours.
Prints, last, a one-line JSON.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch

from benchmarks.report import save
from mi_viz.core.cli_types import finite_float
from mi_viz.core.mi import ground_truth_mi
from mi_viz.core.mi_report import read_pairs
from mi_viz.core.reading import read_state
from mi_viz.domains import get_domain
from mi_viz.domains.protein.alphabet import MASK, PAD, encode
from mi_viz.domains.protein.fasta import read_fasta
from mi_viz.domains.protein.report import head_vs_baselines

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", default=str(ROOT / "results" / "protein" / "mi_report_pairs.npz"))
    ap.add_argument("--proteins", type=int, default=24)
    ap.add_argument("--eps", type=finite_float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(ROOT / "results" / "protein" / "head_baselines.json"))
    a = ap.parse_args(argv)
    protein = get_domain("protein")
    model = protein.load_model()
    pt, tokens = read_pairs(a.pairs)
    x = torch.as_tensor(tokens.astype(np.int64))
    H = np.zeros(x.shape)
    with torch.inference_mode():
        for s in range(len(x)):
            n = int((x[s] != PAD).sum())
            H[s, :n] = read_state(model, x[s : s + 1, :n]).entropy[0].double().numpy()
    res = {"report": Path(a.pairs).name, **head_vs_baselines(pt, H, a.seed)}

    g = np.random.default_rng(a.seed)
    seqs = [s for _, s in read_fasta(ROOT / "data" / "protein" / "heldout_test.fasta") if 50 <= len(s) <= 100]
    means = {"natural": [], "shuffled": [], "natural_neighbours": [], "shuffled_neighbours": []}
    for s in seqs[: a.proteins]:
        t = encode(s)
        m = torch.as_tensor(g.random(len(t)) < 0.5)
        nat = torch.where(m, torch.full_like(t, MASK), t)
        shuf = nat.clone()
        keep = (~m).nonzero().squeeze(1)
        shuf[keep] = nat[keep[torch.as_tensor(g.permutation(len(keep)))]]
        for name, state in (("natural", nat), ("shuffled", shuf)):
            with torch.inference_mode():
                mi = ground_truth_mi(model, state[None], eps=a.eps).mi[0].double().numpy()
            idx = m.nonzero().squeeze(1).numpy()
            iu = np.triu_indices(len(idx), 1)
            means[name].append(mi[np.ix_(idx, idx)][iu].mean())
            nb = [mi[i, i + 1] for i in idx if i + 1 < len(t) and m[i + 1]]
            means[name + "_neighbours"].append(float(np.mean(nb)) if nb else np.nan)
    res["shuffled_control"] = {
        "proteins": len(means["natural"]),
        **{f"mean_mi_{k}": round(float(np.nanmean(v)), 5) for k, v in means.items()},
    }
    res["shuffled_control"]["shuffled_over_natural"] = round(
        res["shuffled_control"]["mean_mi_shuffled"] / res["shuffled_control"]["mean_mi_natural"], 3
    )
    save(res, a.out)


if __name__ == "__main__":
    main()
