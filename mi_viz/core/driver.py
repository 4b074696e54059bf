"""The one driver of the command line's verbs, whatever the domain: a domain's cli.py reads its own
inputs and hands the driver a Task (bench, sweep) or a ReportTask (mi-report); the driver decodes,
scores, writes and prints (the last stdout line a one-line JSON summary, as every verb)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from . import progress, strict_json
from .backbone import Backbone
from .bench import DECODE_BATCH, BenchResult, Weights, run_bench, write_rows
from .mi_report import ReportStates, mi_report, write_report
from .models import kinds_of, load_models
from .samplers import Batching, SamplerConfig
from .sweep import SweepOptions, run_sweep


def say(d: dict) -> None:
    print(strict_json.dumps(d), flush=True)


@dataclass
class Task:
    """What a domain's CLI prepared for bench or sweep."""

    domain: Any
    items: list  # what domain.encode takes
    identity: dict  # what identifies the items in a sweep row ({"puzzles": "test_hard.txt"})
    backbone: Backbone  # the backbone picked, whole: its spec is what domain.load_model takes, its model built once
    weights: Any = None  # the file whose sha256 sweep rows record (default: the backbone's spec)
    head: Any = None  # an MI head checkpoint (None: the domain's shipped one, for rules that read it)
    tv_head: Any = None  # a TV (DEMASK) head checkpoint (None: the domain's shipped one, for demask)
    score: Callable[[BenchResult], dict] | None = None  # a decoded set's own columns (the JSD, pair statistics)
    columns: dict = field(default_factory=dict)  # bench: summary columns before the score's (inputs, skipped lines)
    tail: dict = field(default_factory=dict)  # bench: and after it
    ids: list[str] | None = None  # an id per item, written in the rows
    streams: list[int] | None = None  # each item's random stream (None: its index among the items)
    companions: Callable[[list[dict], Path], Any] | None = None  # bench: files beside the rows (FASTA)
    title: str = ""  # of the sweep's plot
    plot: dict = field(default_factory=dict)  # the sweep plot's metric, scale, paper points
    temperature: float | None = None  # sweep: every setting's temperature (None: the grid's)
    sample_seed: int = 0  # and its seed


@dataclass(frozen=True)
class BenchRun:
    """Where bench writes and how it batches (the CLI's --out, --batch-size)."""

    out: Path
    batch_size: int | None = None  # sequences a pass (None: DECODE_BATCH)


@dataclass(frozen=True)
class SweepRun:
    """Where a sweep writes and how it runs (the CLI's --out-dir, --jobs, --resume, ...)."""

    out_dir: Path
    jobs: int = 1
    resume: bool = False
    save_rows: bool = False
    title: str = ""
    keep_others: bool = False
    batch_size: int | None = None


@dataclass(frozen=True)
class ReportRun:
    """What mi-report draws and where it writes (the CLI's --states, --eps, --seed, --out, --pairs, --target)."""

    states: int
    eps: float
    seed: int
    out: Path
    pairs: Path | None = None
    target: str = "mi"  # the map the head predicts: "mi" or DEMASK's "tv"


def bench(task: Task, cfg: SamplerConfig, a: BenchRun, dev: str) -> dict:
    """One setting over the items: rows to a.out, the summary printed."""
    b = task.backbone
    model, head = load_models(
        task.domain, b.spec, task.head, dev, kinds=kinds_of([cfg]), tv_head=task.tv_head, model=b.load(dev)
    )
    bar = progress.callback(f"decoding ({cfg.label()})", unit="position")
    run = Batching(a.batch_size or DECODE_BATCH, task.streams, bar)
    res = run_bench(task.domain, model, task.items, cfg, head, dev, run=run)
    if task.ids is not None:
        for rid, r in zip(task.ids, res.rows):
            r["id"] = rid
    scored = task.score(res) if task.score else {}  # first: a judge may add its per-item figures to the rows
    write_rows(res.rows, a.out)
    if task.companions is not None:
        task.companions(res.rows, Path(a.out))
    summary = {**res.summary, **task.columns, **scored, **task.tail}
    say(summary)
    return summary


def sweep(task: Task, cfgs: list[SamplerConfig], a: SweepRun, dev: str) -> list[dict]:
    """A grid over the items (sweep.run_sweep: resumable, one row per setting)."""
    if task.temperature is not None:
        cfgs = [c.replace(temperature=task.temperature, seed=task.sample_seed) for c in cfgs]
    weights = Weights(task.head, task.tv_head, dev, fingerprint=task.weights, backbone=task.backbone)
    options = SweepOptions(
        batch_size=a.batch_size or DECODE_BATCH,
        jobs=a.jobs,
        resume=a.resume,
        save_rows=a.save_rows,
        keep_others=a.keep_others,
        title=a.title or task.title,
        plot=task.plot,
        streams=task.streams,
        extra=task.score,
        report=say,
    )
    return run_sweep(task.domain, cfgs, task.items, task.identity, a.out_dir, weights, options)


def bench_or_sweep(
    task: Task, cfg_or_grid: SamplerConfig | list[SamplerConfig], run: BenchRun | SweepRun, dev: str
) -> dict | list[dict]:
    """bench with a BenchRun (one setting), sweep with a SweepRun (a grid)."""
    if isinstance(run, BenchRun):
        assert isinstance(cfg_or_grid, SamplerConfig), "bench decodes one setting"
        return bench(task, cfg_or_grid, run, dev)
    assert isinstance(cfg_or_grid, list), "a sweep decodes a grid"
    return sweep(task, cfg_or_grid, run, dev)


@dataclass
class ReportTask:
    """What a domain's CLI prepared for mi-report: held-out states, or starting states whose
    sequential decodes the report draws states from."""

    model: Any
    head: Any
    start: torch.Tensor | None = None  # (B, L) starting states (Sudoku: puzzles)
    states: torch.Tensor | None = None  # (N, L) the states themselves (proteins, families)
    relations: Any = None  # (L, L) known relation codes, or None
    more: Callable[[Any], dict] | None = None  # report -> the summary's further fields, in their order


def report(task: ReportTask, a: ReportRun) -> dict:
    """Head vs ground truth on the task's states: the summary to a.out (pairs to a.pairs), printed."""
    states = ReportStates(task.start, a.states, a.seed, given=task.states)
    rep = mi_report(task.model, task.head, states, a.eps, task.relations, target=a.target)
    summary = {**rep.summary, **(task.more(rep) if task.more else {})}
    write_report(summary, rep.pairs, rep.tokens, a.out, a.pairs)
    say(summary)
    return summary


def warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)
