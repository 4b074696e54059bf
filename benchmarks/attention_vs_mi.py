"""Is attention as good a dependency proxy as the MI head? Both against the ground-truth MI.

    python -m benchmarks.attention_vs_mi [--domains sudoku protein family] [--family-states 64]

On the states of each domain's MI report, the backbone's own last-block attention (head-averaged,
sinks filtered at DAWN's bar, symmetrised: core.attention.dependency_map, the graph DAWN decodes
on) is read at every masked pair and scored against the truth as the head is: Pearson and
Spearman over pairs, the share of each state's top pairs it finds (top-pair recall), and where
the domain knows relations (Sudoku's rules, a family's structure contacts) the AUROC for them.
Sudoku and proteins reuse the committed pair tables (results/*/mi_report_pairs.npz: the states,
the truth and the head at every masked pair); the families' reports keep no pairs, so their
truth is recomputed here on the report's own states (family backbone.masked_rows, the same seed).
Attention is scale-free (a softmax share, not nats), so Pearson compares shapes, not values.

Writes results/attention_vs_mi.json.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch

from benchmarks.report import save
from mi_viz.core.attention import dependency_map
from mi_viz.core.mi import ground_truth_mi
from mi_viz.core.mi_report import PairTable, auroc, pair_table, pearson, read_pairs, spearman
from mi_viz.core.models import load_models
from mi_viz.core.reading import read_state
from mi_viz.domains import get_domain
from mi_viz.domains.family import family_domain, shipped_families
from mi_viz.domains.family.alignment import read_alignment
from mi_viz.domains.family.backbone import masked_rows
from mi_viz.domains.family.train import data_for

ROOT = Path(__file__).resolve().parents[1]
SINK = 10.0  # DAWN's sink bar, in uniform shares (dawn_rule.DAWN_DEFAULTS)


@torch.inference_mode()
def attention_at_pairs(model, tokens: torch.Tensor, pt: PairTable) -> np.ndarray:
    """(P,) the symmetric attention map of each state's own pass at the table's pairs."""
    out = np.empty(len(pt.state))
    for s in range(len(tokens)):
        A = read_state(model, tokens[s : s + 1], attention=True).attention
        assert A is not None
        D = dependency_map(A, SINK)[0].double().numpy()  # (L, L)
        sel = pt.state == s
        out[sel] = D[pt.i[sel], pt.j[sel]]
    return out


def recall(scores: np.ndarray, pt: PairTable, tokens, mask_id: int) -> float:
    """Mean over states of |top-m pairs by score & top-m by truth| / m, m = the state's masked count
    (mi_report's top-pair recall)."""
    r = []
    for s in range(len(tokens)):
        sel = np.nonzero(pt.state == s)[0]
        k = min(int((tokens[s] == mask_id).sum()), len(sel))
        if k:
            a = set(sel[np.argsort(-pt.gt[sel], kind="stable")[:k]])
            b = set(sel[np.argsort(-scores[sel], kind="stable")[:k]])
            r.append(len(a & b) / k)
    return float(np.mean(r))


def scores(pt: PairTable, att: np.ndarray, tokens, mask_id: int, relations: bool) -> dict:
    related = pt.relation > 0
    out: dict = {"n_states": len(tokens), "n_pairs": len(pt.gt)}
    for name, x in (("head", pt.est), ("attention", att)):
        out[name] = {
            "pearson": round(pearson(x, pt.gt), 4),
            "spearman": round(spearman(x, pt.gt), 4),
            "top_pair_recall": round(recall(x, pt, tokens, mask_id), 4),
            "auroc_structure": round(auroc(x, related), 4) if relations else None,
        }
    out["truth_auroc_structure"] = round(auroc(pt.gt, related), 4) if relations else None
    return out


def committed_domain(name: str) -> dict:
    dom = get_domain(name)
    model = dom.load_model()
    pt, tokens = read_pairs(ROOT / "results" / name / "mi_report_pairs.npz")
    t = torch.as_tensor(tokens.astype(np.int64))
    att = attention_at_pairs(model, t, pt)
    return scores(pt, att, t, model.mask_id, bool((pt.relation > 0).any()))


@torch.inference_mode()
def family(name: str, data_dir: Path, n_states: int, eps: float, seed: int) -> dict:
    """The family report's states (masked_rows, its seed), truth and head recomputed here."""
    dom = family_domain(name)
    model, head = load_models(dom, need_head=True)
    data = data_for(dom.meta, read_alignment(data_dir / name / f"{name}.align.80.fasta"))
    tokens = masked_rows(data.heldout_rows, n_states, seed)
    gt, est, asym = [], [], []
    for s in range(len(tokens)):
        x = tokens[s : s + 1]
        r = read_state(model, x, head)
        assert r.mi is not None
        g = ground_truth_mi(model, x, eps=eps)
        gt.append(g.mi[0])
        asym.append(g.asymmetry[0])
        est.append(r.mi[0])
    rel = dom.relations()
    pt = pair_table(
        tokens, torch.stack(gt), torch.stack(est), torch.stack(asym), model.mask_id, None, rel[0] if rel else None
    )
    att = attention_at_pairs(model, tokens, pt)
    return {**scores(pt, att, tokens, model.mask_id, rel is not None), "eps": eps}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--domains", nargs="*", default=["sudoku", "protein", "family"])
    ap.add_argument("--families", nargs="*", default=None, help="default: every shipped family")
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "protein_families"))
    ap.add_argument("--family-states", type=int, default=64, help="as the family reports (make family-results)")
    ap.add_argument("--eps", type=float, default=1e-2, help="the family reports' pruning tolerance")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(ROOT / "results" / "attention_vs_mi.json"))
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    res: dict = {"sink_uniform_shares": SINK}
    for d in a.domains:
        if d == "family":
            res["family"] = {
                f: family(f, Path(a.data), a.family_states, a.eps, a.seed) for f in a.families or shipped_families()
            }
        else:
            res[d] = committed_domain(d)
        print(d, "done", flush=True)
    save(res, a.out, {d: v for d, v in res.items() if d in ("sudoku", "protein")})


if __name__ == "__main__":
    main()
