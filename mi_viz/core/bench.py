"""Decoding benchmarks for any domain: one sampler over a set of inputs, or a sweep of many.

The same `samplers.decode` the app steps through, batched across inputs; the domain
turns inputs into tokens and scores what comes out (Domain.encode / score / summarize).
"""

from __future__ import annotations

import csv
import gzip
import multiprocessing as mp
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .models import kinds_of, load_models
from .protocol import Domain, MaskedModel
from .samplers import COLUMNS, Batching, SamplerConfig, decode

# Sequences per forward pass. benchmarks/throughput.py on the 2-core CPU machine
# (results/throughput.txt): for Sudoku, two 1-thread processes (sweep --jobs 2) at batch 64
# get the most boards per second.
DECODE_BATCH = 64
BENCH_BATCHING = Batching(DECODE_BATCH)  # frozen: a safe shared default


def setting_columns(cfg: SamplerConfig) -> dict:
    """A setting's parameter columns in a summary or sweep row: every column of the committed
    sweeps (None where the rule takes no such parameter), then the rule's own newer ones."""
    return {**{p: cfg.get(p) for p in COLUMNS}, **{p: v for p, v in cfg.params.items() if p not in COLUMNS}}


@dataclass(frozen=True)
class Weights:
    """What a grid decodes with: the backbone the user picked (None: the domain's shipped one), its
    heads as load_models takes them (None: the shipped ones) and the device; a sweep fingerprints
    `fingerprint` (the backbone's weights file; default its checkpoint, else the domain's default
    model). The backbone's model is built once a process (Backbone.load), so a parent that built it
    already (a judge reads it) and each worker build it once, never again."""

    head: Any = None
    tv_head: Any = None
    device: str = "cpu"
    fingerprint: Any = None
    backbone: Any = None

    @property
    def checkpoint(self) -> Any:
        """The backbone as domain.load_model takes it (None: the shipped one)."""
        return None if self.backbone is None else self.backbone.spec

    def built(self) -> Any:
        """The backbone's model, built once in this process, or None (load_models builds it from checkpoint)."""
        return None if self.backbone is None else self.backbone.load(self.device)


SHIPPED = Weights()  # the domain's shipped backbone and heads, on the CPU (frozen: a safe shared default)


@dataclass
class BenchResult:
    rows: list[dict]
    summary: dict
    revealed: list[np.ndarray] = field(default_factory=list)  # per item (L,): its decode order (core.order)


def run_bench(
    domain: Domain,
    model: MaskedModel,
    items: list,
    cfg: SamplerConfig,
    head: Any = None,
    device: str = "cpu",
    start: torch.Tensor | None = None,
    run: Batching = BENCH_BATCHING,
) -> BenchResult:
    """Decode every item (start: its (B, L) tokens when the caller encoded them) and score it:
    a row per item (the domain's columns, then passes) and a summary.

    A domain whose items differ in length (proteins) says which items share a length
    (Domain.groups); each group is decoded as its own batch, so nothing is ever padded.
    run.streams: each item's random stream (default its index), so a subset of a set samples each
    item as the whole set does; run.progress counts positions over every group."""
    t0 = time.perf_counter()
    groups = domain.groups(items) if start is None else [list(range(len(items)))]
    rows: list[dict | None] = [None] * len(items)
    revealed: list[np.ndarray | None] = [None] * len(items)
    starts = [(domain.encode([items[i] for i in g]) if start is None else start) for g in groups]  # (B, L) each
    total = sum(int((x == model.mask_id).sum()) for x in starts)  # progress counts positions over every group
    base = 0
    for g, x in zip(groups, starts):
        sub = [items[i] for i in g]
        x = x.to(device)
        tick = None if run.progress is None else (lambda done, _n, b=base, p=run.progress: p(b + done, total))
        ids = g if run.streams is None else [run.streams[i] for i in g]
        res = decode(model, x, cfg, head=head, run=Batching(run.batch_size, ids, tick))
        base += int((x == model.mask_id).sum())
        scored = domain.score(sub, res.tokens)
        revised = res.revised.tolist() if res.revised is not None else [0] * len(g)
        for i, r, n, o, sizes, v in zip(
            g, scored, res.passes.tolist(), res.oracle_passes.tolist(), res.batch_sizes, revised
        ):
            r.update(
                {
                    "passes": n,
                    "oracle_passes": o if cfg.is_oracle else "",
                    "max_batch": max(sizes) if sizes else 0,
                    **({"revised": v} if cfg.rule.revises else {}),  # an unmask-only rule's rows stay as they were
                }
            )
            rows[i] = r
        for i, order in zip(g, res.revealed if res.revealed is not None else []):
            revealed[i] = order
    done = [r for r in rows if r is not None]  # every item belongs to exactly one group
    n = len(done)
    summary = {
        "sampler": cfg.name,
        **setting_columns(cfg),
        **({"temperature": cfg.temperature, "seed": cfg.seed} if cfg.temperature > 0 else {}),  # argmax: no seed
        "rule_version": cfg.rule.version,
        "n": n,
        **domain.summarize(done),
        "avg_passes": round(sum(r["passes"] for r in done) / max(1, n), 3),
        "avg_oracle_passes": round(sum(r["oracle_passes"] for r in done) / max(1, n), 1) if cfg.is_oracle else None,
        **({"avg_revised": round(sum(r["revised"] for r in done) / max(1, n), 3)} if cfg.rule.revises else {}),
        "seconds": round(time.perf_counter() - t0, 2),
        "threads": torch.get_num_threads(),  # wall time means little without it
    }
    return BenchResult(done, summary, [o for o in revealed if o is not None])


_WORKER: dict = {}


def _worker_init(domain: Domain, w: Weights, kinds: tuple[str, ...], threads: int) -> None:
    torch.set_num_threads(threads)
    model, h = load_models(domain, w.checkpoint, w.head, w.device, kinds=kinds, tv_head=w.tv_head, model=w.built())
    _WORKER.update(domain=domain, model=model, head=h)


def _worker_run(job: tuple) -> tuple[int, BenchResult]:
    i, cfg, items, batch_size, device, streams = job
    w = _WORKER
    return i, run_bench(w["domain"], w["model"], items, cfg, w["head"], device, run=Batching(batch_size, streams))


def run_grid(
    domain: Domain,
    cfgs: list[SamplerConfig],
    items: list,
    weights: Weights = SHIPPED,
    batch_size: int = DECODE_BATCH,
    jobs: int = 1,
    threads: int | None = None,
    streams: list[int] | None = None,
) -> Iterator[tuple[int, BenchResult]]:
    """Run every setting over the items; yield (index in cfgs, BenchResult) as each finishes.

    jobs > 1 decodes that many settings side by side, each in its own process with
    threads // jobs torch threads (threads: torch's count in this process by default).
    Why: at Sudoku's size a forward pass is bound by per-operation overhead as much as by
    arithmetic, so two single-threaded decodes get more boards per second out of 2 cores
    than one decode on 2 threads (benchmarks/throughput.py). Each setting is the same
    deterministic run_bench either way; only the wall time changes.
    """
    kinds = kinds_of(cfgs)
    threads = threads or torch.get_num_threads()
    w, device = weights, weights.device
    if jobs <= 1 or len(cfgs) <= 1:
        model, h = load_models(domain, w.checkpoint, w.head, device, kinds=kinds, tv_head=w.tv_head, model=w.built())
        for i, c in enumerate(cfgs):
            yield i, run_bench(domain, model, items, c, h, device, run=Batching(batch_size, streams))
        return
    ctx = mp.get_context("spawn")  # fork would copy torch's thread pool state
    init = (domain, w, kinds, max(1, threads // jobs))
    with ctx.Pool(jobs, _worker_init, init) as pool:
        yield from pool.imap_unordered(
            _worker_run, [(i, c, items, batch_size, device, streams) for i, c in enumerate(cfgs)]
        )


def write_rows(rows: list[dict], path: str | Path) -> None:
    """Per-item rows as CSV; a path ending in .gz is gzip-compressed (the sweeps' committed rows/)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()) if rows else ["puzzle", "solved", "passes"])
        w.writeheader()
        w.writerows(rows)
