"""Loading a domain's models by name: the backbone and, when asked, the heads that fit it.

A head predicts one map (mi_head.HeadConfig.target): the MI ("mi", the paper's) or DEMASK's
expected TV influence ("tv"). A domain ships its MI head as default_head(); a TV head, where it
ships one, sits beside it with "_tv_head" for "_mi_head" in its name. A rule says which it reads
(Sampler.head_kind), so a grid of mi and demask settings loads both, and decode hands each rule its own.
"""

from __future__ import annotations

import collections
import inspect
import os
from pathlib import Path
from typing import Any

from .checkpoints import CheckpointError, checkpoint_paths, fingerprint
from .errors import UserError
from .mi_head import MIHead, check_head_fits, load_head
from .protocol import Domain, MaskedModel

KINDS = {"mi": "MI", "tv": "TV (DEMASK)"}


class NoHeadError(UserError, ValueError):
    """A rule reads a head that this backbone does not have; the message names the ones it has."""


def head_path(domain: Domain, kind: str = "mi", given: Any = None, spec: Any = None) -> Any:
    """The head checkpoint to read for `kind`: the one given, else the one the domain ships for this
    backbone (spec: as load_model takes it; None: the default backbone), else None."""
    if given is not None:
        return given
    default_head: Any = domain.default_head  # a domain of several backbones takes default_head(spec)
    takes_spec = "spec" in inspect.signature(default_head).parameters
    p = default_head(spec) if spec is not None and takes_spec else default_head()
    if p is None or kind == "mi":
        return p
    tv = Path(str(p)).with_name(Path(str(p)).name.replace("_mi_head", f"_{kind}_head"))
    return tv if checkpoint_paths(tv)[1].exists() else None


def require_head(domain: Domain, kind: str = "mi", given: Any = None, spec: Any = None) -> Any:
    """head_path, or NoHeadError naming the heads this backbone has."""
    p = head_path(domain, kind, given, spec)
    if p is None:
        have = [KINDS[k] for k in KINDS if head_path(domain, k, None, spec) is not None]
        raise NoHeadError(
            f"no {KINDS[kind]} head is shipped for this {domain.name} backbone (it has: {', '.join(have) or 'none'}); "
            f"name one with {'--head' if kind == 'mi' else '--tv-head'}"
        )
    return p


def load_kind(
    domain: Domain, model: MaskedModel, kind: str, path: Any = None, device: str = "cpu", checkpoint: Any = None
) -> MIHead:
    """One head of a kind for this backbone, refused by name when it does not fit: another width or
    block count (check_head_fits), another map than the rule reads, or, for a head that recorded the
    fingerprint of the weights it was trained on, other weights."""
    p = require_head(domain, kind, path, checkpoint)
    head, meta = load_head(p, device=device)
    if head.config.target != kind:
        got = KINDS[head.config.target]
        raise CheckpointError(
            f"{p} is {'an' if got == 'MI' else 'a'} {got} head, not the {KINDS[kind]} head this rule reads"
        )
    check_head_fits(head, model)
    want = (meta.get("extra") or {}).get("mdm_sha")
    if want:
        weights = domain.weights(checkpoint) if hasattr(domain, "weights") else (checkpoint or domain.default_model)
        got = fingerprint(weights)
        if got != want:
            raise CheckpointError(
                f"{p} was trained on the backbone whose weights' fingerprint is {want}; these weights are {got}"
            )
    return head


LOAD_LOG = "MI_VIZ_LOAD_LOG"  # the environment variable naming the file build_model appends to
BUILDS: collections.Counter = collections.Counter()  # (domain name, str(spec)) -> builds in this process


def build_model(domain: Domain, spec: Any = None, device: str = "cpu") -> Any:
    """The one place a backbone is built (domain.load_model), and logged: one line "pid, domain,
    spec" appended to the file $MI_VIZ_LOAD_LOG names, when set, and counted in BUILDS. How a test
    (or a user chasing memory) sees that bench, sweep and their workers build each backbone once per
    process: the log across processes, BUILDS within one."""
    model = domain.load_model(spec, device=device)
    BUILDS[(domain.name, str(spec))] += 1
    log = os.environ.get(LOAD_LOG)
    if log:
        with open(log, "a") as f:
            f.write(f"{os.getpid()}\t{domain.name}\t{spec}\n")
    return model


def load_models(
    domain: Domain,
    checkpoint: Any = None,
    head: Any = None,
    device: str = "cpu",
    need_head: bool = False,
    kinds: tuple[str, ...] = (),
    tv_head: Any = None,
    model: Any = None,
) -> tuple[Any, Any]:
    """(model, head) for a domain: its shipped checkpoints unless paths are given. need_head: the MI
    head (an MIHead back); kinds: the heads to load by map ("mi", "tv"): with "tv" among them a dict
    kind -> head comes back (decode picks each rule's own). A head that does not fit is refused by name.
    model: the backbone when the caller built it already (it is not built again)."""
    if model is None:
        model = build_model(domain, checkpoint, device)
    wanted = set(kinds) | ({"mi"} if need_head else set())
    if not wanted:
        return model, None
    heads = {k: load_kind(domain, model, k, head if k == "mi" else tv_head, device, checkpoint) for k in sorted(wanted)}
    return model, heads["mi"] if wanted == {"mi"} else heads


def kinds_of(cfgs: list) -> tuple[str, ...]:
    """The head kinds a list of settings reads (the empty tuple when none reads a head)."""
    return tuple(sorted({c.head_kind for c in cfgs if c.needs_head}))
