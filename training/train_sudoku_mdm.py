"""Train the Sudoku masked diffusion model (MDM objective: docs/mi.md).

    python training/train_sudoku_mdm.py --preset cpu   --run-dir runs/mdm_cpu      # hours, background
    python training/train_sudoku_mdm.py --preset paper --run-dir runs/mdm_paper    # on a GPU
    torchrun --nproc_per_node 2 training/train_sudoku_mdm.py --preset tiny --run-dir /tmp/r   # DDP

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

import csv
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from mi_viz.core.errors import exit_on_user_error
from mi_viz.core.plots import save_figure
from mi_viz.core.samplers import SamplerConfig, decode
from mi_viz.core.training import (
    CsvLog,
    Dist,
    Resumable,
    Resumed,
    StepInfo,
    config_from,
    fit,
    resume_run,
    trainer_parser,
)
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
    rows = list(csv.DictReader(open(path)))[-n:]
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
    save_figure(fig, out_png, dpi=120)
    plt.close(fig)


def main(argv=None):
    ap = trainer_parser(
        __doc__,
        PRESETS,
        TrainConfig,
        "data/sudoku/generated/train_grids.txt",
        "data/sudoku/generated/train_puzzles.csv",
    )
    ap.add_argument("--no-augment", action="store_true")
    a = ap.parse_args(argv)
    d = Dist.setup(a.device)
    mcfg_d, tc_d = PRESETS[a.preset]
    tc = config_from(TrainConfig, tc_d, vars(a))
    tc.augment = not a.no_augment
    run = Path(a.run_dir)
    run.mkdir(parents=True, exist_ok=True)

    torch.manual_seed(tc.seed)
    model = SudokuMDM(MDMConfig(**mcfg_d)).to(d.device)
    opt = torch.optim.AdamW(model.parameters(), lr=tc.lr, weight_decay=tc.weight_decay, betas=(0.9, 0.98))
    state = {"step": 0, "best": -1.0, "examples": 0, "wall": 0.0, "metrics": {}}
    last = Resumable(run / "last", MDM_KIND, model, opt)
    if paused := resume_run(last, d.device, say=d.master):
        meta, _ = paused
        ex = meta["extra"]
        state.update(step=meta["step"], best=ex.get("best", -1.0), examples=ex.get("examples", 0))
        state["wall"] = ex.get("wall_seconds", 0.0)
    net = d.wrap(model)

    grids = load_grids(a.data)
    val = load_val(a.val, tc.n_val) if d.master and Path(a.val).exists() else []
    if d.master:
        print(
            f"{model.n_params():,} parameters; {len(grids):,} training grids; preset {a.preset}; "
            f"world {d.world}; device {d.device}",
            flush=True,
        )
    log_path = run / "log.csv"
    log = CsvLog(log_path, ["step", "loss", "lr", "examples", "wall_seconds", "val_solved"], enabled=d.master)
    about = {"train": asdict(tc), "preset": a.preset, "world_size": d.world}

    def save_last(info_loss: float) -> None:
        extra = {"best": state["best"], "examples": state["examples"], "wall_seconds": state["wall"], **about}
        last.save(state["step"], {"loss": info_loss, **state["metrics"]}, {**extra, "data": a.data})

    def batch_loss(step: int) -> torch.Tensor:
        # data order is a pure function of (seed, step, rank): resuming replays nothing
        gen = torch.Generator().manual_seed(tc.seed * 1_000_003 + step * 97 + d.rank)
        x0 = grids[torch.randint(0, len(grids), (tc.batch_size,), generator=gen)]
        if tc.augment:
            x0 = augment(x0, gen)
        x0 = x0.to(d.device)
        mask_gen = torch.Generator(device=x0.device).manual_seed(tc.seed * 7_000_003 + step * 31 + d.rank)
        return mdm_loss(net, x0, generator=mask_gen)

    def after(info: StepInfo) -> None:
        state.update(step=info.step, wall=info.wall, examples=state["examples"] + tc.batch_size * d.world)
        state["loss"] = info.loss.item()
        if not d.master:
            return
        val_solved = ""
        if val and (info.step % tc.eval_every == 0 or info.done):
            state["metrics"] = evaluate(model, val, d.device)
            val_solved = state["metrics"]["val_solved"]
            if val_solved >= state["best"]:
                state["best"] = val_solved
                extra = {**about, "examples": state["examples"], "wall_seconds": info.wall, "device": d.device}
                save_mdm(run / "best", model, info.step, {**state["metrics"], "loss": info.loss.item()}, extra)
            print(
                f"step {info.step} loss {info.loss.item():.4f} val_solved {val_solved:.3f} ({info.wall / 60:.1f} min)",
                flush=True,
            )
        if info.step % 10 == 0 or val_solved != "":
            log.row(
                [
                    info.step,
                    f"{info.loss.item():.5f}",
                    f"{info.lr:.6g}",
                    state["examples"],
                    f"{info.wall:.1f}",
                    val_solved,
                ]
            )
        if info.step % tc.save_every == 0 or info.done:
            save_last(info.loss.item())

    state["loss"] = float("nan")
    fit(model, opt, tc, batch_loss, after, Resumed(state["step"], state["wall"]), d, a.stop_at_step)
    if d.master:
        save_last(state["loss"])
        if not (run / "best.json").exists():  # no validation data: the last weights are the best we know
            save_mdm(
                run / "best", model, state["step"], {"loss": state["loss"]}, {"train": asdict(tc), "preset": a.preset}
            )
        log.close()
        plot_loss(log_path, run / "loss.png")
        print(f"done at step {state['step']} ({state['wall'] / 60:.1f} min total)", flush=True)
    d.close()


if __name__ == "__main__":
    exit_on_user_error(main)
