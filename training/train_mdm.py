"""Train the Sudoku masked diffusion model (MDM objective: docs/mi.md).

    python training/train_mdm.py --preset cpu   --run-dir runs/mdm_cpu      # hours, background
    python training/train_mdm.py --preset paper --run-dir runs/mdm_paper    # on a GPU
    torchrun --nproc_per_node 2 training/train_mdm.py --preset tiny --run-dir /tmp/r   # DDP

Resumable: every --save-every steps the run folder gets `last.safetensors` /
`last.json` (model + AdamW state as plain tensors, written atomically); run the
same command again and it continues from there, with the same data order.
`best.*` keeps the weights with the best validation solve rate (sequential
decoding on held-out training-distribution puzzles). `log.csv` has the loss
curve; `loss.png` plots it. Data: random complete grids, with random
validity-preserving symmetries (digit relabelling, line swaps inside bands,
band swaps, transpose) applied on the fly; the model never sees rule features.
Under torchrun each rank draws its own batches (DDP averages the gradients);
gloo on CPU, nccl on GPU.
"""

from __future__ import annotations

import argparse
import csv
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.distributed as dist

from mi_viz.core.checkpoints import (
    optimizer_from_tensors,
    optimizer_to_tensors,
    read_meta,
    read_tensors,
    save_checkpoint,
)
from mi_viz.core.plots import save_png
from mi_viz.core.samplers import SamplerConfig, decode
from mi_viz.core.schedule import lr_at, progress_of
from mi_viz.domains.sudoku import board as S
from mi_viz.domains.sudoku.mdm import MDM_KIND, MDMConfig, SudokuMDM, boards_to_tokens, mdm_loss, save_mdm
from mi_viz.domains.sudoku.symmetries import apply_symmetry, random_symmetries

PRESETS = {
    # name: (model config, training config overrides)
    "tiny": (
        dict(n_layers=2, n_heads=2, d_model=32),
        dict(batch_size=16, lr=3e-3, max_steps=20, save_every=10, eval_every=10, n_val=8),
    ),
    "cpu": (
        dict(n_layers=6, n_heads=4, d_model=128),
        dict(batch_size=64, lr=1e-3, max_steps=40_000, save_every=200, eval_every=1000, n_val=100),
    ),
    "paper": (
        dict(n_layers=6, n_heads=8, d_model=256, mlp_ratio=3),
        dict(batch_size=256, lr=1e-3, max_steps=4_000, save_every=1000, eval_every=1000, n_val=200),
    ),
}


@dataclass
class TrainConfig:
    batch_size: int = 64  # per process
    lr: float = 1e-3
    weight_decay: float = 0.01
    warmup: int = 200
    max_steps: int = 10_000  # cosine decay to 10 % of lr over this many steps
    max_minutes: float = 0.0  # total training wall time (across resumes); 0 = no limit
    save_every: int = 200
    eval_every: int = 1000
    n_val: int = 100
    augment: bool = True
    seed: int = 0


def augment(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Random Sudoku symmetries, one per board. x (B, 81) tokens 0..8 -> (B, 81)."""
    return apply_symmetry(x, *random_symmetries(x.shape[0], gen))


def load_grids(path) -> torch.Tensor:
    boards = [S.parse_board(line.strip(), check_rules=False) for line in open(path) if line.strip()]
    return boards_to_tokens(boards)  # (N, 81)


def load_val(path, n):
    """Validation puzzles: the last n rows of the training-puzzle CSV (never decoded
    for the MI set, never the test sets)."""
    import csv as _csv

    rows = list(_csv.DictReader(open(path)))[-n:]
    return [S.parse_board(r["puzzle"]) for r in rows]


@torch.no_grad()
def evaluate(model, val_boards, device) -> dict:
    model.eval()
    x = boards_to_tokens(val_boards).to(device)
    res = decode(model, x, SamplerConfig("sequential"))
    boards = [[t + 1 for t in row] for row in res.tokens.tolist()]
    solved = [S.is_solution(b, p) for b, p in zip(boards, val_boards)]
    model.train()
    return {"val_solved": sum(solved) / max(1, len(solved))}


def plot_loss(log_path: Path, out_png: Path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    rows = list(csv.DictReader(open(log_path)))
    if not rows:
        return
    steps = [int(r["step"]) for r in rows]
    loss = [float(r["loss"]) for r in rows]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(steps, loss, lw=0.8)
    ax.set_xlabel("step")
    ax.set_ylabel("masked cross-entropy (nats)")
    ax.set_yscale("log")
    ax.set_title("Sudoku MDM training loss")
    fig.tight_layout()
    save_png(fig, out_png, dpi=120)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", choices=sorted(PRESETS), default="cpu")
    ap.add_argument("--run-dir", required=True, help="run folder (resumes from RUN/last.* if present)")
    ap.add_argument("--data", default="data/sudoku/generated/train_grids.txt")
    ap.add_argument("--val", default="data/sudoku/generated/train_puzzles.csv")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    for f in TrainConfig.__dataclass_fields__.values():
        if f.type in ("int", "float"):
            ap.add_argument("--" + f.name.replace("_", "-"), type=eval(f.type), default=None)
    ap.add_argument("--no-augment", action="store_true")
    ap.add_argument(
        "--stop-at-step",
        type=int,
        default=None,
        help="stop (and save) at this step without changing the schedule: split a long run into chunks",
    )
    a = ap.parse_args(argv)

    ddp = "WORLD_SIZE" in os.environ and int(os.environ["WORLD_SIZE"]) > 1
    rank, world = 0, 1
    device = a.device
    if ddp:
        backend = "nccl" if device.startswith("cuda") else "gloo"
        dist.init_process_group(backend)
        rank, world = dist.get_rank(), dist.get_world_size()
        if device.startswith("cuda"):
            device = f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}"
            torch.cuda.set_device(device)
    master = rank == 0

    mcfg_d, tc_d = PRESETS[a.preset]
    tc = TrainConfig(**tc_d)
    for f in TrainConfig.__dataclass_fields__:
        v = getattr(a, f, None)
        if v is not None:
            setattr(tc, f, v)
    tc.augment = not a.no_augment
    run = Path(a.run_dir)
    run.mkdir(parents=True, exist_ok=True)

    torch.manual_seed(tc.seed)
    model = SudokuMDM(MDMConfig(**mcfg_d)).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=tc.lr, weight_decay=tc.weight_decay, betas=(0.9, 0.98))
    step, best, examples, wall = 0, -1.0, 0, 0.0
    last = run / "last"
    if (run / "last.json").exists():
        meta = read_meta(last, MDM_KIND)
        if meta["config"] != model.config.to_dict():
            raise SystemExit(f"{last}.json was trained with another architecture: {meta['config']}")
        tensors = read_tensors(last)
        model.load_state_dict({k: v for k, v in tensors.items() if not k.startswith("opt.")})
        optimizer_from_tensors(opt, {k: v.to(device) for k, v in tensors.items()}, meta["extra"]["optimizer"])
        step, best = meta["step"], meta["extra"].get("best", -1.0)
        examples, wall = meta["extra"].get("examples", 0), meta["extra"].get("wall_seconds", 0.0)
        if master:
            print(f"resumed from {last} at step {step}", flush=True)
    net = torch.nn.parallel.DistributedDataParallel(model) if ddp else model

    grids = load_grids(a.data)
    val = load_val(a.val, tc.n_val) if master and Path(a.val).exists() else []
    if master:
        print(
            f"{model.n_params():,} parameters; {len(grids):,} training grids; preset {a.preset}; "
            f"world {world}; device {device}",
            flush=True,
        )
    log_path = run / "log.csv"
    new_log = not log_path.exists()
    logf = open(log_path, "a", newline="") if master else None
    logw = csv.writer(logf) if master else None
    if master and new_log:
        logw.writerow(["step", "loss", "lr", "examples", "wall_seconds", "val_solved"])

    def checkpoint(metrics):
        ot, ometa = optimizer_to_tensors(opt)
        tensors = {**model.state_dict(), **ot}
        extra = {
            "optimizer": ometa,
            "best": best,
            "examples": examples,
            "wall_seconds": wall,
            "train": asdict(tc),
            "preset": a.preset,
            "world_size": world,
            "data": a.data,
        }
        save_checkpoint(last, tensors, MDM_KIND, model.config.to_dict(), step, metrics, extra)

    amp = (
        torch.autocast("cuda", dtype=torch.bfloat16)
        if device.startswith("cuda")
        else torch.autocast("cpu", enabled=False)
    )
    t_start = time.time()
    wall0 = wall
    model.train()
    metrics = {}
    prog = progress_of(step, wall, tc)
    loss = torch.tensor(float("nan"))
    while prog < 1.0:
        # data order is a pure function of (seed, step, rank): resuming replays nothing
        gen = torch.Generator().manual_seed(tc.seed * 1_000_003 + step * 97 + rank)
        idx = torch.randint(0, len(grids), (tc.batch_size,), generator=gen)
        x0 = grids[idx]
        if tc.augment:
            x0 = augment(x0, gen)
        x0 = x0.to(device)
        lr = lr_at(step, prog, tc)
        for g in opt.param_groups:
            g["lr"] = lr
        mask_gen = torch.Generator(device=x0.device).manual_seed(tc.seed * 7_000_003 + step * 31 + rank)
        with amp:
            loss = mdm_loss(net, x0, generator=mask_gen)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        examples += tc.batch_size * world
        wall = wall0 + time.time() - t_start
        prog = progress_of(step, wall, tc)
        if ddp:  # every rank must follow rank 0's clock: same lr, same last step
            t = torch.tensor([prog], device=device)
            dist.broadcast(t, 0)
            prog = float(t.item())
        done = prog >= 1.0 or (a.stop_at_step is not None and step >= a.stop_at_step)
        if master:
            val_solved = ""
            if val and (step % tc.eval_every == 0 or done):
                metrics = evaluate(model, val, device)
                val_solved = metrics["val_solved"]
                if val_solved >= best:
                    best = val_solved
                    save_mdm(
                        run / "best",
                        model,
                        step,
                        {**metrics, "loss": loss.item()},
                        {
                            "train": asdict(tc),
                            "preset": a.preset,
                            "examples": examples,
                            "wall_seconds": wall,
                            "device": device,
                            "world_size": world,
                        },
                    )
                print(
                    f"step {step} loss {loss.item():.4f} val_solved {val_solved:.3f} ({wall / 60:.1f} min)", flush=True
                )
            if step % 10 == 0 or val_solved != "":
                logw.writerow([step, f"{loss.item():.5f}", f"{lr:.6g}", examples, f"{wall:.1f}", val_solved])
                logf.flush()
            if step % tc.save_every == 0 or done:
                checkpoint({"loss": loss.item(), **metrics})
        if done:
            break
    if master:
        checkpoint({"loss": loss.item(), **metrics})
        if not (run / "best.json").exists():  # no validation data: the last weights are the best we know
            save_mdm(run / "best", model, step, {"loss": loss.item()}, {"train": asdict(tc), "preset": a.preset})
        logf.close()
        plot_loss(log_path, run / "loss.png")
        print(f"done at step {step} ({wall / 60:.1f} min total)", flush=True)
    if ddp:  # leave together: a rank tearing gloo down while the master still writes can abort (SIGABRT)
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
