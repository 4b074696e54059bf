"""What a domain's command line registers with `python -m mi_viz`, as samplers register themselves:
the generic verbs it takes part in, its own input flags, how it runs a verb, and any verbs of its
own (train-family, contacts, fetch-esmc). mi_viz/cli.py reads one DomainCLI per domain folder
(`mi_viz/domains/NAME/cli.py: CLI`) and never names a domain; mypy checks each against this type."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

GENERIC = {
    "bench": "decode a set of inputs with one sampler",
    "sweep": "a grid of samplers and parameters; summary CSV + plots",
    "mi-report": "estimated vs ground-truth MI on held-out states",
    "figure": "the Figure-1 picture: board, entropy, estimated and true MI",
}


@dataclass(frozen=True)
class Verb:
    """A top-level verb a domain adds (`python -m mi_viz VERB ...`): its flags and its run, which
    returns the process's exit status (0) or raises UserError / ValueError for bad input."""

    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], Any]


@dataclass(frozen=True)
class DomainCLI:
    add_arguments: Callable[[str, argparse.ArgumentParser], None]  # (verb, its parser): the domain's own flags
    run: Callable[[str, argparse.Namespace, Any, str], Any]  # (verb, args, a SamplerConfig or a grid, device)
    default_grid: str = "sequential"  # sweep's grid when --grid is not given
    commands: tuple[str, ...] = ("bench", "sweep", "mi-report")  # which of GENERIC this domain takes part in
    verbs: dict[str, Verb] = field(default_factory=dict)  # its own top-level verbs
    # the domain's arguments read from its flags (get_domain(name, *args): whose sampler defaults a
    # bench or sweep starts from; the antibody CLI's --backbone)
    domain_args: Callable[[argparse.Namespace], tuple] = lambda a: ()

    def __post_init__(self) -> None:
        bad = set(self.commands) - set(GENERIC)
        if bad:
            raise ValueError(f"unknown generic verbs {sorted(bad)}; choose from {', '.join(GENERIC)}")
