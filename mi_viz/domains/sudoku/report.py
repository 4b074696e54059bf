"""Sudoku's extra MI report: the structure AUROC on randomly masked solutions, by masking ratio.

On a mid-decode state of a hard puzzle the model's uncertainty is largely board-wide guesses
("if this cell is 3, that far cell is 7"), so unrelated cells are genuinely dependent under
the model and the AUROC of even the exact map is low; on a heavily masked valid board the
rules are the dominant dependence, which is where the paper's "the map recovers the rules"
picture lives. Both are reported (core.mi_report.mi_report gives the first); neither replaces
the other.
"""

from __future__ import annotations

import numpy as np
import torch

from ...core.mi import ground_truth_mi
from ...core.mi_report import auroc, pair_table, pearson


@torch.no_grad()
def structure_by_mask_ratio(
    model,
    head,
    solutions: torch.Tensor,
    relations: np.ndarray,
    ratios=(0.9, 0.75, 0.6),
    n_states: int = 8,
    eps: float = 1e-3,
    seed: int = 0,
) -> dict:
    """Structure AUROC of the exact and the estimated map on random maskings of complete,
    valid sequences (solutions (S, L) tokens): where the known relations are the only
    dependence left.

    For each ratio, n_states states: solution k (cycling), each position masked with
    that probability (>= 2 masked). Returns {ratio: {n_states, n_pairs, auroc_gt,
    auroc_est, pearson, gt_passes_per_state}}.
    """
    g = np.random.default_rng(seed)
    out = {}
    for ratio in ratios:
        states, gts, ests, passes = [], [], [], []
        for k in range(n_states):
            x = solutions[k % len(solutions)][None].clone()  # (1, L)
            m = g.random(x.shape[1]) < ratio
            while m.sum() < 2:
                m[g.integers(0, len(m))] = True
            x[0, torch.from_numpy(m).to(x.device)] = model.mask_id
            o = head.backbone_pass(model, x)
            ests.append(head.read(o, x == model.mask_id)[0])
            gt = ground_truth_mi(model, x, eps=eps)
            gts.append(gt.mi[0])
            states.append(x[0])
            passes.append(int(gt.passes[0]))
        gt_mi = torch.stack(gts)
        pt = pair_table(
            torch.stack(states), gt_mi, torch.stack(ests), torch.zeros_like(gt_mi), model.mask_id, relations=relations
        )
        lab = pt.relation > 0
        out[f"{ratio:g}"] = {
            "n_states": n_states,
            "n_pairs": int(len(lab)),
            "auroc_gt": round(auroc(pt.gt, lab), 4),
            "auroc_est": round(auroc(pt.est, lab), 4),
            "pearson": round(pearson(pt.est, pt.gt), 4),
            "gt_passes_per_state": round(float(np.mean(passes)), 1),
        }
    return out
