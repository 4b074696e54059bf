"""The training kit every trainer shares (the Sudoku, protein and family MDMs, the MI heads):
distributed set-up, a resumable run (the model, AdamW and the run's counters in one checkpoint,
written atomically), the CSV log, the step loop with its schedule, and typed flags from a config
dataclass. Each trainer keeps only what is its own: its model, its batches, its evaluation."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from .checkpoints import (
    CheckpointError,
    load_state_strict,
    optimizer_from_tensors,
    optimizer_to_tensors,
    read_meta,
    read_tensors,
    save_checkpoint,
)
from .cli_types import finite_float
from .schedule import lr_at, progress_of


@dataclass
class Dist:
    """This process's place in a run: torchrun's WORLD_SIZE > 1 starts DDP (gloo on CPU, nccl on a GPU)."""

    ddp: bool = False
    rank: int = 0
    world: int = 1
    device: str = "cpu"

    @classmethod
    def setup(cls, device: str) -> Dist:
        if int(os.environ.get("WORLD_SIZE", 1)) <= 1:
            return cls(device=device)
        dist.init_process_group("nccl" if device.startswith("cuda") else "gloo")
        if device.startswith("cuda"):
            device = f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}"
            torch.cuda.set_device(device)
        return cls(True, dist.get_rank(), dist.get_world_size(), device)

    @property
    def master(self) -> bool:
        return self.rank == 0

    def agree(self, x: float) -> float:
        """Rank 0's value on every rank (its clock decides the schedule and the last step)."""
        if not self.ddp:
            return x
        t = torch.tensor([x], device=self.device)
        dist.broadcast(t, 0)
        return float(t.item())

    def wrap(self, model: torch.nn.Module) -> torch.nn.Module:
        return torch.nn.parallel.DistributedDataParallel(model) if self.ddp else model

    def close(self) -> None:
        if self.ddp:  # leave together: a rank tearing gloo down while the master still writes can abort
            dist.barrier()
            dist.destroy_process_group()

    def autocast(self) -> torch.autocast:
        return (
            torch.autocast("cuda", dtype=torch.bfloat16)
            if self.device.startswith("cuda")
            else torch.autocast("cpu", enabled=False)
        )


class Resumable:
    """A run's resumable state at `path` (path.safetensors / .json): the model, AdamW as plain
    tensors, any extra tensors (random streams) and the run's counters. A checkpoint of another
    configuration is refused by name, never overwritten."""

    def __init__(self, path: str | Path, kind: str, model: torch.nn.Module, opt: torch.optim.Optimizer):
        self.path, self.kind, self.model, self.opt = Path(path), kind, model, opt

    def _config(self) -> dict:
        config: Any = self.model.config  # every backbone and head has one, with to_dict()
        return config.to_dict()

    def exists(self) -> bool:
        return self.path.with_name(self.path.name + ".json").exists()

    def load(self, device: str = "cpu", check: Callable[[dict], str | None] | None = None) -> tuple[dict, dict]:
        """(meta, extra tensors) after loading model and optimizer; check(meta) -> a reason to refuse."""
        meta = read_meta(self.path, self.kind)
        if meta["config"] != self._config():
            raise CheckpointError(f"{self.path}.json was trained with another architecture: {meta['config']}")
        why = check(meta) if check else None
        if why:
            raise CheckpointError(f"{self.path}.json {why}: remove it to start afresh")
        t = read_tensors(self.path)
        theirs = ("opt.", "rng.")  # the optimizer's tensors, and a run's random streams
        load_state_strict(
            self.model, {k: v for k, v in t.items() if not k.startswith(theirs)}, where=f"run {self.path}"
        )
        optimizer_from_tensors(self.opt, {k: v.to(device) for k, v in t.items()}, meta["extra"]["optimizer"])
        return meta, {k: v for k, v in t.items() if k.startswith("rng.")}

    def save(self, step: int, metrics: dict, extra: dict, tensors: dict | None = None) -> None:
        """tensors: a run's own (random streams), named rng.*"""
        ot, ometa = optimizer_to_tensors(self.opt)
        save_checkpoint(
            self.path,
            {**self.model.state_dict(), **ot, **(tensors or {})},
            self.kind,
            self._config(),
            step,
            metrics,
            {**extra, "optimizer": ometa},
        )


def resume_run(
    last: Resumable, device: str = "cpu", check: Callable[[dict], str | None] | None = None, say: bool = True
) -> tuple[dict, dict] | None:
    """Every trainer's one resume path: a paused run's (meta, extra tensors) loaded into its model and
    optimizer, or None when there is none. A corrupt one, or one paused with other settings
    (check(meta) -> a reason), is a CheckpointError saying what to do, never an overwrite (the
    scripts exit with it: errors.exit_on_user_error; the app shows it)."""
    if not last.exists():
        return None
    try:
        meta, tensors = last.load(device, check=check)
    except CheckpointError as e:
        raise CheckpointError(
            f"cannot continue the paused run: {e}; run with the same settings, or delete {last.path}.* "
            "(or use another output folder) to start afresh"
        ) from None
    if say:
        print(f"resumed from {last.path} at step {meta['step']}", flush=True)
    return meta, tensors


class CsvLog:
    """A run's CSV log: a new file with its header, or appended to when the run resumes."""

    def __init__(self, path: str | Path, columns: list[str], fresh: bool = False, enabled: bool = True):
        self.f = None
        if not enabled:
            return
        path = Path(path)
        new = fresh or not path.exists()
        self.f = open(path, "w" if new else "a", newline="")
        self.w = csv.writer(self.f)
        if new:
            self.w.writerow(columns)

    def row(self, values: list) -> None:
        if self.f is not None:
            self.w.writerow(values)
            self.f.flush()

    def close(self) -> None:
        if self.f is not None:
            self.f.close()


@dataclass
class StepInfo:
    """What the loop tells a trainer after each optimizer step."""

    step: int
    loss: torch.Tensor
    lr: float
    wall: float  # training seconds across resumes
    progress: float  # of the budget (steps or minutes)
    done: bool  # the budget is spent, or --stop-at-step reached


@dataclass(frozen=True)
class Resumed:
    """Where a run picks up: the steps taken and the training seconds spent before (0, 0.0: fresh)."""

    step: int = 0
    wall: float = 0.0


def fit(
    model: torch.nn.Module,
    opt: torch.optim.Optimizer,
    tc: Any,
    batch_loss: Callable[[int], torch.Tensor],
    after: Callable[[StepInfo], bool | None],
    at: Resumed = Resumed(),
    d: Dist | None = None,
    stop_at_step: int | None = None,
) -> int:
    """The step loop of the MDM trainers: lr = schedule.lr_at (warm-up, cosine to 10 %), gradients
    clipped at 1, until schedule.progress_of (steps or minutes) reaches 1 or stop_at_step.
    batch_loss(step) draws the step's batch (a pure function of the seed and the step, so a
    resumed run replays nothing) and returns its loss; after(info) evaluates, logs and saves, and
    may return True to stop early (a pause). Returns the last step."""
    d = d or Dist()
    step, wall = at.step, at.wall
    t0, wall0 = time.time(), wall
    prog = progress_of(step, wall, tc)
    model.train()
    while prog < 1.0:
        lr = lr_at(step, prog, tc)
        for g in opt.param_groups:
            g["lr"] = lr
        with d.autocast():
            loss = batch_loss(step)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        wall = wall0 + time.time() - t0
        prog = d.agree(progress_of(step, wall, tc))  # every rank follows rank 0's clock
        done = prog >= 1.0 or (stop_at_step is not None and step >= stop_at_step)
        if after(StepInfo(step, loss, lr, wall, prog, done)) or done:
            break
    return step


def add_config_flags(ap: argparse.ArgumentParser, config: type, skip: tuple[str, ...] = ()) -> None:
    """A --flag per field of a config dataclass, typed by its default (default None: not given)."""
    for f in dataclasses.fields(config):
        if f.name in skip or not isinstance(f.default, int | float) or isinstance(f.default, bool):
            continue
        kind = int if isinstance(f.default, int) else finite_float
        ap.add_argument("--" + f.name.replace("_", "-"), type=kind, default=None, help=f"default {f.default}")


def trainer_parser(doc: str | None, presets: dict, config: type, data: str, val: str) -> argparse.ArgumentParser:
    """The flags every MDM trainer takes: a preset, the run folder it resumes from, its data, the
    device, a flag per field of its training config, and a stop that splits a long run into chunks."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", choices=sorted(presets), default="cpu")
    ap.add_argument("--run-dir", required=True, help="run folder (resumes from RUN/last.* if present)")
    ap.add_argument("--data", default=data)
    ap.add_argument("--val", default=val)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    add_config_flags(ap, config)
    ap.add_argument(
        "--stop-at-step",
        type=int,
        default=None,
        help="stop (and save) at this step without changing the schedule: split a long run into chunks",
    )
    return ap


def config_from(config: type, base: dict, given: dict) -> Any:
    """The config dataclass from a preset's values, overridden by the flags a user gave (given: the
    parsed flags as a dict, vars(args); None: not given)."""
    c = config(**base)
    for f in dataclasses.fields(config):
        if given.get(f.name) is not None:
            setattr(c, f.name, given[f.name])
    return c
