"""Train the MI head on the MI dataset, reading the frozen MDM's hidden states.

    python training/train_head.py --mdm checkpoints/sudoku_mdm --data runs/mi_data \
        --out checkpoints/sudoku_mi_head --steps 6000 --batch-size 32 --hidden-layers 2 --augment

Loss: squared Frobenius distance to the ground-truth map over masked pairs
(estimator.frobenius_loss). With --augment (the shipped head) every training state is
seen under a fresh random Sudoku symmetry at every step (symmetric_batch). 5 % of the
states (by a fixed permutation) are held out; the checkpoint keeps the weights with the
lowest held-out loss and records held-out Pearson correlation. OUT_log.csv beside the
checkpoint has the curve.

Resumable: at every evaluation OUT_last.safetensors / OUT_last.json get the head, the
AdamW state, the best held-out loss so far and the two random streams (as plain tensors,
written atomically); the same command run again continues from there, and the finished
run is the one an uninterrupted run would have made (tested). --stop-at N pauses a run
after step N (the schedule still spans --steps).
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_mi_dataset import load_mi_dataset  # noqa: E402

from mi_viz.checkpoints import (  # noqa: E402
    CheckpointError, load_state_strict, optimizer_from_tensors, optimizer_to_tensors, read_meta, read_tensors, save_checkpoint)
from mi_viz.estimator import HEAD_KIND, HeadConfig, MIHead, frobenius_loss, load_head, save_head  # noqa: E402
from mi_viz.fidelity import pearson  # noqa: E402
from mi_viz.models import load_mdm  # noqa: E402
from mi_viz.models.sudoku_mdm import MASK_TOKEN, apply_symmetry, permute_pairs, random_symmetries  # noqa: E402


@torch.no_grad()
def backbone_features(mdm, head, tokens, device, bs=256):
    """Everything the head reads from the frozen backbone, for every state, computed once:
    re-running a frozen backbone every epoch would only burn CPU. -> {hidden (N, L, D),
    logits (N, L, V), layers (N, n, L, D) or None, attn (N, K, L, L) or None}; fp16 except logits."""
    hs, ls, xs, ats = [], [], [], []
    for s in range(0, len(tokens), bs):
        o = head.backbone_pass(mdm, tokens[s : s + bs].to(device))
        hs.append(o.hidden.half().cpu())
        ls.append(o.logits.float().cpu())
        if head.hidden_layers:
            xs.append(torch.stack([o.layers[i] for i in head.hidden_layers], 1).half().cpu())
        if head.attn_layers:
            ats.append(torch.cat([o.attn[i] for i in head.attn_layers], 1).half().cpu())
    return {"hidden": torch.cat(hs), "logits": torch.cat(ls),
            "layers": torch.cat(xs) if xs else None, "attn": torch.cat(ats) if ats else None}


def predict(head, feats, tokens, idx, device):
    """The head's MI maps (b, L, L) for the states idx, from the cached backbone features."""
    x = tokens[idx].to(device)
    layers = attn = None
    if feats["layers"] is not None:
        t = feats["layers"][idx].to(device).float()  # (b, n, L, D)
        layers = {i: t[:, k] for k, i in enumerate(head.hidden_layers)}
    if feats["attn"] is not None:
        t = feats["attn"][idx].to(device).float()  # (b, K, L, L)
        h = head.config.n_heads
        attn = {i: t[:, k * h : (k + 1) * h] for k, i in enumerate(head.attn_layers)}
    return head(feats["hidden"][idx].to(device).float(), feats["logits"][idx].to(device), x == MASK_TOKEN,
                layers, attn)


@torch.no_grad()
def evaluate(head, feats, tokens, mi, idx, device, bs=256):
    """Held-out loss and Pearson over masked pairs for the states idx."""
    preds, gts, loss, n = [], [], 0.0, 0
    for s in range(0, len(idx), bs):
        sl = idx[s : s + bs]
        masked = tokens[sl].to(device) == MASK_TOKEN
        y = mi[sl].to(device).float()
        pred = predict(head, feats, tokens, sl, device)
        loss += frobenius_loss(pred, y, masked).item() * len(sl)
        n += len(sl)
        L = masked.shape[1]
        pair = masked[:, :, None] & masked[:, None, :] & ~torch.eye(L, dtype=torch.bool, device=device)
        pair &= torch.ones(L, L, dtype=torch.bool, device=device).triu(1)
        preds.append(pred[pair].cpu())
        gts.append(y[pair].cpu())
    r = pearson(torch.cat(preds).numpy(), torch.cat(gts).numpy())
    return loss / max(1, n), 0.0 if r != r else r  # constant predictions: 0, not nan


def symmetric_batch(tokens, mi, gen, device):
    """Training states under fresh random Sudoku symmetries: (tokens (b, L), target maps (b, L, L)).

    Why: the ground truth is nearly equivariant (the MDM was trained on symmetric copies:
    truth(g x) against g truth(x), Pearson 0.91 on 30 dev states) while a head trained
    without this was much less so (0.87): it had seen 4k states, each in one orientation;
    trained with it, 0.92 (results/sudoku/equivariance.json). The transformed board is run
    through the backbone (one pass per state and step, no ground-truth passes), and its
    target is the permuted truth of the original board.
    """
    cells, digits = random_symmetries(tokens.shape[0], gen)
    x = apply_symmetry(tokens, cells, digits).to(device)  # (b, L)
    y = permute_pairs(mi.float(), cells).to(device)  # (b, L, L)
    return x, y


def blocks(text: str) -> tuple[int, ...]:
    """'2,4' -> (2, 4); '' -> ()."""
    return tuple(int(i) for i in text.split(",") if i.strip())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mdm", default="checkpoints/sudoku_mdm")
    ap.add_argument("--data", default="runs/mi_data")
    ap.add_argument("--out", default="checkpoints/sudoku_mi_head")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--eval-every", type=int, default=250)
    ap.add_argument("--max-minutes", type=float, default=0.0, help="wall-time limit of this run (resumable)")
    ap.add_argument("--stop-at", type=int, default=0, help="pause after this step (resumable; 0: run to --steps)")
    ap.add_argument("--d-hidden", type=int, default=256)
    ap.add_argument("--rank", type=int, default=64)
    ap.add_argument("--d-pair", type=int, default=32)
    ap.add_argument("--pair-values", action="store_true", help="per-value overlap feature (HeadConfig.pair_values)")
    ap.add_argument("--global-context", type=int, default=0, help="pooled state summary width (HeadConfig.global_context)")
    ap.add_argument("--hidden-layers", default="", help="comma-separated backbone blocks the head also reads, e.g. 2")
    ap.add_argument("--attn-layers", default="", help="comma-separated blocks whose attention maps the head reads")
    ap.add_argument("--mix-layers", type=int, default=0, help="transformer blocks over the masked cells' embeddings")
    ap.add_argument("--attn-two-hop", action="store_true", help="also paths i->k->j of the maps (HeadConfig.attn_two_hop)")
    ap.add_argument("--excess", action="store_true", help="second term up to (H_i+H_j)/2 (HeadConfig.excess)")
    ap.add_argument("--link", action="store_true", help="feed the pair MLP the MI of a direct link (HeadConfig.link)")
    ap.add_argument("--mixture", type=int, default=0, help="K > 0: MI of a mixture of K products (HeadConfig.mixture)")
    ap.add_argument("--init", default=None, help="start from this head checkpoint (same config)")
    ap.add_argument("--train-states", type=int, default=0, help="use only this many training states (data-scaling probes; 0: all)")
    ap.add_argument("--extra-data", default=None, help="another MI data folder, added to the training states only")
    ap.add_argument("--augment", action="store_true",
                    help="a fresh random Sudoku symmetry per training state and step (backbone run on the "
                         "transformed board, target map permuted with it; see symmetric_batch)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    a = ap.parse_args(argv)
    torch.manual_seed(a.seed)
    mdm, mdm_meta = load_mdm(a.mdm, device=a.device)
    for p in mdm.parameters():
        p.requires_grad_(False)
    data = load_mi_dataset(a.data)
    tokens, mi = data["tokens"].long(), data["mi"]
    perm = torch.randperm(len(tokens), generator=torch.Generator().manual_seed(1234))
    n_val = max(1, len(tokens) // 20)
    val_idx, tr_idx = perm[:n_val], perm[n_val:]
    if a.train_states:
        tr_idx = tr_idx[: a.train_states]  # the held-out states stay the same
    if a.extra_data:  # training states only: the held-out split above stays the one of --data
        extra = load_mi_dataset(a.extra_data)
        tr_idx = torch.cat([tr_idx, torch.arange(len(tokens), len(tokens) + len(extra["tokens"]))])
        tokens = torch.cat([tokens, extra["tokens"].long()])
        mi = torch.cat([mi, extra["mi"].to(mi.dtype)])
    head = MIHead(HeadConfig(d_in=mdm.config.d_model, n_values=9, d_hidden=a.d_hidden, rank=a.rank,
                             d_pair=a.d_pair, pair_values=a.pair_values,
                             global_context=a.global_context,
                             hidden_layers=blocks(a.hidden_layers), attn_layers=blocks(a.attn_layers),
                             n_heads=mdm.config.n_head if blocks(a.attn_layers) else 0,
                             mix_layers=a.mix_layers, attn_two_hop=a.attn_two_hop, excess=a.excess, mixture=a.mixture,
                             link=a.link)).to(a.device)
    if a.init:
        init, _ = load_head(a.init)
        head.load_state_dict(init.state_dict())
    opt = torch.optim.AdamW(head.parameters(), lr=a.lr, weight_decay=0.01)
    warm = max(1, min(100, a.steps // 10))

    def lr_at(s):  # linear warm-up, cosine decay to 5 %; s = optimizer steps taken before this one
        return a.lr * min(1.0, (s + 1) / warm) * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * min(1.0, s / a.steps))))

    print(f"MI head {head.n_params():,} parameters; {len(tr_idx)} train / {n_val} held-out states", flush=True)
    t_feat = time.time()
    # with --augment every training batch runs the backbone on its own transformed boards, so
    # only the held-out states' features are ever read: cache those alone
    ev_tokens, ev_mi, ev_idx = (tokens[val_idx], mi[val_idx], torch.arange(n_val)) if a.augment else (tokens, mi, val_idx)
    feats = backbone_features(mdm, head, ev_tokens, a.device)
    print(f"backbone features for {len(ev_tokens)} states in {time.time() - t_feat:.0f}s", flush=True)
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    log_path = out.with_name(out.name + "_log.csv")
    last = out.with_name(out.name + "_last")
    best, done, wall0 = float("inf"), 0, 0.0
    g = torch.Generator().manual_seed(a.seed)
    g_aug = torch.Generator().manual_seed(a.seed + 1)  # its own stream: --augment leaves the batches' draws alone
    if last.with_name(last.name + ".json").exists():  # a paused run: continue it (a corrupt one is named, not overwritten)
        done, best, wall0 = resume(last, head, opt, g, g_aug, a)
        print(f"resumed from {last} at step {done} (best held-out loss {best:.4f})", flush=True)
    new_log = done == 0 or not log_path.exists()
    logf = open(log_path, "w" if new_log else "a", newline="")
    logw = csv.writer(logf)
    if new_log:
        logw.writerow(["step", "train_loss", "val_loss", "val_pearson", "seconds"])
    t0 = time.time() - wall0
    end = min(a.steps, a.stop_at) if a.stop_at else a.steps
    out_of_time = False
    for step in range(done + 1, end + 1):
        for group in opt.param_groups:
            group["lr"] = lr_at(step - 1)
        idx = tr_idx[torch.randint(0, len(tr_idx), (a.batch_size,), generator=g)]
        if a.augment:
            x, y = symmetric_batch(tokens[idx], mi[idx], g_aug, a.device)
            masked = x == MASK_TOKEN
            with torch.no_grad():
                out_b = head.backbone_pass(mdm, x)
            pred = head.read(out_b, masked)
        else:
            pred, y = predict(head, feats, tokens, idx, a.device), mi[idx].to(a.device).float()
            masked = tokens[idx].to(a.device) == MASK_TOKEN
        loss = frobenius_loss(pred, y, masked)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(head.parameters(), 1.0)
        opt.step()
        out_of_time = a.max_minutes and time.time() - t0 - wall0 > a.max_minutes * 60
        if step % a.eval_every == 0 or step == end or out_of_time:
            head.eval()
            vl, vp = evaluate(head, feats, ev_tokens, ev_mi, ev_idx, a.device)
            head.train()
            logw.writerow([step, f"{loss.item():.5f}", f"{vl:.5f}", f"{vp:.4f}", f"{time.time() - t0:.1f}"])
            logf.flush()
            print(f"step {step} train {loss.item():.4f} val {vl:.4f} pearson {vp:.4f}", flush=True)
            if vl < best:
                best = vl
                save_head(out, head, step, {"val_loss": vl, "val_pearson": vp},
                          {"mdm": str(a.mdm), "mdm_step": mdm_meta.get("step"), "n_train_states": len(tr_idx),
                           "n_val_states": n_val, "seconds": time.time() - t0, "device": a.device,
                           "args": vars(a)})
            save_last(last, head, opt, g, g_aug, step, best, time.time() - t0, a)
        if out_of_time:
            print("time budget reached; run the same command again to continue", flush=True)
            break
    logf.close()
    if end < a.steps and not out_of_time:
        print(f"paused at step {end} (--stop-at); run the same command without it to continue", flush=True)
    print(f"done: best held-out loss {best:.4f} -> {out}", flush=True)


# what must match between a paused run and its continuation (everything else may change)
RESUME_KEYS = ("data", "steps", "batch_size", "lr", "augment", "seed", "train_states", "extra_data", "mdm")


def save_last(last, head, opt, g, g_aug, step, best, wall, a):
    """The resumable state after `step`: head, AdamW, both random streams, as plain tensors."""
    ot, ometa = optimizer_to_tensors(opt)
    rng = {"rng.batches": g.get_state(), "rng.augment": g_aug.get_state()}
    extra = {"optimizer": ometa, "best": best, "wall_seconds": wall,
             "resume_args": {k: getattr(a, k) for k in RESUME_KEYS}}
    save_checkpoint(last, {**head.state_dict(), **ot, **rng}, HEAD_KIND, head.config.to_dict(), step, {}, extra)


def resume(last, head, opt, g, g_aug, a):
    """Load save_last's state into head / opt / generators -> (step, best, wall seconds).
    Refuses a paused run of another configuration by name: continuing it would mix two runs."""
    try:
        meta = read_meta(last, HEAD_KIND)
    except CheckpointError as e:
        raise SystemExit(f"cannot continue the paused run: {e}; delete {last}.* to start afresh") from None
    if meta["config"] != head.config.to_dict():
        raise SystemExit(f"{last}.json is a run of another head configuration ({meta['config']}); "
                         f"delete it or use another --out")
    was = meta["extra"].get("resume_args", {})
    changed = {k: (was.get(k), getattr(a, k)) for k in RESUME_KEYS if was.get(k) != getattr(a, k)}
    if changed:
        raise SystemExit(f"{last}.json was paused with other settings (was, now): {changed}; "
                         f"run with the same ones, or delete it / use another --out to start afresh")
    try:
        tensors = read_tensors(last)
    except CheckpointError as e:
        raise SystemExit(f"cannot continue the paused run: {e}; delete {last}.* to start afresh") from None
    load_state_strict(head, {k: v for k, v in tensors.items() if not k.startswith(("opt.", "rng."))},
                      where=f"paused run {last}")
    optimizer_from_tensors(opt, tensors, meta["extra"]["optimizer"])
    g.set_state(tensors["rng.batches"])
    g_aug.set_state(tensors["rng.augment"])
    return meta["step"], meta["extra"]["best"], meta["extra"].get("wall_seconds", 0.0)


if __name__ == "__main__":
    main()
