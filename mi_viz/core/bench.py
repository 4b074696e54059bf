"""Decoding benchmarks for any domain: one sampler over a set of inputs, or a sweep of many.

The same `samplers.decode` the app steps through, batched across inputs; the domain
turns inputs into tokens and scores what comes out (Domain.encode / score / summarize).
"""

from __future__ import annotations

import csv
import itertools
import multiprocessing as mp
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from .estimator import check_head_fits, load_head
from .samplers import SAMPLERS, SamplerConfig, config_for, decode

# Sequences per forward pass. benchmarks/throughput.py on the 2-core CPU machine
# (results/throughput.txt): for Sudoku, two 1-thread processes (sweep --jobs 2) at batch 64
# get the most boards per second.
DECODE_BATCH = 64


def median_seconds(fn, repeats: int) -> float:
    """Median wall time of fn() over `repeats` calls, after one warm-up call (the benchmarks' timer)."""
    fn()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


@dataclass
class BenchResult:
    rows: list[dict]
    summary: dict


def load_models(domain, checkpoint=None, head=None, device="cpu", need_head=False):
    """(model, head or None) for a domain: its shipped checkpoints unless paths are given.
    A head that does not fit the backbone is refused by name (check_head_fits)."""
    model = domain.load_model(checkpoint, device=device)
    h = None
    if need_head:
        path = head or domain.default_head()
        if path is None:
            raise ValueError(f"no MI head is shipped for this {domain.name} backbone: pass --head PATH")
        h, _ = load_head(path, device=device)
        check_head_fits(h, model)
    return model, h


def run_bench(
    domain,
    model,
    items,
    cfg: SamplerConfig,
    head=None,
    batch_size: int = DECODE_BATCH,
    device="cpu",
    progress=None,
    start: torch.Tensor | None = None,
) -> BenchResult:
    """Decode every item (start: its (B, L) tokens when the caller encoded them) and score it:
    a row per item (the domain's columns, then passes) and a summary.

    A domain whose items differ in length (proteins) says which items share a length
    (Domain.groups); each group is decoded as its own batch, so nothing is ever padded."""
    t0 = time.perf_counter()
    groups = domain.groups(items) if start is None and hasattr(domain, "groups") else [list(range(len(items)))]
    rows: list[dict | None] = [None] * len(items)
    for g in groups:
        sub = [items[i] for i in g]
        x = (domain.encode(sub) if start is None else start).to(device)
        res = decode(model, x, cfg, head=head, batch_size=batch_size, progress=progress, streams=g)
        scored = domain.score(sub, res.tokens)
        for i, r, n, o, sizes in zip(g, scored, res.passes.tolist(), res.oracle_passes.tolist(), res.batch_sizes):
            r.update(
                {
                    "passes": n,
                    "oracle_passes": o if cfg.needs == "mi-gt" else "",
                    "max_batch": max(sizes) if sizes else 0,
                }
            )
            rows[i] = r
    n = len(rows)
    summary = {
        "sampler": cfg.name,
        "gamma": cfg.gamma,
        "lam": cfg.lam,
        "k": cfg.k,
        "scan": cfg.scan,
        "tau": cfg.tau,
        "kl": cfg.kl,
        "d": cfg.d,
        **({"temperature": cfg.temperature, "seed": cfg.seed} if cfg.temperature > 0 else {}),  # argmax: no seed
        "rule_version": SAMPLERS[cfg.name].version,
        "n": n,
        **domain.summarize(rows),
        "avg_passes": round(sum(r["passes"] for r in rows) / max(1, n), 3),
        "avg_oracle_passes": round(sum(r["oracle_passes"] for r in rows) / max(1, n), 1)
        if cfg.needs == "mi-gt"
        else None,
        "seconds": round(time.perf_counter() - t0, 2),
        "threads": torch.get_num_threads(),  # wall time means little without it
    }
    return BenchResult(rows, summary)


_WORKER: dict = {}


def _worker_init(domain, checkpoint, head, device, need_head, threads):
    torch.set_num_threads(threads)
    model, h = load_models(domain, checkpoint, head, device, need_head=need_head)
    _WORKER.update(domain=domain, model=model, head=h)


def _worker_run(job):
    i, cfg, items, batch_size, device = job
    return i, run_bench(_WORKER["domain"], _WORKER["model"], items, cfg, _WORKER["head"], batch_size, device)


def run_grid(
    domain,
    cfgs: list[SamplerConfig],
    items,
    checkpoint=None,
    head=None,
    device="cpu",
    batch_size: int = DECODE_BATCH,
    jobs: int = 1,
    threads: int | None = None,
):
    """Run every setting over the items; yield (index in cfgs, BenchResult) as each finishes.

    jobs > 1 decodes that many settings side by side, each in its own process with
    threads // jobs torch threads (threads: torch's count in this process by default).
    Why: at Sudoku's size a forward pass is bound by per-operation overhead as much as by
    arithmetic, so two single-threaded decodes get more boards per second out of 2 cores
    than one decode on 2 threads (benchmarks/throughput.py). Each setting is the same
    deterministic run_bench either way; only the wall time changes.
    """
    need_head = any(c.needs == "mi" for c in cfgs)
    threads = threads or torch.get_num_threads()
    if jobs <= 1 or len(cfgs) <= 1:
        model, h = load_models(domain, checkpoint, head, device, need_head=need_head)
        for i, c in enumerate(cfgs):
            yield i, run_bench(domain, model, items, c, h, batch_size, device)
        return
    ctx = mp.get_context("spawn")  # fork would copy torch's thread pool state
    init = (domain, checkpoint, head, device, need_head, max(1, threads // jobs))
    with ctx.Pool(jobs, _worker_init, init) as pool:
        yield from pool.imap_unordered(_worker_run, [(i, c, items, batch_size, device) for i, c in enumerate(cfgs)])


def write_rows(rows, path):
    """Per-item rows as CSV; a path ending in .gz is gzip-compressed (the sweeps' committed rows/)."""
    import gzip

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()) if rows else ["puzzle", "solved", "passes"])
        w.writeheader()
        w.writerows(rows)


# --------------------------------------------------------------------------- sweeps


def parse_grid(spec: str, domain_defaults: dict | None = None) -> list[SamplerConfig]:
    """'topk:k=2,4; eb:gamma=0.2,0.5; mi:gamma=0.3:lam=0,1:scan=stop,skip' -> SamplerConfigs
    (cartesian per sampler; parameters not named take the domain's defaults). A misspelt
    sampler or parameter, a value that is not a number and an empty grid are ValueErrors that
    name what is known."""
    out = []
    for part in filter(None, (p.strip() for p in spec.split(";"))):
        name, *params = part.split(":")
        name = name.strip()
        if name not in SAMPLERS:
            raise ValueError(f"unknown sampler {name!r} in the grid; choose from {', '.join(sorted(SAMPLERS))}")
        known = [*SAMPLERS[name].defaults, "temperature", "seed"]
        keys, values = [], []
        for p in params:
            if "=" not in p:
                raise ValueError(f"bad grid parameter {p!r} for {name}: expected name=v1,v2")
            k, vs = (x.strip() for x in p.split("=", 1))
            if k not in known:
                raise ValueError(f"unknown parameter {k!r} for {name}; it takes {', '.join(known)}")
            cast = {"k": int, "d": int, "seed": int, "scan": str.strip}.get(k, float)
            try:
                values.append([cast(v) for v in vs.split(",")])
            except ValueError:
                raise ValueError(f"bad value in {k}={vs!r} for {name}: expected numbers separated by commas") from None
            keys.append(k)
        for combo in itertools.product(*values) if keys else [()]:
            out.append(config_for(name, domain_defaults, **dict(zip(keys, combo))))
    if not out:
        raise ValueError("the grid is empty: name at least one sampler, e.g. 'sequential; eb:gamma=0.01,0.1'")
    return out


def sweep_family(row) -> str:
    """The curve a sweep row belongs to: sampler, lambda, and the scan rule when not the default."""
    lam, scan = row.get("lam"), row.get("scan")
    fam = row["sampler"]
    if lam not in (None, "") and lam == lam:  # lam == lam: not NaN (pandas rows)
        fam += f" lam={float(lam):g}"
    return fam + (" (skip)" if scan == "skip" else "")


def plot_sweep(
    summaries: list[dict],
    png_path,
    html_path,
    title="solve rate vs average passes",
    paper: list[dict] | None = None,
    metric: str = "solved_frac",
    scale: float = 100.0,
    ylabel: str = "solved (%)",
    paper_label: str = "paper",
):
    """Metric-vs-passes curves, one line per sampler family (PNG via matplotlib, HTML via plotly);
    paper: reference points [{"method", "avg_passes", metric}] drawn as black crosses."""
    fams: dict[str, list[dict]] = {}
    for s in summaries:
        fams.setdefault(sweep_family(s), []).append(s)
    if png_path:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4.5))
        for fam, ss in fams.items():
            ss = sorted(ss, key=lambda s: s["avg_passes"])
            ax.plot([s["avg_passes"] for s in ss], [scale * s[metric] for s in ss], "o-", label=fam, ms=4)
        if paper:
            ax.scatter(
                [p["avg_passes"] for p in paper],
                [scale * p[metric] for p in paper],
                marker="x",
                c="k",
                label=paper_label,
                zorder=5,
            )
        ax.set_xlabel("average backbone passes")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(png_path, dpi=130)
        plt.close(fig)
    if html_path:  # the app's chart (core.plots.sweep_figure), as a file
        from .plots import sweep_figure

        fig = sweep_figure({"": summaries}, metric, ylabel, title, paper=paper, scale=scale, paper_label=paper_label)
        fig.write_html(html_path, include_plotlyjs="cdn")  # small file; the app shows the same chart offline
