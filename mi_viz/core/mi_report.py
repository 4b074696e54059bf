"""How well does the MI head reproduce the ground truth, and does MI recover known structure?

Used by `python -m mi_viz mi-report DOMAIN` and by the app's MI-estimator page. Generic:
the states come from the caller, the known relations between positions (Sudoku's units;
none for proteins) from the domain, as an (L, L) code matrix.

Metrics over masked pairs i < j of held-out states:
- pearson / spearman / mae between estimated and ground-truth MI (pooled pairs);
- top_pair_recall: per state, with m masked cells, the share of the m
  highest-ground-truth pairs that are also among the m highest-estimated pairs
  (mean over states);
- auroc_structure_gt / _est: how well MI separates pairs with a known relation
  (Sudoku: sharing a row, column or box) from all other masked pairs (AUROC, ties
  counted half); None where the domain knows no relations. The model is never told
  the rules: a high AUROC means the map recovered them.
- gt_directional_pearson: agreement of the two ground-truth directions (conditioning
  on i vs on j) over pairs: the model's self-consistency as one number
  (directional_agreement).
- auroc_structure_*_uncertain: the same over pairs whose two marginals both have
  entropy > UNCERTAIN_NATS (a near-certain cell has MI ~ 0 whatever its relation).
- each domain adds its own: Sudoku the structure by masking ratio
  (domains/sudoku/report.py), proteins the MI by sequence separation (domains/protein/report.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from numpy.typing import ArrayLike

from . import strict_json
from .mi import ground_truth_mi, marginals
from .npz import save_npz
from .protocol import MaskedModel
from .reading import read_state
from .samplers import SamplerConfig, decode


def sample_states(
    model: MaskedModel, start: torch.Tensor, n_states: int, seed: int = 0, cfg: SamplerConfig | None = None
) -> torch.Tensor:
    """States from decodes (sequential unless cfg says otherwise) of the starting states
    start (B, L), one per start at a random step (cycling through them until n_states):
    (N, L) tokens, >= 2 masked each."""
    res = decode(model, start, cfg or SamplerConfig("sequential"), keep_states=True)
    traj = torch.stack(res.states or [], 1)  # (B, T, L)
    g = np.random.default_rng(seed)
    out: list[torch.Tensor] = []
    k = 0
    while len(out) < n_states and k < 50 * n_states:
        b = k % len(start)
        T = len(res.batch_sizes[b])
        t = int(g.integers(0, max(1, T - 1)))  # keep >= 2 masked cells
        s = traj[b, t]
        if int((s == model.mask_id).sum()) >= 2:
            out.append(s)
        k += 1
    return torch.stack(out)


def midway_state(model: MaskedModel, x: torch.Tensor, seed: int, pick: Callable[[int], int], dev: str) -> torch.Tensor:
    """A state at a random step of an EB decode (gamma 1, temperature 1, `seed`) of x (L,) that
    still has >= 2 masked positions, chosen by pick(n) -> index (a random.Random's randrange); x
    itself if none has. The protein and antibody reports' decode states."""
    cfg = SamplerConfig("eb", gamma=1.0, temperature=1.0, seed=seed)
    res = decode(model, x[None].to(dev), cfg, keep_states=True)
    steps = [s[0] for s in res.states or [] if int((s[0] == model.mask_id).sum()) >= 2]
    return steps[pick(len(steps))].cpu() if steps else x


def auroc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Area under the ROC curve (scikit-learn; ties count half); nan when one class is absent."""
    from sklearn.metrics import roc_auc_score

    labels = np.asarray(labels).astype(bool)
    if labels.all() or not labels.any():
        return float("nan")
    return float(roc_auc_score(labels, np.asarray(scores, dtype=float)))


def pearson(a: ArrayLike, b: ArrayLike) -> float:
    """Pearson correlation (scipy); nan when either side is constant."""
    from scipy.stats import pearsonr

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(a) < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return float(pearsonr(a, b).statistic)


def spearman(a: ArrayLike, b: ArrayLike) -> float:
    """Spearman rank correlation (scipy; average ranks for ties)."""
    from scipy.stats import rankdata

    return pearson(rankdata(a), rankdata(b))


@dataclass
class PairTable:
    """Every masked pair i < j of every state, flattened (for plots and metrics)."""

    state: np.ndarray
    i: np.ndarray
    j: np.ndarray
    gt: np.ndarray
    est: np.ndarray
    asym: np.ndarray
    relation: np.ndarray  # the domain's relation code of each pair (0: none known)
    hmin: np.ndarray | None = None  # min(H_i, H_j), nats (absent in reports written before it existed)
    hgeo: np.ndarray | None = None  # sqrt(H_i H_j), nats (the trivial baselines'; absent in older reports)


UNCERTAIN_NATS = 0.1


def pair_table(
    tokens: torch.Tensor,
    gt_mi: torch.Tensor,
    est_mi: torch.Tensor,
    asym: torch.Tensor,
    mask_id: int,
    entropy: torch.Tensor | None = None,
    relations: np.ndarray | None = None,
) -> PairTable:
    """tokens (N, L); gt_mi / est_mi / asym (N, L, L); entropy (N, L) or None; relations (L, L)
    int codes from the domain, or None (no known relation: every pair 0)."""
    L = tokens.shape[1]
    rel = np.zeros((L, L), dtype=np.int64) if relations is None else relations
    rows: dict[str, list[np.ndarray]] = {
        k: [] for k in ("state", "i", "j", "gt", "est", "asym", "relation", "hmin", "hgeo")
    }
    for s in range(len(tokens)):
        m = np.nonzero((tokens[s] == mask_id).cpu().numpy())[0]
        ii, jj = np.triu_indices(len(m), 1)
        i, j = m[ii], m[jj]
        rows["state"].append(np.full(len(i), s))
        rows["i"].append(i)
        rows["j"].append(j)
        rows["gt"].append(gt_mi[s].cpu().numpy()[i, j])
        rows["est"].append(est_mi[s].cpu().numpy()[i, j])
        rows["asym"].append(asym[s].cpu().numpy()[i, j])
        rows["relation"].append(rel[i, j])
        if entropy is not None:
            h = entropy[s].cpu().numpy()
            rows["hmin"].append(np.minimum(h[i], h[j]))
            rows["hgeo"].append(np.sqrt(np.clip(h[i] * h[j], 0, None)))
    if entropy is None:
        rows.pop("hmin")
        rows.pop("hgeo")
    return PairTable(**{k: np.concatenate(v) for k, v in rows.items()})


PAIR_FIELDS = ("state", "i", "j", "gt", "est", "asym", "relation")


def read_pairs(path: str | Path) -> tuple[PairTable, np.ndarray]:
    """A report's pairs file (write_report's pairs) -> (PairTable, tokens (N, L) uint8).
    Files written before hmin existed load with hmin None."""
    z = np.load(path)
    opt = {k: (z[k] if k in z.files else None) for k in ("hmin", "hgeo")}
    fields = {k: z[k] for k in PAIR_FIELDS}
    return PairTable(**fields, hmin=opt["hmin"], hgeo=opt["hgeo"]), z["tokens"]


@torch.inference_mode()  # as mi_report runs the head
def head_at_pairs(model: MaskedModel, head: Any, tokens: ArrayLike, pt: PairTable) -> np.ndarray:
    """Another head's estimates (P,) at a pair table's pairs, each state read alone as
    mi_report reads it: scores any head on a report's states without recomputing the truth.
    tokens (N, L) are the table's states."""
    tokens = torch.as_tensor(np.asarray(tokens), dtype=torch.long)
    est = np.empty(len(pt.state), dtype=np.float32)
    for s in range(len(tokens)):
        r = read_state(model, tokens[s : s + 1], head)
        assert r.mi is not None  # a head was given
        mi = r.mi[0].numpy()  # (L, L)
        sel = pt.state == s
        est[sel] = mi[pt.i[sel], pt.j[sel]]
    return est


def entropy_bounds(
    gt: np.ndarray, est: np.ndarray, hmin: np.ndarray, hmean: np.ndarray | None = None, tol: float = 1e-6
) -> dict:
    """Over pairs (P,): the truth gt, the head est, min(H_i, H_j) and, when given,
    (H_i + H_j)/2 -> shares of pairs above each bound, the head's squared error on the
    pairs above the min (a head capped there cannot reach them), and Pearson without them.
    The symmetrised truth is bounded by the mean, by the min only for a consistent model."""
    above_min = gt > hmin + tol
    err2 = (gt - est) ** 2
    res = {
        "n_pairs": int(len(gt)),
        "share_above_min_entropy": round(float(above_min.mean()), 4),
        "head_sq_error_share_above_min": round(float(err2[above_min].sum() / max(err2.sum(), 1e-30)), 4),
        "head_above_min_entropy": int((est > hmin + tol).sum()),
        "pearson_all_pairs": round(pearson(est, gt), 4),
        "pearson_pairs_within_min": round(pearson(est[~above_min], gt[~above_min]), 4),
    }
    if hmean is not None:
        res["share_above_mean_entropy"] = round(float((gt > hmean + tol).mean()), 4)
        res["max_truth_over_mean_entropy"] = round(float((gt / np.maximum(hmean, 1e-12)).max()), 4)
    return res


def metrics(pt: PairTable, tokens: np.ndarray | torch.Tensor, mask_id: int, has_relations: bool = True) -> dict:
    """The report's pair metrics; the structure keys are None when the domain knows no relations."""
    recalls = []
    for s in range(len(tokens)):
        sel = pt.state == s
        m = int((tokens[s] == mask_id).sum())
        k = min(m, int(sel.sum()))
        if k == 0:
            continue
        top_gt = set(np.argsort(-pt.gt[sel], kind="stable")[:k])
        top_est = set(np.argsort(-pt.est[sel], kind="stable")[:k])
        recalls.append(len(top_gt & top_est) / k)
    related = pt.relation > 0
    return {
        "n_pairs": int(len(pt.gt)),
        "pearson": round(pearson(pt.est, pt.gt), 4),
        "spearman": round(spearman(pt.est, pt.gt), 4),
        "mae": round(float(np.abs(pt.est - pt.gt).mean()), 5),
        "top_pair_recall": round(float(np.mean(recalls)), 4),
        "auroc_structure_gt": round(auroc(pt.gt, related), 4) if has_relations else None,
        "auroc_structure_est": round(auroc(pt.est, related), 4) if has_relations else None,
        **(_uncertain_aurocs(pt, related) if has_relations else {}),
        **baselines(pt),
        "gt_directional_pearson": round(directional_agreement(pt), 4),
        "asymmetry_mean": round(float(pt.asym.mean()), 5),
        "asymmetry_p99": round(float(np.quantile(pt.asym, 0.99)), 5),
    }


def baselines(pt: PairTable) -> dict:
    """Two maps anyone could draw without a head, scored like it (Pearson is blind to their scale,
    so nothing is fitted): 1/|i-j| (dependence falls with sequence separation) and
    sqrt(H_i H_j)/|i-j| (and with the two positions' uncertainty). A head worth its training beats both."""
    sep = np.abs(pt.i - pt.j).astype(float)
    out = {"pearson_baseline_separation": round(pearson(1 / sep, pt.gt), 4)}
    if pt.hgeo is not None:
        out["pearson_baseline_entropy_separation"] = round(pearson(pt.hgeo / sep, pt.gt), 4)
    return out


def directional_agreement(pt: PairTable) -> float:
    """Pearson between the two ground-truth estimates of each pair, I_{i->j} (condition
    on i) and I_{j->i}, over both orders of every masked pair.

    A perfectly consistent joint gives 1. Below 1 it measures how far the model's own
    conditionals disagree about a pair (the map is their mean). It bounds nothing a head can
    reach: the disagreement is a property of the state, which a head reading the same pass can
    learn (docs/mi.md). The pair table keeps the mean and |difference|, which fix the two values up to order.
    """
    lo, hi = pt.gt - pt.asym / 2, pt.gt + pt.asym / 2
    return pearson(np.concatenate([lo, hi]), np.concatenate([hi, lo]))


def _uncertain_aurocs(pt: PairTable, related: np.ndarray) -> dict:
    if pt.hmin is None:
        return {}
    sel = pt.hmin > UNCERTAIN_NATS
    if related[sel].all() or not related[sel].any():
        return {}
    return {
        "n_pairs_uncertain": int(sel.sum()),
        "auroc_structure_gt_uncertain": round(auroc(pt.gt[sel], related[sel]), 4),
        "auroc_structure_est_uncertain": round(auroc(pt.est[sel], related[sel]), 4),
    }


@dataclass
class Report:
    """What mi_report measured: the summary (JSON-able), every masked pair, and the maps."""

    summary: dict
    pairs: PairTable
    tokens: torch.Tensor  # (N, L) the states
    gt: torch.Tensor  # (N, L, L) ground-truth MI
    est: torch.Tensor  # (N, L, L) the head's
    asym: torch.Tensor  # (N, L, L) |I_{i->j} - I_{j->i}|


@dataclass(frozen=True)
class ReportStates:
    """Which states a report reads: `given` (N, L) as they are, or `n` states drawn (seed) from
    sequential decodes of the starting states `start` (B, L)."""

    start: torch.Tensor | None = None
    n: int = 100
    seed: int = 0
    given: torch.Tensor | None = None


@torch.inference_mode()  # as decode: the head timed as the sampler runs it
def mi_report(
    model: MaskedModel,
    head: Any,
    states: ReportStates,
    eps: float = 1e-3,
    relations: np.ndarray | None = None,
    progress: Callable[[int, int], object] | None = None,
    target: str = "mi",
) -> Report:
    """Ground truth vs head on the states (ReportStates: drawn from sequential decodes of starting
    states, or given as they are). target "tv": a head trained on DEMASK's expected TV influence,
    against the exact TV map of the same passes (the pair table's gt / asym are then the TV's).

    Timing is per state, one state at a time (what the app does): a backbone
    pass alone, the head on that pass's hidden states, log-marginals and entropies (which
    any sampler has computed), and the ground truth.
    progress(done, total), when given, is called after each state (the app's progress bar).
    Returns a Report.
    """
    mask_id = model.mask_id
    if states.given is not None:
        tokens = states.given
    elif states.start is not None:
        tokens = sample_states(model, states.start, states.n, states.seed)
    else:
        raise ValueError("mi_report needs starting states to decode or the states themselves")
    gt_mi, est_mi, asym, passes, ent = [], [], [], [], []
    t_fwd = t_head = t_gt = 0.0
    warm = tokens[:1]
    head.read(head.backbone_pass(model, warm), warm == mask_id)  # a first read traces the head (once): not timed
    for s in range(len(tokens)):
        x = tokens[s : s + 1]
        t0 = time.perf_counter()
        out = head.backbone_pass(model, x)
        t1 = time.perf_counter()
        logp, H = marginals(out.logits, x == mask_id)  # (1, L, V), (1, L): what any sampler computes
        t1b = time.perf_counter()
        est = head.read(out, x == mask_id, logp, H)
        t2 = time.perf_counter()
        gt = ground_truth_mi(model, x, eps=eps)
        t3 = time.perf_counter()
        t_fwd, t_head, t_gt = t_fwd + t1 - t0, t_head + t2 - t1b, t_gt + t3 - t2
        truth, truth_asym = (gt.tv, gt.tv_asymmetry) if target == "tv" else (gt.mi, gt.asymmetry)
        gt_mi.append(truth[0])  # type: ignore[index]
        est_mi.append(est[0])
        ent.append(H[0])  # (L,) masked entropies: the pair table reads them at masked pairs only
        asym.append(truth_asym[0])  # type: ignore[index]
        passes.append(int(gt.passes[0]))
        if progress is not None:
            progress(s + 1, len(tokens))
    gt_t, est_t, asym_t = torch.stack(gt_mi), torch.stack(est_mi), torch.stack(asym)
    pt = pair_table(tokens, gt_t, est_t, asym_t, mask_id, torch.stack(ent), relations)
    n = len(tokens)
    summary = {
        **({"target": target} if target != "mi" else {}),  # an MI report reads as it always did
        "n_states": n,
        **metrics(pt, tokens, mask_id, relations is not None),
        "avg_masked": round(float((tokens == mask_id).sum(1).float().mean()), 2),
        "gt_passes_per_state": round(float(np.mean(passes)), 1),
        "gt_seconds_per_state": round(t_gt / n, 4),
        "forward_seconds_per_state": round(t_fwd / n, 5),
        "head_seconds_per_state": round(t_head / n, 5),
        "head_over_forward": round(t_head / max(t_fwd, 1e-12), 4),
        "eps": eps,
        "torch_threads": torch.get_num_threads(),
        "uncertain_nats": UNCERTAIN_NATS,
    }
    return Report(summary, pt, tokens, gt_t, est_t, asym_t)


def write_report(
    summary: dict, pt: PairTable, tokens: ArrayLike, out: str | Path, pairs: str | Path | None = None
) -> None:
    """A report's summary as JSON (out) and, optionally, every masked pair as .npz (pairs; read_pairs reads it)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(strict_json.dumps(summary, indent=1))
    if pairs:
        tok = tokens.cpu().numpy() if hasattr(tokens, "cpu") else np.asarray(tokens)
        save_npz(pairs, tokens=tok.astype("uint8"), **{k: getattr(pt, k) for k in (*PAIR_FIELDS, "hmin", "hgeo")})
