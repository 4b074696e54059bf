"""How equivariant under Sudoku's symmetries are the ground-truth MI map and the heads?

    python benchmarks/equivariance.py [--head PATH ...] [--states 30] \
        [--out results/sudoku/equivariance.json]

Relabelling digits, permuting rows inside bands, bands, the same for columns, and
transposing map a board to an equally valid one; a rule-following model's MI map
should move with its cells: MI(g x) = g MI(x). The MDM was trained on symmetric
copies, so it is close to that but not exactly. For each of the first --states
states of the head probes' dev set (decode states of the hard validation puzzles,
training/head_probes.py truth_set, cached there) one seeded random symmetry g is
drawn; the ground truth of g x is computed and compared, over the masked pairs, with
the permuted truth of x: Pearson, which says how much of the truth is the model's
orientation-dependent noise. Each head is compared the same way with itself, and
with the truth on both boards. Then, over all dev states, each head's map averaged
over K seeded orientations (mapped back) is compared with the truth: what a head of
the same quality but exactly equivariant would gain (K passes, so not a way to run
it). Last stdout line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "training"))

from head_probes import truth_set  # noqa: E402

from mi_viz.estimator import load_head  # noqa: E402
from mi_viz.fidelity import pair_table, pearson  # noqa: E402
from mi_viz.mi import ground_truth_mi  # noqa: E402
from mi_viz.models import load_mdm  # noqa: E402
from mi_viz.models.sudoku_mdm import MASK_TOKEN, apply_symmetry, permute_pairs, random_symmetries  # noqa: E402


def pearson_over_pairs(tokens, a, b) -> float:
    """Pearson of two maps (N, L, L) over the masked pairs i < j of tokens (N, L), taken by
    the fidelity report's own pair extraction."""
    pt = pair_table(tokens, a, b, torch.zeros_like(a))
    return round(pearson(pt.gt, pt.est), 4)


@torch.no_grad()
def head_maps(mdm, head, tokens: torch.Tensor) -> torch.Tensor:
    """The head's MI maps (N, L, L), one state at a time (as decoding and the report run it)."""
    return torch.cat([head.read(head.backbone_pass(mdm, x[None]), (x == MASK_TOKEN)[None]) for x in tokens])


@torch.no_grad()
def orientation_mean_pearson(mdm, head, tokens, truth, ks=(1, 2, 4, 8), seed: int = 1) -> dict:
    """{K: Pearson of the head's map averaged over K orientations against the truth}, over the
    masked pairs; K = 1 is the head as it runs. The first orientation is the identity."""
    acc = head_maps(mdm, head, tokens)  # (N, L, L)
    gen = torch.Generator().manual_seed(seed)
    res = {}
    for k in range(1, max(ks) + 1):
        if k > 1:
            cells, digits = random_symmetries(len(tokens), gen)
            back = torch.argsort(cells, 1)  # the inverse permutation: g^-1
            acc += permute_pairs(head_maps(mdm, head, apply_symmetry(tokens, cells, digits)), back)
        if k in ks:
            res[k] = pearson_over_pairs(tokens, acc / k, truth)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "sudoku_mdm"))
    ap.add_argument("--head", action="append", help="MI head checkpoint(s) (default: the shipped one)")
    ap.add_argument("--states", type=int, default=30)
    ap.add_argument("--dev-cache", default=str(ROOT / "runs" / "head_probes" / "dev_states.safetensors"))
    ap.add_argument("--dev-puzzles", default=str(ROOT / "data" / "sudoku" / "generated" / "val_puzzles.txt"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(ROOT / "results" / "sudoku" / "equivariance.json"))
    a = ap.parse_args()
    torch.set_num_threads(2)
    heads = a.head or [str(ROOT / "checkpoints" / "sudoku_mi_head")]
    mdm, _ = load_mdm(a.checkpoint)
    all_tokens, all_truth = truth_set("dev", a.checkpoint, Path(a.dev_cache), a.dev_puzzles, 100)
    all_truth = all_truth.float()
    tokens, truth = all_tokens[: a.states], all_truth[: a.states]  # (N, L), (N, L, L)
    cells, digits = random_symmetries(len(tokens), torch.Generator().manual_seed(a.seed))
    moved = apply_symmetry(tokens, cells, digits)  # (N, L): the transformed boards
    t0 = time.perf_counter()
    truth_moved = torch.cat([ground_truth_mi(mdm, x[None], eps=1e-3).mi for x in moved])  # (N, L, L)
    seconds = time.perf_counter() - t0
    truth_perm = permute_pairs(truth, cells)  # g truth(x)
    n_pairs = int(sum(m * (m - 1) // 2 for m in (moved == MASK_TOKEN).sum(1).tolist()))
    res = {"n_states": len(tokens), "n_pairs": n_pairs, "seed": a.seed, "n_dev_states": len(all_tokens),
           "truth_equivariance_pearson": pearson_over_pairs(moved, truth_moved, truth_perm),
           "truth_seconds": round(seconds, 1), "heads": []}
    for path in heads:
        head, _ = load_head(path)
        est = permute_pairs(head_maps(mdm, head, tokens), cells)  # g head(x)
        est_moved = head_maps(mdm, head, moved)  # head(g x)
        res["heads"].append({
            "head": str(Path(path).resolve().relative_to(ROOT)) if Path(path).resolve().is_relative_to(ROOT) else path,
            "head_equivariance_pearson": pearson_over_pairs(moved, est_moved, est),
            "pearson_vs_truth": pearson_over_pairs(moved, truth_perm, est),
            "pearson_vs_truth_moved": pearson_over_pairs(moved, truth_moved, est_moved),
            "orientation_mean_pearson": orientation_mean_pearson(mdm, head, all_tokens, all_truth),
        })
    print(f"truth(g x) against g truth(x): Pearson {res['truth_equivariance_pearson']} "
          f"({res['n_states']} dev states, {res['n_pairs']} masked pairs)")
    for h in res["heads"]:
        print(f"{h['head']}: head(g x) against g head(x) {h['head_equivariance_pearson']}; against the truth "
              f"{h['pearson_vs_truth']} (x), {h['pearson_vs_truth_moved']} (g x); averaged over K orientations, "
              f"against the truth on {res['n_dev_states']} dev states: {h['orientation_mean_pearson']}")
    Path(a.out).write_text(json.dumps(res, indent=1) + "\n")
    print(json.dumps(res))


if __name__ == "__main__":
    main()
