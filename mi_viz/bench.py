"""Sudoku decoding benchmarks: one sampler over a puzzle file, or a sweep of many.

The same `samplers.decode` the app steps through, batched across puzzles.
"""

from __future__ import annotations

import csv
import itertools
import json
import multiprocessing as mp
import time
from dataclasses import dataclass
from pathlib import Path

import torch


from . import sudoku as S
from .estimator import check_head_fits, load_head
from .models import load_mdm
from .models.sudoku_mdm import boards_to_tokens, tokens_to_boards
from .samplers import SAMPLERS, SamplerConfig, decode

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_MDM = ROOT / "checkpoints" / "sudoku_mdm"
DEFAULT_HEAD = ROOT / "checkpoints" / "sudoku_mi_head"

# The paper's Table 1 (1000 hard Sudoku), for plots and the README.
PAPER_TABLE1 = [
    {"method": "sequential", "avg_passes": 53.9, "solved_frac": 0.616},
    {"method": "topk k=4", "avg_passes": 14.9, "solved_frac": 0.524},
    {"method": "eb gamma=0.2", "avg_passes": 15.3, "solved_frac": 0.610},
    {"method": "mi gamma=0.3", "avg_passes": 15.2, "solved_frac": 0.636},
    {"method": "mi gamma=0.6", "avg_passes": 9.7, "solved_frac": 0.562},
]


# Puzzles per forward pass. benchmarks/throughput.py on the 2-core CPU machine
# (results/throughput.txt, medians of interleaved rounds): in one 2-thread process the batch
# hardly matters (64: 1.04x of 256); in two 1-thread processes (sweep --jobs 2) 64 gave
# 1.31x and 256 1.19x the boards per second of one 2-thread process at 256.
DECODE_BATCH = 64


# The rows of the paper's Table 1 as run here (mi-gt, the oracle ceiling, is timed apart:
# its extra passes are the point of it). benchmarks/table1_time.py times exactly these.
TABLE1_GRID = "sequential; topk:k=4,7; eb:gamma=0.2,0.5; mi:gamma=0.3,0.6:lam=0; mi:gamma=0.01:lam=0.25"


@dataclass
class BenchResult:
    rows: list[dict]
    summary: dict


def load_models(checkpoint=None, head=None, device="cpu", need_head=False):
    model, meta = load_mdm(checkpoint or DEFAULT_MDM, device=device)
    h = None
    if need_head:
        h, _ = load_head(head or DEFAULT_HEAD, device=device)
        check_head_fits(h, model)
    return model, h, meta


def run_bench(model, puzzles, cfg: SamplerConfig, head=None, batch_size: int = DECODE_BATCH, device="cpu",
              progress=None) -> BenchResult:
    t0 = time.perf_counter()
    x = boards_to_tokens(puzzles).to(device)
    res = decode(model, x, cfg, head=head, batch_size=batch_size, progress=progress)
    boards = tokens_to_boards(res.tokens).tolist()
    rows = []
    for p, b, n, o, sizes in zip(puzzles, boards, res.passes.tolist(), res.oracle_passes.tolist(), res.batch_sizes):
        rows.append({
            "puzzle": S.board_to_string(p), "solved": int(S.is_solution(b, p)), "passes": n,
            "oracle_passes": o if cfg.needs == "mi-gt" else "", "max_batch": max(sizes) if sizes else 0,
            "conflicts": len(S.conflict_cells(b)), "output": S.board_to_string(b),
        })
    n = len(rows)
    summary = {
        "sampler": cfg.name, "gamma": cfg.gamma, "lam": cfg.lam, "k": cfg.k, "scan": cfg.scan,
        "rule_version": SAMPLERS[cfg.name].version, "n": n,
        "solved_frac": round(sum(r["solved"] for r in rows) / max(1, n), 4),
        "avg_passes": round(sum(r["passes"] for r in rows) / max(1, n), 3),
        "avg_oracle_passes": round(sum(r["oracle_passes"] for r in rows) / max(1, n), 1) if cfg.needs == "mi-gt" else None,
        "seconds": round(time.perf_counter() - t0, 2),
        "threads": torch.get_num_threads(),  # wall time means little without it
    }
    return BenchResult(rows, summary)


_WORKER: dict = {}


def _worker_init(checkpoint, head, device, need_head, threads):
    torch.set_num_threads(threads)
    model, h, _ = load_models(checkpoint, head, device, need_head=need_head)
    _WORKER.update(model=model, head=h)


def _worker_run(job):
    i, cfg, puzzles, batch_size, device = job
    return i, run_bench(_WORKER["model"], puzzles, cfg, _WORKER["head"], batch_size, device)


def run_grid(cfgs: list[SamplerConfig], puzzles, checkpoint=None, head=None, device="cpu",
             batch_size: int = DECODE_BATCH, jobs: int = 1, threads: int | None = None):
    """Run every setting over the puzzles; yield (index in cfgs, BenchResult) as each finishes.

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
        model, h, _ = load_models(checkpoint, head, device, need_head=need_head)
        for i, c in enumerate(cfgs):
            yield i, run_bench(model, puzzles, c, h, batch_size, device)
        return
    ctx = mp.get_context("spawn")  # fork would copy torch's thread pool state
    with ctx.Pool(jobs, _worker_init, (checkpoint, head, device, need_head, max(1, threads // jobs))) as pool:
        yield from pool.imap_unordered(_worker_run, [(i, c, puzzles, batch_size, device) for i, c in enumerate(cfgs)])


def write_rows(rows, path):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()) if rows else ["puzzle", "solved", "passes"])
        w.writeheader()
        w.writerows(rows)


# --------------------------------------------------------------------------- sweeps

DEFAULT_GRID = ("sequential; topk:k=2,3,4,5,7,10; eb:gamma=0.05,0.1,0.2,0.5,1,2; "
                "mi:gamma=0.05,0.1,0.2,0.3,0.6,1:lam=0,0.5")


def parse_grid(spec: str) -> list[SamplerConfig]:
    """'topk:k=2,4; eb:gamma=0.2,0.5; mi:gamma=0.3:lam=0,1:scan=stop,skip' -> SamplerConfigs
    (cartesian per sampler)."""
    out = []
    for part in filter(None, (p.strip() for p in spec.split(";"))):
        name, *params = part.split(":")
        name = name.strip()
        if name not in SAMPLERS:
            raise ValueError(f"unknown sampler {name!r} in grid; choose from {sorted(SAMPLERS)}")
        keys, values = [], []
        for p in params:
            if "=" not in p:
                raise ValueError(f"bad grid parameter {p!r}: expected name=v1,v2")
            k, vs = p.split("=", 1)
            keys.append(k.strip())
            cast = {"k": int, "scan": str.strip}.get(k.strip(), float)
            values.append([cast(v) for v in vs.split(",")])
        for combo in itertools.product(*values) if keys else [()]:
            out.append(SamplerConfig(name, **dict(zip(keys, combo))))
    return out


def sweep_family(row) -> str:
    """The curve a sweep row belongs to: sampler, lambda, and the scan rule when not the default."""
    lam, scan = row.get("lam"), row.get("scan")
    fam = row["sampler"]
    if lam not in (None, "") and lam == lam:  # lam == lam: not NaN (pandas rows)
        fam += f" lam={float(lam):g}"
    return fam + (" (skip)" if scan == "skip" else "")


def plot_sweep(summaries: list[dict], png_path, html_path, title="Sudoku: solve rate vs average passes",
               paper=True):
    """Accuracy-vs-passes curves, one line per sampler family (PNG via matplotlib, HTML via plotly)."""
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
            ax.plot([s["avg_passes"] for s in ss], [100 * s["solved_frac"] for s in ss], "o-", label=fam, ms=4)
        if paper:
            ax.scatter([p["avg_passes"] for p in PAPER_TABLE1], [100 * p["solved_frac"] for p in PAPER_TABLE1],
                       marker="x", c="k", label="paper Table 1", zorder=5)
        ax.set_xlabel("average backbone passes per puzzle")
        ax.set_ylabel("solved (%)")
        ax.set_title(title)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(png_path, dpi=130)
        plt.close(fig)
    if html_path:
        import plotly.graph_objects as go

        fig = go.Figure()
        for fam, ss in fams.items():
            ss = sorted(ss, key=lambda s: s["avg_passes"])
            fig.add_trace(go.Scatter(
                x=[s["avg_passes"] for s in ss], y=[100 * s["solved_frac"] for s in ss], mode="lines+markers",
                name=fam, text=[json.dumps({k: s.get(k) for k in ("gamma", "lam", "k", "scan")}) for s in ss]))
        if paper:
            fig.add_trace(go.Scatter(x=[p["avg_passes"] for p in PAPER_TABLE1],
                                     y=[100 * p["solved_frac"] for p in PAPER_TABLE1], mode="markers",
                                     marker_symbol="x", marker_color="black", name="paper Table 1",
                                     text=[p["method"] for p in PAPER_TABLE1]))
        fig.update_layout(title=title, xaxis_title="average backbone passes per puzzle", yaxis_title="solved (%)")
        fig.write_html(html_path, include_plotlyjs="cdn")  # small file; the app shows the same chart offline
