"""Command line: `python -m mi_viz COMMAND DOMAIN ...`.

    bench      decode a set of inputs with one sampler; per-item CSV
    sweep      a grid of samplers and parameters; summary CSV + plots
    mi-report  estimated vs ground-truth MI on held-out states
    figure     the paper's Figure 1 picture (Sudoku)
    ...        and the verbs a domain adds (fetch-esmc: proteins; train-family, contacts: families)

Each domain (mi_viz/domains/NAME/cli.py) registers a DomainCLI (core/cli_contract.py): its own
input arguments, how it runs a verb, its own verbs; the sampler arguments are shared and this
file names no domain. Contract (stable): the last line printed to stdout is a
one-line JSON summary; bad input is an `error: ...` line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import logging
import os
import sys
from pathlib import Path

import torch

from .core import driver
from .core.cli_contract import GENERIC, DomainCLI
from .core.cli_types import finite_float
from .core.errors import InputError, UserError
from .core.mi_data import MIDataError, ShardRun, merge, pack
from .core.samplers import PARAMS, SAMPLERS, config_for
from .core.sweep import inputs_label, parse_grid
from .domains import DOMAINS, get_backbone, get_domain
from .domains.cli_runs import run_of


def _device(name):
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return name


def domain_cli(name: str) -> DomainCLI:
    """The CLI a domain registers (mi_viz/domains/NAME/cli.py: CLI); a domain without one gets the
    generic bench and sweep over a file of inputs (cli.py is optional: a new domain runs from the
    command line before it writes one)."""
    module = DOMAINS[name] + ".cli"
    if importlib.util.find_spec(module) is None:
        return GENERIC_CLI
    return importlib.import_module(module).CLI


def _add_inputs_args(cmd: str, p) -> None:
    p.add_argument("--inputs", required=True, help="a text file, one input a line, as the domain's encode takes it")
    p.add_argument("--limit", type=int, default=None, help="the first N inputs")


def _run_inputs(command: str, a, cfg_or_grid, dev: str):
    """bench / sweep of a domain with no CLI of its own: its inputs one a line, its own score and judge."""
    dom = get_domain(a.domain)
    path = Path(a.inputs)
    if not path.is_file():
        raise InputError(f"{path}: no such file of inputs")
    items = [ln.strip() for ln in path.read_text().splitlines() if ln.strip()][: a.limit]
    if not items:
        raise InputError(f"{path} holds no input")
    try:
        dom.encode(items[:1])
    except (ValueError, KeyError, IndexError) as e:
        raise InputError(f"{path}: the first input is not one the {a.domain} domain reads ({e})") from None
    b = get_backbone(a.domain)
    judge = dom.judge(b.load(dev))
    label = inputs_label(path.name, a.limit)
    try:  # the sweep's plot draws the domain's first set-level figure against passes
        metric = next(iter(dom.summarize([])), "avg_passes")
    except (ValueError, KeyError, IndexError, ZeroDivisionError):
        metric = "avg_passes"
    task = driver.Task(dom, items, {"inputs": label}, b, weights=b.weights,
                       score=lambda r: judge(r.rows), columns={"inputs": label}, plot={"metric": metric},
                       temperature=a.temperature if command == "sweep" else None,
                       sample_seed=getattr(a, "sample_seed", 0))  # fmt: skip
    return driver.bench_or_sweep(task, cfg_or_grid, run_of(command, a), dev)


GENERIC_CLI = DomainCLI(add_arguments=_add_inputs_args, run=_run_inputs, commands=("bench", "sweep"))


def _add_sampler_args(p):
    """--sampler and one flag per declared parameter (samplers.PARAMS), each saying which rules take it."""
    p.add_argument("--sampler", default="sequential", help="one of: " + ", ".join(SAMPLERS))
    for name, spec in PARAMS.items():
        takers = [s for s, rule in SAMPLERS.items() if name in rule.params]
        kw: dict = {"choices": list(spec.choices)} if spec.kind == "choice" else {}
        kw["type"] = int if spec.kind == "int" else str if spec.kind == "choice" else finite_float
        p.add_argument(f"--{name}", default=None, help=f"{spec.help} ({', '.join(takers)})", **kw)
    p.add_argument(
        "--temperature", type=finite_float, default=None, help="0 = argmax (default: the domain's default_temperature)"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--gt-eps", type=finite_float, default=1e-3, help="pruning tolerance of ground-truth MI (oracle rules)"
    )


def _add_generic_args(cmd: str, p) -> None:
    """The flags every domain's verb shares."""
    p.add_argument("--device", default="auto")
    p.add_argument("--batch-size", type=int, default=None, help="sequences per forward pass")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    if cmd == "bench":
        _add_sampler_args(p)
        p.add_argument("--out", required=True, help="per-item CSV")
    elif cmd == "sweep":
        p.add_argument("--grid", default=None, help="e.g. 'topk:k=2,4; eb:gamma=0.2,0.5; mi:gamma=0.3:lam=0,1'")
        p.add_argument("--out-dir", required=True)
        p.add_argument("--title", default=None)
        p.add_argument("--temperature", type=finite_float, default=None, help="every setting's (default: the domain's)")
        p.add_argument("--sample-seed", type=int, default=0, help="seed of the sampled values")
        p.add_argument(
            "--save-rows",
            action="store_true",
            help="also write each setting's rows under OUT/rows/ (gzip-compressed CSV: the item's index i and "
            "its figures; Sudoku leaves out the puzzle and output strings, which i recovers)",
        )
        p.add_argument(
            "--jobs",
            type=int,
            default=1,
            help="settings decoded side by side, each in its own process with threads/jobs "
            "torch threads (benchmarks/throughput.py)",
        )
        p.add_argument(
            "--resume",
            action="store_true",
            help="reuse rows of OUT/sweep.csv with the same setting, inputs and weights "
            "(sha256 of the checkpoints); everything else is decoded",
        )
        p.add_argument(
            "--keep-others",
            action="store_true",
            help="with --resume: keep the earlier rows whose setting this grid does not name",
        )
    elif cmd == "mi-report":
        p.add_argument("--states", type=int, default=100)
        p.add_argument("--eps", type=finite_float, default=1e-3, help="pruning tolerance of the ground truth")
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--out", required=True, help="summary JSON")
    elif cmd == "figure":
        p.add_argument("--eps", type=finite_float, default=1e-3)
        p.add_argument("--out", required=True, help="PNG path")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m mi_viz", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    clis = {name: domain_cli(name) for name in DOMAINS}
    for cmd, help_text in GENERIC.items():
        c = sub.add_parser(cmd, help=help_text)
        dsub = c.add_subparsers(dest="domain", required=True, metavar="DOMAIN")
        for name, dcli in clis.items():
            if cmd in dcli.commands:
                p = dsub.add_parser(name, help=f"{cmd} on {name}")
                _add_generic_args(cmd, p)
                dcli.add_arguments(cmd, p)
    for dcli in clis.values():
        for verb, spec in dcli.verbs.items():
            p = sub.add_parser(verb, help=spec.help)
            spec.add_arguments(p)
            p.set_defaults(run_verb=spec.run)
    return ap


def _sampler_or_grid(a, dcli: DomainCLI):
    if a.cmd not in ("bench", "sweep"):
        return None
    dom = get_domain(a.domain, *dcli.domain_args(a))  # a backbone with defaults of its own (Sapiens VH) reads them
    t = a.temperature if a.temperature is not None else dom.default_temperature
    if a.cmd == "bench":
        params = {p: getattr(a, p) for p in PARAMS}
        return config_for(a.sampler, dom.sampler_defaults, **params, temperature=t, seed=a.seed, gt_eps=a.gt_eps)
    a.temperature = t  # sweep
    return parse_grid(a.grid or dcli.default_grid, dom.sampler_defaults)


def main(argv=None):
    a = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")  # the library's progress notes, on stderr
    if getattr(a, "threads", None):
        torch.set_num_threads(a.threads)
    try:
        if getattr(a, "run_verb", None) is not None:
            rc = a.run_verb(a)
            return rc if isinstance(rc, int) else 0
        dcli = domain_cli(a.domain)
        dcli.run(a.cmd, a, _sampler_or_grid(a, dcli), _device(a.device))
    except UserError as e:  # bad input, an absent model: a message; anything else is a bug and keeps its traceback
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


# --- the training scripts' data runs (training/make_*_mi_dataset.py): their shared flags, read here
# into the core's typed ShardRun, so that no module of the core reads an argparse Namespace --------
def add_shard_arguments(ap: argparse.ArgumentParser, out: str, shard_size: int, chunk: int = 512) -> None:
    """The flags every training/make_*_mi_dataset.py shares: where the shards go, how many jobs
    each holds, this process's rank among several, the budgets, and the pack / merge modes."""
    ap.add_argument("--out", default=out, help="the shards' folder")
    ap.add_argument("--shard-size", type=int, default=shard_size, help="jobs per shard")
    ap.add_argument("--eps", type=finite_float, default=1e-3, help="pruning tolerance of the ground truth")
    ap.add_argument("--chunk", type=int, default=chunk, help="states per ground-truth pass batch")
    ap.add_argument("--rank", type=int, default=int(os.environ.get("RANK", 0)))
    ap.add_argument("--world", type=int, default=int(os.environ.get("WORLD_SIZE", 1)))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-minutes", type=finite_float, default=0.0, help="stop between shards past this")
    ap.add_argument(
        "--max-shards",
        type=int,
        default=0,
        help="only this rank's first N shards (0: all): a set size that does not depend on the machine's speed",
    )
    ap.add_argument("--merge", metavar="FOLDER", help="merge the shards in FOLDER and exit")
    ap.add_argument(
        "--pack", nargs=2, metavar=("FOLDER", "FILE"), help="write FOLDER's states compactly to FILE and exit"
    )
    ap.add_argument("--max-mb", type=finite_float, default=0.0, help="with --pack: the first states that fit in N MiB")


def shard_run(a: argparse.Namespace) -> ShardRun:
    """The parsed flags as the core's ShardRun."""
    return ShardRun(Path(a.out), a.shard_size, a.rank, a.world, a.max_shards, a.max_minutes)


def pack_or_merge(a: argparse.Namespace, mask_id: int) -> bool:
    """Run --merge or --pack if asked (True: done); an unreadable folder exits with its message."""
    try:
        if a.merge:
            merge(Path(a.merge))
            return True
        if a.pack:
            pack(Path(a.pack[0]), Path(a.pack[1]), mask_id, a.max_mb)
            return True
    except MIDataError as e:
        raise SystemExit(f"error: {e}") from None
    return False
