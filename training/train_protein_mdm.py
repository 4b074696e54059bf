"""Train the small protein backbone: an ESM-C-architecture model (esm.models.esmc.ESMC) with
the masked-diffusion objective on the Swiss-Prot training split.

    python training/make_protein_data.py                                   # the splits, once
    python training/train_protein_mdm.py --preset cpu --run-dir runs/protein_cpu     # hours; resumable
    torchrun --nproc_per_node 2 training/train_protein_mdm.py --preset cpu --run-dir ...   # DDP
    bash training/gpu_protein_run.sh                                       # the GPU config, 10 minutes

Objective (mi_viz.domains.protein.backbone.masked_lm_loss): per sequence t ~ U(0, 1), each
residue masked with probability t, cross-entropy over the 20 amino acids on the masked
residues. Generation starts from an all-masked sequence of length 50-100 between BOS and EOS,
so half of every batch is whole proteins of length <= CROP (their true termini next to BOS /
EOS) and half random CROP-residue windows of any training protein.

Every `eval_every` steps: the held-out MDM loss (t ~ U(0, 1), fixed masks) and the
pseudo-perplexity at 15 % masking on the validation split; RUN/best.* keeps the lowest
validation loss. Resumable: RUN/last.* holds model, AdamW state and the step; the data order
is a pure function of (seed, step, rank), so a resumed run replays nothing.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from mi_viz.core.errors import exit_on_user_error
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
from mi_viz.domains.protein.alphabet import PAD, encode
from mi_viz.domains.protein.backbone import (
    PROTEIN_MDM_KIND,
    ESMCBackbone,
    ProteinMDMConfig,
    masked_lm_loss,
    save_protein_mdm,
)
from mi_viz.domains.protein.fasta import read_fasta

PRESETS = {
    # name: (model config, training config)
    "tiny": (
        dict(d_model=32, n_heads=2, n_layers=2),
        dict(batch_size=8, crop=40, max_steps=12, eval_every=6, n_val=16, warmup=2),
    ),
    "cpu": (dict(d_model=256, n_heads=4, n_layers=4), dict(batch_size=32, crop=126, max_steps=20_000, eval_every=250)),
    "gpu": (
        dict(d_model=512, n_heads=8, n_layers=8),
        dict(batch_size=256, crop=254, lr=1e-3, max_steps=100_000, eval_every=500, warmup=500),
    ),
}


@dataclass
class TrainConfig:
    batch_size: int = 32  # per process
    crop: int = 126  # residues per training window (BOS / EOS make it 128 tokens)
    lr: float = 1e-3
    weight_decay: float = 0.01
    warmup: int = 300
    max_steps: int = 20_000  # cosine decay to 10 % of lr over this many steps (or minutes: progress_of)
    max_minutes: float = 0.0  # total wall time across resumes; 0 = no limit
    eval_every: int = 250
    n_val: int = 256  # validation sequences (first of the split, cropped)
    seed: int = 0


def load_split(path, limit: int | None = None) -> list[torch.Tensor]:
    records = read_fasta(path)[:limit]
    return [encode(seq) for _, seq in records]


def pad(seqs: list[torch.Tensor]) -> torch.Tensor:
    L = max(len(s) for s in seqs)
    x = torch.full((len(seqs), L), PAD, dtype=torch.long)
    for i, s in enumerate(seqs):
        x[i, : len(s)] = s
    return x


def batch(seqs, short_idx, tc: TrainConfig, gen: torch.Generator) -> torch.Tensor:
    """Half whole short proteins (<= crop residues), half random crop windows: (B, <= crop) padded."""
    n_short = tc.batch_size // 2 if len(short_idx) else 0
    idx = [short_idx[int(i)] for i in torch.randint(0, len(short_idx), (n_short,), generator=gen)] if n_short else []
    idx += torch.randint(0, len(seqs), (tc.batch_size - n_short,), generator=gen).tolist()
    out = []
    for i in idx:
        s = seqs[i]
        if len(s) > tc.crop:
            start = int(torch.randint(0, len(s) - tc.crop + 1, (1,), generator=gen))
            s = s[start : start + tc.crop]
        out.append(s)
    return pad(out)


@torch.no_grad()
def evaluate(model, val: torch.Tensor, device, bs: int = 64) -> dict:
    """Held-out MDM loss (t ~ U(0,1)) and pseudo-perplexity at 15 % masking, fixed masks (seeded)."""
    model.eval()
    g = torch.Generator().manual_seed(1234)
    tot = {"mdm": [0.0, 0], "p15": [0.0, 0]}
    for s in range(0, len(val), bs):
        x = val[s : s + bs].to(device)
        for key, ratio in (("mdm", None), ("p15", 0.15)):
            loss, n = masked_lm_loss(model, x, generator=g, mask_ratio=ratio)
            tot[key][0] += loss.item() * n
            tot[key][1] += n
    model.train()
    mdm, p15 = (tot[k][0] / max(1, tot[k][1]) for k in ("mdm", "p15"))
    return {"val_mdm_loss": mdm, "val_ce_15": p15, "val_pseudo_ppl_15": math.exp(p15)}


def main(argv=None):
    ap = trainer_parser(__doc__, PRESETS, TrainConfig, "runs/protein_data/train.fasta", "runs/protein_data/val.fasta")
    ap.add_argument("--limit", type=int, default=None, help="first N training sequences only (tests)")
    for k in ("d_model", "n_heads", "n_layers"):
        ap.add_argument("--" + k.replace("_", "-"), type=int, default=None)
    a = ap.parse_args(argv)
    d = Dist.setup(a.device)
    mcfg, tcd = PRESETS[a.preset]
    mcfg = {**mcfg, **{k: getattr(a, k) for k in ("d_model", "n_heads", "n_layers") if getattr(a, k) is not None}}
    tc = config_from(TrainConfig, tcd, vars(a))
    run = Path(a.run_dir)
    run.mkdir(parents=True, exist_ok=True)

    torch.manual_seed(tc.seed)
    model = ESMCBackbone(ProteinMDMConfig(**mcfg)).to(d.device)
    opt = torch.optim.AdamW(model.parameters(), lr=tc.lr, weight_decay=tc.weight_decay, betas=(0.9, 0.98))
    state = {"step": 0, "best": float("inf"), "tokens": 0, "wall": 0.0, "metrics": {}}
    last = Resumable(run / "last", PROTEIN_MDM_KIND, model, opt)
    if paused := resume_run(last, d.device, say=d.master):
        meta, _ = paused
        ex = meta["extra"]
        state.update(step=meta["step"], best=ex["best"], tokens=ex["tokens"], wall=ex["wall_seconds"])
    net = d.wrap(model)

    seqs = load_split(a.data, a.limit)
    short_idx = [i for i, s in enumerate(seqs) if len(s) <= tc.crop]
    val = pad([s[: tc.crop] for s in load_split(a.val, tc.n_val)]) if d.master else None
    if d.master:
        print(
            f"{model.n_params():,} parameters; {len(seqs):,} training proteins ({len(short_idx):,} of <= {tc.crop} "
            f"residues); preset {a.preset}; world {d.world}; device {d.device}",
            flush=True,
        )
    log = CsvLog(
        run / "log.csv",
        ["step", "loss", "lr", "tokens", "wall_seconds", "val_mdm_loss", "val_pseudo_ppl_15"],
        enabled=d.master,
    )
    about = {"train": asdict(tc), "preset": a.preset, "device": d.device}

    def batch_loss(step: int) -> torch.Tensor:
        gen = torch.Generator().manual_seed(tc.seed * 1_000_003 + step * 97 + d.rank)
        x0 = batch(seqs, short_idx, tc, gen).to(d.device)
        state["batch_tokens"] = int((x0 != PAD).sum())
        loss, _ = masked_lm_loss(net, x0, generator=torch.Generator(device=x0.device).manual_seed(step * 31 + d.rank))
        return loss

    def after(info: StepInfo) -> None:
        state.update(step=info.step, wall=info.wall, tokens=state["tokens"] + state["batch_tokens"] * d.world)
        if not (d.master and (info.step % tc.eval_every == 0 or info.done)):
            return
        m = state["metrics"] = evaluate(model, val, d.device)
        log.row(
            [
                info.step,
                f"{info.loss.item():.4f}",
                f"{info.lr:.2e}",
                state["tokens"],
                f"{info.wall:.0f}",
                f"{m['val_mdm_loss']:.4f}",
                f"{m['val_pseudo_ppl_15']:.3f}",
            ]
        )
        print(
            f"step {info.step} loss {info.loss.item():.4f} val {m['val_mdm_loss']:.4f} "
            f"ppl15 {m['val_pseudo_ppl_15']:.2f} ({state['tokens'] / 1e6:.1f}M tokens, {info.wall / 60:.0f} min)",
            flush=True,
        )
        if m["val_mdm_loss"] < state["best"]:  # weights only: the checkpoint that ships
            state["best"] = m["val_mdm_loss"]
            save_protein_mdm(
                run / "best", model, info.step, m, {"tokens": state["tokens"], "wall_seconds": info.wall, **about}
            )
        extra = {"best": state["best"], "tokens": state["tokens"], "wall_seconds": info.wall, **about}
        last.save(info.step, m, {**extra, "world_size": d.world, "data": a.data})

    fit(model, opt, tc, batch_loss, after, Resumed(state["step"], state["wall"]), d, a.stop_at_step)
    if d.master:
        # the weights at the schedule's end, to ship: the lowest validation MDM loss (best.*) moves
        # within its noise once the loss flattens, while the annealed weights are the most trained
        extra = {"tokens": state["tokens"], "wall_seconds": state["wall"], **about}
        save_protein_mdm(run / "final", model, state["step"], state["metrics"], extra)
        log.close()
        print(
            f"done at step {state['step']}: best validation MDM loss {state['best']:.4f} -> {run / 'best'}; "
            f"final -> {run / 'final'}",
            flush=True,
        )
    d.close()


if __name__ == "__main__":
    exit_on_user_error(main)
