"""Command line: `python -m mi_viz COMMAND DOMAIN ...`.

    bench      decode a set of inputs with one sampler; per-item CSV
    sweep      a grid of samplers and parameters; summary CSV + plots
    mi-report  estimated vs ground-truth MI on held-out states
    figure     the paper's Figure 1 picture (Sudoku)
    fetch-esmc download ESM-C 300M's weights into the Hugging Face cache (the only download mi-viz makes)
    train-family  a family backbone on a protein family's alignment (with its structure's contact map)
    contacts   a family backbone's conditional MI against the structure's contacts, beside MIp and a Potts model

Each domain (mi_viz/domains/NAME/cli.py) adds its own input arguments and runs the verb;
the sampler arguments are shared. Contract (stable): the last line printed to stdout is a
one-line JSON summary; bad input is an `error: ...` line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

import torch

from .core import strict_json
from .core.cli_types import finite_float
from .core.errors import UserError
from .core.samplers import PARAMS, SAMPLERS, config_for
from .core.sweep import parse_grid
from .domains import DOMAINS, get_domain
from .domains.family import cli as family_cli
from .domains.protein.backbone import ESMC_300M_REPO, esmc_300m_weights

COMMANDS = {
    "bench": "decode a set of inputs with one sampler",
    "sweep": "a grid of samplers and parameters; summary CSV + plots",
    "mi-report": "estimated vs ground-truth MI on held-out states",
    "figure": "the Figure-1 picture: board, entropy, estimated and true MI",
}


def _device(name):
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return name


def _domain_cli(name):
    return importlib.import_module(DOMAINS[name] + ".cli")


def _add_sampler_args(p):
    """--sampler and one flag per declared parameter (samplers.PARAMS), each saying which rules take it."""
    p.add_argument("--sampler", default="sequential", help="one of: " + ", ".join(SAMPLERS))
    for name, spec in PARAMS.items():
        takers = [s for s, rule in SAMPLERS.items() if name in rule.params]
        kw: dict = {"choices": list(spec.choices)} if spec.kind == "choice" else {}
        kw["type"] = int if spec.kind == "int" else str if spec.kind == "choice" else finite_float
        p.add_argument(f"--{name}", default=None, help=f"{spec.help} ({', '.join(takers)})", **kw)
    p.add_argument("--temperature", type=finite_float, default=None, help="0 = argmax (the domain sets the default)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--gt-eps", type=finite_float, default=1e-3, help="pruning tolerance of ground-truth MI (oracle rules)"
    )


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m mi_viz", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    for cmd, help_text in COMMANDS.items():
        c = sub.add_parser(cmd, help=help_text)
        dsub = c.add_subparsers(dest="domain", required=True, metavar="DOMAIN")
        for name in DOMAINS:
            mod = _domain_cli(name)
            if cmd not in mod.COMMANDS:
                continue
            p = dsub.add_parser(name, help=f"{cmd} on {name}")
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
            mod.add_arguments(cmd, p)
    sub.add_parser("fetch-esmc", help="download ESM-C 300M's weights (about 1.2 GB) into the Hugging Face cache")
    family_cli.add_train_arguments(sub.add_parser("train-family", help="train a family backbone on an alignment"))
    family_cli.add_contacts_arguments(
        sub.add_parser("contacts", help="conditional MI of a family backbone against a structure's contacts")
    )
    return ap


def fetch_esmc() -> int:
    """The one explicit download: ESM-C 300M's weights file, from Hugging Face, into its cache."""
    print(f"downloading {ESMC_300M_REPO} (weights only) into the Hugging Face cache ...", file=sys.stderr)
    try:
        path = esmc_300m_weights(allow_download=True)
    except Exception as e:  # no network, no access: say so in one line
        print(f"error: could not download ESM-C 300M ({type(e).__name__}: {e})", file=sys.stderr)
        return 2
    print(strict_json.dumps({"weights": str(path)}))
    return 0


def _sampler_or_grid(a, mod):
    defaults = get_domain(a.domain).sampler_defaults
    if a.cmd == "bench":
        t = a.temperature if a.temperature is not None else getattr(mod, "DEFAULT_TEMPERATURE", 0.0)
        params = {p: getattr(a, p) for p in PARAMS}
        return config_for(a.sampler, defaults, **params, temperature=t, seed=a.seed, gt_eps=a.gt_eps)
    if a.cmd == "sweep":
        return parse_grid(a.grid or mod.DEFAULT_GRID, defaults)
    return None


def main(argv=None):
    a = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")  # the library's progress notes, on stderr
    if a.cmd == "fetch-esmc":
        return fetch_esmc()
    if getattr(a, "threads", None):
        torch.set_num_threads(a.threads)
    try:
        if a.cmd in ("train-family", "contacts"):
            (family_cli.train_family_cli if a.cmd == "train-family" else family_cli.contacts_cli)(a)
            return 0
        mod = _domain_cli(a.domain)
        mod.run(a.cmd, a, _sampler_or_grid(a, mod), _device(a.device))
    except (UserError, ValueError, FileNotFoundError) as e:  # bad input, an absent model: a message, not a traceback
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0
