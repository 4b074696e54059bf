"""Train the MI head on an MI data set, reading the frozen backbone's hidden states.

    python training/train_head.py --domain sudoku --mdm checkpoints/sudoku_mdm \
        --data data/sudoku/mi_states.safetensors --out runs/head/sudoku_mi_head \
        --steps 6000 --batch-size 32 --hidden-layers 2 --mix-layers 2 --excess --augment
    python training/train_head.py --domain protein --mdm checkpoints/protein_mdm --data DATA ...

Loss: squared Frobenius distance to the ground-truth map over masked pairs
(mi_head.frobenius_loss). With --augment (the shipped Sudoku head) every training state is
seen under a fresh random symmetry of its domain at every step (symmetric_batch; Sudoku's
only: proteins have none). 5 % of the
states (by a fixed permutation) are held out; the checkpoint keeps the weights with the
lowest held-out loss and records held-out Pearson correlation. OUT_log.csv beside the
checkpoint has the curve.

The step loop, the schedule and the resume path are the training kit's (core.training.fit,
schedule.lr_at with a 5 % floor, resume_run), as for the MDM trainers. Resumable: at every
evaluation OUT_last.safetensors / OUT_last.json get the head, the AdamW state, the best
held-out loss so far and the two random streams (as plain tensors, written atomically); the
same command run again continues from there, and the finished run is the one an
uninterrupted run would have made (tested). --stop-at N pauses a run after step N (the
schedule still spans --steps); --max-minutes pauses this run after so many minutes.
The shipped heads were trained by this script's own loop before it moved onto the kit; the
two schedules differ only during warm-up (the old one multiplied it by the cosine term,
>= 0.9994 there).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from mi_viz.core.checkpoints import fingerprint, read_meta
from mi_viz.core.cli_types import finite_float
from mi_viz.core.errors import exit_on_user_error
from mi_viz.core.mi_data import MIDataError, load_mi_dataset
from mi_viz.core.mi_head import HEAD_KIND, TARGETS, HeadConfig, MIHead, frobenius_loss, load_head, save_head
from mi_viz.core.mi_report import pearson
from mi_viz.core.paths import portable
from mi_viz.core.training import CsvLog, Resumable, Resumed, StepInfo, fit, resume_run
from mi_viz.domains import DOMAINS, get_domain


@torch.no_grad()
def backbone_features(mdm, head, tokens, device, bs=256):
    """Everything the head reads from the frozen backbone, for every state, computed once:
    re-running a frozen backbone every epoch would only burn CPU. -> {hidden (N, L, D),
    logits (N, L, V), layers (N, n, L, D) or None}; fp16 except logits."""
    hs, ls, xs = [], [], []
    for s in range(0, len(tokens), bs):
        o = head.backbone_pass(mdm, tokens[s : s + bs].to(device))
        hs.append(o.hidden.half().cpu())
        ls.append(o.logits.float().cpu())
        if head.hidden_layers:
            xs.append(torch.stack([o.layers[i] for i in head.hidden_layers], 1).half().cpu())
    return {"hidden": torch.cat(hs), "logits": torch.cat(ls), "layers": torch.cat(xs) if xs else None}


def predict(head, feats, tokens, idx, device, mask_id):
    """The head's MI maps (b, L, L) for the states idx, from the cached backbone features."""
    x = tokens[idx].to(device)
    layers = None
    if feats["layers"] is not None:
        t = feats["layers"][idx].to(device).float()  # (b, n, L, D)
        layers = {i: t[:, k] for k, i in enumerate(head.hidden_layers)}
    return head(feats["hidden"][idx].to(device).float(), feats["logits"][idx].to(device), x == mask_id, layers)


@torch.no_grad()
def evaluate(head, feats, tokens, mi, idx, device, mask_id, bs=256):
    """Held-out loss and Pearson over masked pairs for the states idx."""
    preds, gts, loss, n = [], [], 0.0, 0
    for s in range(0, len(idx), bs):
        sl = idx[s : s + bs]
        masked = tokens[sl].to(device) == mask_id
        y = mi[sl].to(device).float()
        pred = predict(head, feats, tokens, sl, device, mask_id)
        loss += frobenius_loss(pred, y, masked).item() * len(sl)
        n += len(sl)
        L = masked.shape[1]
        pair = masked[:, :, None] & masked[:, None, :] & ~torch.eye(L, dtype=torch.bool, device=device)
        pair &= torch.ones(L, L, dtype=torch.bool, device=device).triu(1)
        preds.append(pred[pair].cpu())
        gts.append(y[pair].cpu())
    r = pearson(torch.cat(preds).numpy(), torch.cat(gts).numpy())
    return loss / max(1, n), 0.0 if r != r else r  # constant predictions: 0, not nan


def symmetric_batch(domain, tokens, mi, gen, device):
    """Training states under fresh random symmetries of the domain: (tokens (b, L), target maps (b, L, L)).

    Why: the Sudoku ground truth is nearly equivariant (the MDM was trained on symmetric
    copies) while a head trained without this was much less so: it had seen each state in
    one orientation (experiments/README.md, equivariance). The transformed state is run
    through the backbone (one pass per state and step, no ground-truth passes), and its
    target is the permuted truth of the original state.
    """
    x, y = domain.random_symmetry(tokens, mi.float(), gen)
    return x.to(device), y.to(device)


def blocks(text: str) -> tuple[int, ...]:
    """'2,4' -> (2, 4); '' -> ()."""
    return tuple(int(i) for i in text.split(",") if i.strip())


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--domain", default="sudoku", choices=list(DOMAINS))
    ap.add_argument("--mdm", default=None, help="the frozen backbone (default: the domain's shipped one)")
    ap.add_argument("--data", default="runs/mi_data")
    ap.add_argument("--out", default="runs/head/mi_head")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=finite_float, default=2e-3)
    ap.add_argument("--eval-every", type=int, default=250)
    ap.add_argument("--max-minutes", type=finite_float, default=0.0, help="wall-time limit of this run (resumable)")
    ap.add_argument("--stop-at", type=int, default=0, help="pause after this step (resumable; 0: run to --steps)")
    ap.add_argument("--d-hidden", type=int, default=256)
    ap.add_argument("--rank", type=int, default=64)
    ap.add_argument("--d-pair", type=int, default=32)
    ap.add_argument("--hidden-layers", default="", help="comma-separated backbone blocks the head also reads, e.g. 2")
    ap.add_argument("--mix-layers", type=int, default=0, help="transformer blocks over the masked cells' embeddings")
    ap.add_argument("--excess", action="store_true", help="second term up to (H_i+H_j)/2 (HeadConfig.excess)")
    ap.add_argument("--init", default=None, help="start from this head checkpoint (same config)")
    ap.add_argument(
        "--train-states", type=int, default=0, help="use only this many training states (data-scaling probes; 0: all)"
    )
    ap.add_argument("--extra-data", default=None, help="another MI data folder, added to the training states only")
    ap.add_argument(
        "--augment",
        action="store_true",
        help="a fresh random symmetry of the domain per training state and step (Sudoku; backbone "
        "run on the transformed board, target map permuted with it; see symmetric_batch)",
    )
    ap.add_argument(
        "--target",
        default="mi",
        choices=TARGETS,
        help="the map learned: mi (the paper's) or tv (DEMASK's expected TV influence, same states, same passes)",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    return ap


@dataclass
class Backbone:
    """The frozen backbone the head reads, and what the head's checkpoint records of it."""

    domain: Any
    model: Any
    step: int | None  # its training step, when its checkpoint says
    sha: str  # the fingerprint of the weights it was loaded from (models.load_kind checks it)


def frozen_backbone(a) -> Backbone:
    domain = get_domain(a.domain)
    if a.augment and not hasattr(domain, "random_symmetry"):
        raise SystemExit(f"--augment: the {a.domain} domain has no symmetries to train under")
    a.mdm = str(a.mdm or domain.default_model)
    mdm = domain.load_model(a.mdm, device=a.device)
    step = read_meta(a.mdm).get("step") if Path(a.mdm + ".json").exists() else None
    sha = fingerprint(domain.weights(a.mdm) if hasattr(domain, "weights") else a.mdm)
    for p in mdm.parameters():
        p.requires_grad_(False)
    return Backbone(domain, mdm, step, sha)


@dataclass
class Targets:
    """The states and their target maps (B, L) / (B, L, L), split into training and held-out states."""

    tokens: torch.Tensor
    maps: torch.Tensor  # the target measure's maps (MI or TV), whatever --target names
    train_idx: torch.Tensor
    val_idx: torch.Tensor


def targets_of(a) -> Targets:
    """--data's states (and --extra-data's, training only), split 95/5 by a fixed seed: the held-out
    states are the same whatever --train-states and --extra-data say."""
    try:
        data = load_mi_dataset(a.data)
        extra = load_mi_dataset(a.extra_data) if a.extra_data else None
    except MIDataError as e:
        raise SystemExit(f"error: {e}") from None
    if a.target not in data:
        raise SystemExit(
            f"error: {a.data} holds no {a.target!r} maps "
            "(its states were made before DEMASK's TV was kept: make them again)"
        )
    tokens, maps = data["tokens"].long(), data[a.target]
    perm = torch.randperm(len(tokens), generator=torch.Generator().manual_seed(1234))
    n_val = max(1, len(tokens) // 20)
    val_idx, tr_idx = perm[:n_val], perm[n_val:]
    if a.train_states:
        tr_idx = tr_idx[: a.train_states]  # the held-out states stay the same
    if extra is not None:  # training states only: the held-out split above stays the one of --data
        tr_idx = torch.cat([tr_idx, torch.arange(len(tokens), len(tokens) + len(extra["tokens"]))])
        tokens = torch.cat([tokens, extra["tokens"].long()])
        maps = torch.cat([maps, extra[a.target].to(maps.dtype)])
    return Targets(tokens, maps, tr_idx, val_idx)


def new_head(a, mdm) -> MIHead:
    head = MIHead(
        HeadConfig(
            d_in=mdm.d_model,
            n_values=len(mdm.value_tokens),
            d_hidden=a.d_hidden,
            rank=a.rank,
            d_pair=a.d_pair,
            hidden_layers=blocks(a.hidden_layers),
            mix_layers=a.mix_layers,
            excess=a.excess,
            target=a.target,
        )
    ).to(a.device)
    if a.init:
        init, _ = load_head(a.init)
        head.load_state_dict(init.state_dict())
    return head


def main(argv=None):
    a = parser().parse_args(argv)
    torch.manual_seed(a.seed)
    bb = frozen_backbone(a)
    data = targets_of(a)
    head = new_head(a, bb.model)
    train(a, bb, data, head)


def train(a, bb: Backbone, data: Targets, head: MIHead) -> None:
    """The fit, resumable: held-out loss and Pearson every --eval-every steps, the best head saved,
    the run's state in OUT_last (the same command continues it after a pause or a kill)."""
    domain, mdm, mask_id = bb.domain, bb.model, bb.model.mask_id
    tokens, mi, tr_idx, val_idx = data.tokens, data.maps, data.train_idx, data.val_idx  # mi: the target map
    n_val = len(val_idx)
    opt = torch.optim.AdamW(head.parameters(), lr=a.lr, weight_decay=0.01)
    # the kit's schedule: warm-up over a tenth of the steps (at most 100), cosine to 5 % by step
    # (--max-minutes pauses a run, it does not shorten the schedule: max_minutes 0 here)
    tc = HeadSchedule(lr=a.lr, warmup=max(1, min(100, a.steps // 10)), max_steps=a.steps)
    size = f"{head.n_params():,} parameters; {len(tr_idx)} train / {n_val} held-out states"
    print(f"{a.target.upper()} head {size}", flush=True)
    t_feat = time.time()
    # with --augment every training batch runs the backbone on its own transformed boards, so
    # only the held-out states' features are ever read: cache those alone
    ev_tokens, ev_mi, ev_idx = (
        (tokens[val_idx], mi[val_idx], torch.arange(n_val)) if a.augment else (tokens, mi, val_idx)
    )
    feats = backbone_features(mdm, head, ev_tokens, a.device)
    print(f"backbone features for {len(ev_tokens)} states in {time.time() - t_feat:.0f}s", flush=True)
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    last = Resumable(out.with_name(out.name + "_last"), HEAD_KIND, head, opt)
    state = {"best": float("inf"), "step": 0, "wall": 0.0}
    g = torch.Generator().manual_seed(a.seed)
    g_aug = torch.Generator().manual_seed(a.seed + 1)  # its own stream: --augment leaves the batches' draws alone

    def same_settings(meta):
        was = meta["extra"].get("resume_args", {})
        changed = {k: (was.get(k), getattr(a, k)) for k in RESUME_KEYS if was.get(k) != getattr(a, k)}
        return f"was paused with other settings (was, now): {changed}" if changed else None

    if paused := resume_run(last, check=same_settings, say=False):  # a corrupt one is named, not overwritten
        meta, rng = paused
        g.set_state(rng["rng.batches"])
        g_aug.set_state(rng["rng.augment"])
        state.update(step=meta["step"], best=meta["extra"]["best"], wall=meta["extra"].get("wall_seconds", 0.0))
        print(f"resumed from {last.path} at step {state['step']} (best held-out loss {state['best']:.4f})", flush=True)
    csv_log = CsvLog(
        out.with_name(out.name + "_log.csv"),
        ["step", "train_loss", "val_loss", "val_pearson", "seconds"],
        fresh=state["step"] == 0,
    )
    run_t0 = time.time()  # --max-minutes counts this run's time

    def batch_loss(step: int) -> torch.Tensor:
        idx = tr_idx[torch.randint(0, len(tr_idx), (a.batch_size,), generator=g)]
        if a.augment:
            x, y = symmetric_batch(domain, tokens[idx], mi[idx], g_aug, a.device)
            masked = x == mask_id
            with torch.no_grad():
                out_b = head.backbone_pass(mdm, x)
            pred = head.read(out_b, masked)
        else:
            pred, y = predict(head, feats, tokens, idx, a.device, mask_id), mi[idx].to(a.device).float()
            masked = tokens[idx].to(a.device) == mask_id
        return frobenius_loss(pred, y, masked)

    def after(info: StepInfo) -> bool:
        out_of_time = bool(a.max_minutes) and time.time() - run_t0 > a.max_minutes * 60
        state.update(step=info.step, wall=info.wall, out_of_time=out_of_time)
        if info.step % a.eval_every and not (info.done or out_of_time):
            return False
        head.eval()
        vl, vp = evaluate(head, feats, ev_tokens, ev_mi, ev_idx, a.device, mask_id)
        head.train()
        csv_log.row([info.step, f"{info.loss.item():.5f}", f"{vl:.5f}", f"{vp:.4f}", f"{info.wall:.1f}"])
        print(f"step {info.step} train {info.loss.item():.4f} val {vl:.4f} pearson {vp:.4f}", flush=True)
        if vl < state["best"]:
            state["best"] = vl
            about = {"domain": a.domain, "mdm": portable(a.mdm), "mdm_step": bb.step, "mdm_sha": bb.sha,
                     "n_train_states": len(tr_idx), "n_val_states": n_val, "seconds": info.wall, "device": a.device,
                     "args": {**vars(a), "mdm": portable(a.mdm)}}  # fmt: skip
            save_head(out, head, info.step, {"val_loss": vl, "val_pearson": vp}, about)
        rng = {"rng.batches": g.get_state(), "rng.augment": g_aug.get_state()}
        resume_args = {k: getattr(a, k) for k in RESUME_KEYS}
        last.save(info.step, {}, {"best": state["best"], "wall_seconds": info.wall, "resume_args": resume_args}, rng)
        return out_of_time  # a pause: the same command continues

    if state["step"] < min(a.steps, a.stop_at or a.steps):
        fit(
            head, opt, tc, batch_loss, after, Resumed(int(state["step"]), state["wall"]), stop_at_step=a.stop_at or None
        )
    csv_log.close()
    if state.get("out_of_time"):
        print("time budget reached; run the same command again to continue", flush=True)
    elif a.stop_at and state["step"] < a.steps:
        print(f"paused at step {state['step']} (--stop-at); run the same command without it to continue", flush=True)
    print(f"done: best held-out loss {state['best']:.4f} -> {out}", flush=True)


@dataclass
class HeadSchedule:
    """The head's training budget as the kit's schedule reads it (schedule.lr_at, progress_of)."""

    lr: float
    warmup: int
    max_steps: int
    max_minutes: float = 0.0
    lr_floor: float = 0.05


# what must match between a paused run and its continuation (everything else may change)
RESUME_KEYS = ("data", "steps", "batch_size", "lr", "augment", "seed", "train_states", "extra_data", "mdm", "target")


if __name__ == "__main__":
    exit_on_user_error(main)
