"""Training a family backbone: the MDM objective on one alignment's rows, resumable, on the CPU.

    data = prepare(read_alignment("PF00595.align.80.fasta"))     # weights, held-out split
    train_family(data, "checkpoints/family_PF00595", TrainFamilyConfig(), progress=print_fn)

Rows are drawn with probability proportional to their sequence weight (1 / the number of
rows at >= 80 % identity), so a cluster of near-copies counts once, as in every
coevolution fit. 10 % of the rows, in whole identity groups, are held out
(alignment.split_heldout): the held-out MDM loss (fixed masks, t ~ U(0, 1)) picks the
weights that ship (OUT.*: the lowest held-out loss), and the held-out pseudo-perplexity at
15 % masking is logged beside the profile model's (column frequencies of the weighted
training rows, pseudocount 0.5 rows' worth): what the network knows beyond the columns.

Resumable: OUT_last.* holds the network, the AdamW state and the step; the batch of step s
is a pure function of (seed, s), so a resumed run is the run an uninterrupted one makes.
OUT_log.csv is the curve. Reports progress through a callback; never prints.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import torch

from ...core.objective import random_mask
from ...core.schedule import progress_of
from ...core.training import CsvLog, Resumable, Resumed, StepInfo, fit, resume_run
from .alignment import GAP, IDENTITY, Alignment, AlignmentError, frequencies, sequence_weights, split_heldout
from .backbone import FAMILY_MDM_KIND, FamilyBackbone, FamilyMDMConfig, family_lm_loss, save_family_mdm, to_tokens

log = logging.getLogger(__name__)

MAX_ROWS = 20_000  # the CPU budget: larger alignments are subsampled (prepare)
MAX_WIDTH = 300  # columns a family backbone accepts (the app states it up front)


@dataclass
class TrainFamilyConfig:
    batch_size: int = 64
    lr: float = 1e-3
    weight_decay: float = 0.1  # families are small: strong decay, and the held-out loss picks the weights
    warmup: int = 200
    # cosine decay over this many steps, or over max_minutes, whichever ends first. None: about 80 passes
    # over the training rows, between 1,500 and 4,000 steps (steps_for). Why: on PDZ (1,199 training rows)
    # the held-out loss bottomed near step 1,300 and rose after; larger families keep improving longer.
    max_steps: int | None = None
    max_minutes: float = 28.0  # total wall time across resumes (the CPU default: <= 30 min on 2 cores)
    eval_every: int = 200
    seed: int = 0


@dataclass
class FamilyData:
    alignment: Alignment  # every row (after subsampling)
    heldout: np.ndarray  # (N,) bool
    weights: np.ndarray  # (N,) sequence weights computed within each side of the split
    split: dict  # how the split was made (recorded in the checkpoint)

    @property
    def train_rows(self) -> np.ndarray:
        return self.alignment.rows[~self.heldout]

    @property
    def heldout_rows(self) -> np.ndarray:
        return self.alignment.rows[self.heldout]


def prepare(
    alignment: Alignment, frac: float = 0.1, seed: int = 0, theta: float = IDENTITY, max_rows: int = MAX_ROWS
) -> FamilyData:
    """Subsample (a seeded uniform draw of max_rows rows, before anything else, so the split and
    the weights are those of the subsample), split off whole identity groups, weight each side."""
    if alignment.width > MAX_WIDTH:
        raise AlignmentError(
            f"{alignment.source}: {alignment.width} columns; a family backbone takes at most {MAX_WIDTH}"
        )
    empty = np.flatnonzero((alignment.rows == GAP).all(0))
    if len(empty):
        raise AlignmentError(
            f"{alignment.source}: column{'s' if len(empty) > 1 else ''} {', '.join(str(c + 1) for c in empty[:10])}"
            f"{' ...' if len(empty) > 10 else ''} {'are gaps' if len(empty) > 1 else 'is a gap'} in every row: "
            "remove such columns first (they hold no residue to model or to map a structure onto)"
        )
    n_all, sha_all = len(alignment), alignment.sha256()
    if n_all > max_rows:
        keep = np.sort(np.random.default_rng(seed).choice(n_all, max_rows, replace=False))
        alignment = alignment.subset(keep)
    held = split_heldout(alignment.rows, frac, seed, theta)
    if held.all() or not held.any():
        raise AlignmentError(f"{alignment.source}: the rows form too few identity groups to hold {frac:.0%} out")
    w = np.empty(len(alignment))
    w[~held] = sequence_weights(alignment.rows[~held], theta)
    w[held] = sequence_weights(alignment.rows[held], theta)
    split = {
        "alignment_sha256": sha_all,
        "seed": seed,
        "heldout_frac": frac,
        "identity": theta,
        "rows": n_all,
        "max_rows": max_rows,
        "subsampled_to": len(alignment) if n_all > max_rows else None,
        "train_rows": int((~held).sum()),
        "heldout_rows": int(held.sum()),
        "neff_train": round(float(w[~held].sum()), 1),
        "neff_heldout": round(float(w[held].sum()), 1),
    }
    return FamilyData(alignment, held, w, split)


@torch.no_grad()
def evaluate(model, rows: np.ndarray, weights: np.ndarray, profile: np.ndarray, bs: int = 256) -> dict:
    """Held-out MDM loss (t ~ U(0, 1)) and CE at 15 % masking, fixed masks, each row weighted by
    its sequence weight; the profile model's CE on the same 15 % masks (nats)."""
    model.eval()
    g = torch.Generator().manual_seed(1234)
    x_all = to_tokens(rows)
    w_all = torch.as_tensor(weights, dtype=torch.float64)
    acc = {"mdm": [0.0, 0.0], "c15": [0.0, 0.0], "prof": [0.0, 0.0]}
    logprof = torch.as_tensor(np.log(profile))  # (L, 21)
    for s in range(0, len(rows), bs):
        x0, w = x_all[s : s + bs], w_all[s : s + bs]
        for key, ratio in (("mdm", None), ("c15", 0.15)):
            B, L = x0.shape
            m, _ = random_mask(torch.ones_like(x0, dtype=torch.bool), g, ratio)  # (B, L): core/objective's masks
            xt = torch.where(m, torch.full_like(x0, model.mask_id), x0)
            logp = torch.log_softmax(model(xt).double(), -1)  # (B, L, 21)
            v = torch.as_tensor(rows[s : s + bs], dtype=torch.long)
            ce = -logp.gather(2, v[..., None]).squeeze(2)  # (B, L)
            acc[key][0] += float((ce * m * w[:, None]).sum())
            acc[key][1] += float((m * w[:, None]).sum())
            if ratio is not None:
                pc = -logprof[torch.arange(L)[None], v]  # (B, L)
                acc["prof"][0] += float((pc * m * w[:, None]).sum())
                acc["prof"][1] += float((m * w[:, None]).sum())
    model.train()
    mdm, c15, prof = (acc[k][0] / max(acc[k][1], 1e-12) for k in ("mdm", "c15", "prof"))
    return {
        "heldout_mdm_loss": round(mdm, 5),
        "heldout_ce_15": round(c15, 5),
        "heldout_pseudo_ppl_15": round(math.exp(c15), 4),
        "profile_pseudo_ppl_15": round(math.exp(prof), 4),
    }


def profile_of(rows: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Column frequencies (L, 21) of weighted rows, pseudocount 0.5 rows' worth: the profile model."""
    fi, _ = frequencies(rows, weights, 0.0)
    neff = float(np.sum(weights))
    return (fi * neff + 0.5 / fi.shape[1]) / (neff + 0.5)


def steps_for(n_train: int, batch_size: int, epochs: float = 80.0) -> int:
    """The default step budget: `epochs` passes over the training rows, clipped to 1,500..4,000."""
    return int(min(4000, max(1500, round(epochs * n_train / batch_size))))


def train_family(
    data: FamilyData,
    out,
    tc: TrainFamilyConfig | None = None,
    mc: FamilyMDMConfig | None = None,
    family: str = "",
    extra: dict | None = None,
    progress: Callable[[int, int, dict], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> dict:
    """Train (or resume) a family backbone; OUT.* gets the weights with the lowest held-out loss.

    progress(step, max_steps, info) is called after every evaluation and, between them, at most
    once a second: info holds the last evaluation's metrics (none before the first), "fraction"
    (of the budget: steps or minutes, whichever ends first) and "wall_seconds". should_stop()
    lets a caller (the app) pause a run, which the same call resumes later. Returns the summary
    written into OUT.json's metrics."""
    tc = tc or TrainFamilyConfig()
    if tc.max_steps is None:
        tc = replace(tc, max_steps=steps_for(len(data.train_rows), tc.batch_size))
    L = data.alignment.width
    mc = mc or FamilyMDMConfig()
    mc = FamilyMDMConfig(**{**mc.to_dict(), "width": L, "family": family or mc.family})
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    last = out.with_name(out.name + "_last")
    log_path = out.with_name(out.name + "_log.csv")
    torch.manual_seed(tc.seed)
    model = FamilyBackbone(mc)
    opt = torch.optim.AdamW(model.parameters(), lr=tc.lr, weight_decay=tc.weight_decay, betas=(0.9, 0.98))
    state = _Run()
    resumable = Resumable(last, FAMILY_MDM_KIND, model, opt)
    other = "belongs to another run (its alignment differs)"
    same_split = lambda m: None if m["extra"].get("split") == data.split else other  # noqa: E731
    if paused := resume_run(resumable, check=same_split, say=False):
        meta, _ = paused
        state.step, state.best, state.wall = meta["step"], meta["extra"]["best"], meta["extra"]["wall_seconds"]
        log.info("resumed %s at step %d", last, state.step)
    train = data.train_rows
    wt = torch.as_tensor(data.weights[~data.heldout], dtype=torch.float64)
    x_train = to_tokens(train)  # (N, L)
    held, wh = data.heldout_rows, data.weights[data.heldout]
    profile = profile_of(train, data.weights[~data.heldout])
    info = {
        "family": mc.family,
        "alignment": data.alignment.source,
        "width": L,
        "split": data.split,
        "train": asdict(tc),
        **(extra or {}),
    }
    csv_log = CsvLog(log_path, ["step", "loss", "lr", "wall_seconds", *EVAL_COLUMNS], fresh=state.step == 0)
    told = time.time()  # when progress was last called

    def batch_loss(step: int) -> torch.Tensor:
        gen = torch.Generator().manual_seed(tc.seed * 1_000_003 + step)
        idx = torch.multinomial(wt, tc.batch_size, replacement=True, generator=gen)
        return family_lm_loss(model, x_train[idx], generator=gen)[0]

    def report(now: StepInfo) -> None:
        nonlocal told
        if progress is not None:
            told = time.time()
            progress(
                now.step,
                int(tc.max_steps or now.step),
                {**state.metrics, "fraction": now.progress, "wall_seconds": now.wall},
            )

    def after(now: StepInfo) -> bool:
        state.step, state.wall, state.progress = now.step, now.wall, now.progress
        stop = should_stop is not None and should_stop()
        if not (now.step % tc.eval_every == 0 or now.done or stop):
            if time.time() - told >= 1.0:
                report(now)
            return False
        m = state.metrics = evaluate(model, held, wh, profile)
        csv_log.row(
            [now.step, f"{now.loss.item():.4f}", f"{now.lr:.2e}", f"{now.wall:.0f}", *(m[c] for c in EVAL_COLUMNS)]
        )
        if m["heldout_mdm_loss"] < state.best:
            state.best = m["heldout_mdm_loss"]
            save_family_mdm(out, model, now.step, m, {**info, "wall_seconds": round(now.wall)})
        resumable.save(now.step, m, {**info, "best": state.best, "wall_seconds": now.wall})
        log.info("step %d loss %.4f %s", now.step, now.loss.item(), m)
        report(now)
        return stop

    state.progress = progress_of(state.step, state.wall, tc)
    try:
        fit(model, opt, tc, batch_loss, after, Resumed(state.step, state.wall))
    finally:
        csv_log.close()
    return {
        "step": state.step,
        "best_heldout_mdm_loss": state.best,
        "wall_seconds": round(state.wall),
        "finished": state.progress >= 1.0,
        **state.metrics,
    }


@dataclass
class _Run:
    """A family training's counters (resumed from OUT_last.json)."""

    step: int = 0
    best: float = float("inf")
    wall: float = 0.0
    progress: float = 0.0
    metrics: dict = field(default_factory=dict)


EVAL_COLUMNS = ("heldout_mdm_loss", "heldout_pseudo_ppl_15", "profile_pseudo_ppl_15")


def data_for(meta: dict, alignment: Alignment) -> FamilyData:
    """The split a checkpoint was trained with, recomputed from its alignment (the same file:
    its rows' sha256 must match the one recorded, or the held-out rows would not be held out)."""
    split = meta.get("extra", {}).get("split")
    if not split:
        raise ValueError("the checkpoint records no split: it is not a family backbone made by train_family")
    if alignment.sha256() != split["alignment_sha256"]:
        raise ValueError(
            f"{alignment.source} is not the alignment this backbone was trained on "
            f"(rows sha256 {alignment.sha256()} vs {split['alignment_sha256']} recorded in the checkpoint)"
        )
    return prepare(alignment, split["heldout_frac"], split["seed"], split["identity"], split.get("max_rows", MAX_ROWS))
