"""Command line: `python -m mi_viz {bench,sweep,mi-report,figure} sudoku ...`.

Contract (stable): the last line printed to stdout is a one-line JSON summary.
Bad puzzle lines are reported on stderr by line number and skipped.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

import torch


def _device(name):
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return name


def _read_puzzles(path, limit):
    from . import sudoku as S

    if not Path(path).exists():
        raise SystemExit(f"error: puzzle file not found: {path}")
    res = S.read_puzzle_file(path)
    for e in res.errors:
        print(f"warning: {path}: {e} (skipped)", file=sys.stderr)
    puzzles = res.puzzles[:limit] if limit else res.puzzles
    if not puzzles:
        raise SystemExit(f"error: no valid puzzles in {path}")
    return puzzles, res.errors


def _add_common(p):
    p.add_argument("domain", choices=["sudoku"])
    p.add_argument("--puzzles", required=True, help="one puzzle per line (first field); '#' lines ignored")
    p.add_argument("--limit", type=int, default=None, help="first N valid puzzles only")
    p.add_argument("--checkpoint", default=None, help="MDM checkpoint (default checkpoints/sudoku_mdm)")
    p.add_argument("--head", default=None, help="MI head checkpoint (default checkpoints/sudoku_mi_head)")
    p.add_argument("--device", default="auto")
    p.add_argument("--batch-size", type=int, default=None,
                   help="puzzles per forward pass (default 64: fastest on a 2-core CPU, benchmarks/throughput.py)")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads")


def cmd_bench(a):
    from .bench import DECODE_BATCH, load_models, run_bench, write_rows
    from .samplers import SamplerConfig

    puzzles, errors = _read_puzzles(a.puzzles, a.limit)
    cfg = SamplerConfig(a.sampler, gamma=a.gamma, lam=a.lam, k=a.k, temperature=a.temperature, seed=a.seed,
                        gt_eps=a.gt_eps, scan=a.scan)
    dev = _device(a.device)
    model, head, _ = load_models(a.checkpoint, a.head, dev, need_head=cfg.needs == "mi")
    res = run_bench(model, puzzles, cfg, head, a.batch_size or DECODE_BATCH, dev)
    write_rows(res.rows, a.out)
    res.summary["skipped_lines"] = len(errors)
    print(json.dumps(res.summary))


SETTING_KEYS = ("sampler", "gamma", "lam", "k", "scan", "rule_version", "n", "puzzles", "mdm_sha", "head_sha")


def _previous_rows(path: Path) -> dict:
    """Rows of an earlier sweep.csv keyed by their full setting (for --resume)."""
    if not path.exists():
        return {}
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:  # rows written before rules were versioned: every rule then was version 1 or 2
        r["rule_version"] = r.get("rule_version") or "1"
    return {_setting_key(r): r for r in rows}


def _setting_key(row: dict) -> tuple:
    """A row's setting as text: the same key for a fresh summary and for a row read back from CSV."""
    return tuple("" if row.get(k) is None else str(row.get(k)) for k in SETTING_KEYS)


def cmd_sweep(a):
    from .bench import DECODE_BATCH, DEFAULT_GRID, DEFAULT_HEAD, DEFAULT_MDM, parse_grid, plot_sweep, run_grid, write_rows
    from .checkpoints import fingerprint
    from .samplers import SAMPLERS

    t0 = time.perf_counter()
    puzzles, _ = _read_puzzles(a.puzzles, a.limit)
    cfgs = parse_grid(a.grid or DEFAULT_GRID)
    dev = _device(a.device)
    need_head = any(c.needs == "mi" for c in cfgs)
    if need_head and a.jobs > 1:  # a bad head fails here, not in a worker after other settings ran
        from .bench import load_models  # (with one job, run_grid loads it before any decode anyway)

        load_models(a.checkpoint, a.head, dev, need_head=True)
    mdm_sha = fingerprint(a.checkpoint or DEFAULT_MDM)
    head_sha = fingerprint(a.head or DEFAULT_HEAD) if need_head else ""
    out = Path(a.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    previous = _previous_rows(out / "sweep.csv") if a.resume else {}
    summaries: dict[int, dict] = {}
    idents, todo = [], []
    for i, c in enumerate(cfgs):
        ident = {"sampler": c.name, "gamma": c.gamma, "lam": c.lam, "k": c.k, "scan": c.scan,
                 "rule_version": SAMPLERS[c.name].version, "n": len(puzzles),
                 "puzzles": Path(a.puzzles).name, "mdm_sha": mdm_sha, "head_sha": head_sha if c.needs == "mi" else ""}
        idents.append(ident)
        old = previous.get(_setting_key(ident))
        if old is not None:  # same setting, same puzzles, same weights: the decode is deterministic
            summaries[i] = _typed(old)
            print(f"reused: {c.label()} (same puzzles and weights)", file=sys.stderr, flush=True)
            print(json.dumps(summaries[i]), flush=True)
        else:
            todo.append(i)

    def write_csv():  # rewritten after each point, in grid order: nothing lost if the run stops
        rows = [summaries[i] for i in sorted(summaries)]
        with open(out / "sweep.csv", "w", newline="") as f:
            keys = list(dict.fromkeys(k for s in rows for k in s))  # rows of older sweeps may lack a column
            w = csv.DictWriter(f, fieldnames=keys, restval="")
            w.writeheader()
            w.writerows(rows)

    for j, r in run_grid([cfgs[i] for i in todo], puzzles, a.checkpoint, a.head, dev,
                         a.batch_size or DECODE_BATCH, a.jobs):
        i = todo[j]
        if a.save_rows:
            write_rows(r.rows, out / "rows" / (cfgs[i].label().replace(" ", "_") + ".csv"))
        summaries[i] = {**r.summary, **{k: idents[i][k] for k in ("puzzles", "mdm_sha", "head_sha")}, "jobs": a.jobs}
        print(json.dumps(summaries[i]), flush=True)
        write_csv()
    write_csv()
    rows = [summaries[i] for i in sorted(summaries)]
    plot_sweep(rows, out / "sweep.png", out / "sweep.html", title=a.title or f"Sudoku: {Path(a.puzzles).name}")
    print(json.dumps({"points": len(rows), "decoded": len(todo), "jobs": a.jobs,
                      "wall_seconds": round(time.perf_counter() - t0, 1), "out_dir": str(out)}))


def _typed(row: dict) -> dict:
    """A sweep.csv row read back as text -> numbers where they are numbers."""
    out = {}
    for k, v in row.items():
        if isinstance(v, str) and k not in ("sampler", "scan", "puzzles", "mdm_sha", "head_sha"):  # a sha can look like 1e5
            try:
                v = None if v == "" else (int(v) if v.lstrip("-").isdigit() else float(v))
            except ValueError:
                pass
        out[k] = v
    return out


def cmd_mi_report(a):
    from .bench import load_models
    from .fidelity import mi_report

    puzzles, _ = _read_puzzles(a.puzzles, a.limit)
    dev = _device(a.device)
    model, head, _ = load_models(a.checkpoint, a.head, dev, need_head=True)
    summary, pt, tokens, _ = mi_report(model, head, puzzles, a.states, a.eps, a.seed, dev)
    summary["puzzles"] = str(a.puzzles)
    if a.structure_states:
        from . import sudoku as S
        from .fidelity import structure_by_mask_ratio

        solutions = [S.solve(p).solution for p in puzzles[: a.structure_states]]
        summary["structure_by_mask_ratio"] = structure_by_mask_ratio(
            model, head, solutions, n_states=a.structure_states, eps=a.eps, seed=a.seed, device=dev)
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=1))
    if a.pairs:
        import numpy as np

        np.savez_compressed(a.pairs, tokens=tokens.numpy().astype("uint8"), **{
            k: getattr(pt, k) for k in ("state", "i", "j", "gt", "est", "asym", "relation", "hmin")})
    print(json.dumps(summary))


def cmd_figure(a):
    from .bench import load_models
    from .plots import figure1

    puzzles, _ = _read_puzzles(a.puzzles, None)
    if not 0 <= a.index < len(puzzles):
        raise ValueError(f"--index {a.index} is outside 0..{len(puzzles) - 1}")
    dev = _device(a.device)
    model, head, _ = load_models(a.checkpoint, a.head, dev, need_head=True)
    info = figure1(model, head, puzzles[a.index], a.step, a.out, eps=a.eps)
    print(json.dumps(info))


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m mi_viz", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("bench", help="decode a puzzle file with one sampler")
    _add_common(b)
    b.add_argument("--sampler", default="sequential")
    b.add_argument("--gamma", type=float, default=None)
    b.add_argument("--lam", type=float, default=None)
    b.add_argument("--scan", choices=["stop", "skip"], default=None,
                   help="mi / mi-gt: end the batch at the first rejected candidate (stop, default) or skip it")
    b.add_argument("--k", type=int, default=None)
    b.add_argument("--temperature", type=float, default=0.0)
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--gt-eps", type=float, default=1e-3, help="pruning tolerance of ground-truth MI (mi-gt)")
    b.add_argument("--out", required=True, help="per-puzzle CSV")
    s = sub.add_parser("sweep", help="a grid of samplers and parameters; summary CSV + plots")
    _add_common(s)
    s.add_argument("--grid", default=None, help="e.g. 'topk:k=2,4; eb:gamma=0.2,0.5; mi:gamma=0.3:lam=0,1'")
    s.add_argument("--out-dir", required=True)
    s.add_argument("--title", default=None)
    s.add_argument("--save-rows", action="store_true", help="also write each setting's per-puzzle CSV under OUT/rows/")
    s.add_argument("--jobs", type=int, default=1,
                   help="settings decoded side by side, each in its own process with threads/jobs torch threads "
                        "(2 on a 2-core CPU: about 1.3x the throughput, benchmarks/throughput.py)")
    s.add_argument("--resume", action="store_true",
                   help="reuse rows of OUT/sweep.csv with the same setting, puzzle file, count and weights "
                        "(sha256 of the checkpoints); everything else is decoded")
    r = sub.add_parser("mi-report", help="estimated vs ground-truth MI on held-out decode states")
    _add_common(r)
    r.add_argument("--states", type=int, default=100)
    r.add_argument("--eps", type=float, default=1e-3, help="pruning tolerance of the ground truth")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--structure-states", type=int, default=0,
                   help="also measure the structure AUROC on N randomly masked solutions per masking ratio "
                        "(0.9, 0.75, 0.6); 0: skip")
    r.add_argument("--out", required=True, help="summary JSON")
    r.add_argument("--pairs", default=None, help="optional .npz with every masked pair (for plots)")
    f = sub.add_parser("figure", help="the Figure-1 picture: board, entropy, estimated and true MI")
    _add_common(f)
    f.add_argument("--index", type=int, default=0, help="which puzzle of the file")
    f.add_argument("--step", type=int, default=10, help="decode step (sequential) to show")
    f.add_argument("--eps", type=float, default=1e-3)
    f.add_argument("--out", required=True, help="PNG path")
    a = ap.parse_args(argv)
    if getattr(a, "threads", None):
        torch.set_num_threads(a.threads)
    try:
        {"bench": cmd_bench, "sweep": cmd_sweep, "mi-report": cmd_mi_report, "figure": cmd_figure}[a.cmd](a)
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # checkpoint problems etc.: a message, not a traceback
        from .checkpoints import CheckpointError

        if isinstance(e, CheckpointError):
            print(f"error: {e}", file=sys.stderr)
            return 2
        raise
    return 0
