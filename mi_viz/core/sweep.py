"""Sweeps: a grid of sampler settings over one set of inputs, resumable, one CSV row per setting.

Every row records its setting, the inputs (by name and count) and the sha256 fingerprints
of the backbone and, for `mi` rows, the head that produced it; `resume` reuses a row only
when all of those match (decoding is deterministic), so adding a setting or retraining the
head re-decodes just what changed. The CSV is rewritten after every point, in grid order:
nothing is lost if a run stops.
"""

from __future__ import annotations

import csv
import itertools
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .bench import SHIPPED, BenchResult, Weights, run_grid, setting_columns, write_rows
from .checkpoints import fingerprint
from .errors import InputError
from .models import kinds_of, load_models, require_head
from .plots import SweepStyle, plot_sweep
from .protocol import Domain
from .samplers import PARAMS, SAMPLERS, SamplerConfig, columns, config_for

log = logging.getLogger(__name__)
RUN_KEYS = ("temperature", "seed", "rule_version", "n")


def setting_keys() -> tuple[str, ...]:
    """What identifies a sweep row's setting: the sampler, every declared parameter (the committed
    columns first: a parameter a row lacks reads as empty, so older rows keep their identity), the
    temperature, seed, rule version and the number of items."""
    return ("sampler", *columns(), *RUN_KEYS)


FINGERPRINTS = ("mdm_sha", "head_sha")


def parse_grid(spec: str, domain_defaults: dict | None = None) -> list[SamplerConfig]:
    """'topk:k=2,4; eb:gamma=0.2,0.5; mi:gamma=0.3:lam=0,1:scan=stop,skip' -> SamplerConfigs
    (cartesian per sampler; parameters not named take the domain's defaults). A misspelt
    sampler or parameter, a value that is not a number and an empty grid are InputErrors that
    name what is known."""
    out = []
    for part in filter(None, (p.strip() for p in spec.split(";"))):
        name, *params = part.split(":")
        name = name.strip()
        if name not in SAMPLERS:
            raise InputError(f"unknown sampler {name!r} in the grid; choose from {', '.join(sorted(SAMPLERS))}")
        known = [*SAMPLERS[name].params, "temperature", "seed"]
        keys, values = [], []
        for p in params:
            if "=" not in p:
                raise InputError(f"bad grid parameter {p!r} for {name}: expected name=v1,v2")
            k, vs = (x.strip() for x in p.split("=", 1))
            if k not in known:
                raise InputError(f"unknown parameter {k!r} for {name}; it takes {', '.join(known)}")
            cast: Callable[[str], Any] = PARAMS[k].cast if k in PARAMS else (int if k == "seed" else float)
            try:
                values.append([cast(v) for v in vs.split(",")])
            except ValueError:
                raise InputError(f"bad value in {k}={vs!r} for {name}: expected numbers separated by commas") from None
            keys.append(k)
        for combo in itertools.product(*values) if keys else [()]:
            out.append(config_for(name, domain_defaults, **dict(zip(keys, combo))))
    if not out:
        raise InputError("the grid is empty: name at least one sampler, e.g. 'sequential; eb:gamma=0.01,0.1'")
    return out


def previous_rows(path: Path, keys: tuple[str, ...]) -> dict:
    """Rows of an earlier sweep.csv keyed by their full setting (for resume)."""
    if not path.exists():
        return {}
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:  # rows written before rules were versioned: every rule then was version 1 or 2
        r["rule_version"] = r.get("rule_version") or "1"
    return {setting_key(r, keys): r for r in rows}


def setting_key(row: dict, keys: tuple[str, ...]) -> tuple:
    """A row's setting as text: the same key for a fresh summary and for a row read back from CSV."""
    return tuple("" if row.get(k) is None else str(row.get(k)) for k in keys)


def inputs_label(name: str, limit: int | None = None) -> str:
    """A sweep's `inputs` column: what it read (a file and its options, "x.tsv.gz:cdr3") and, where it
    read only the first N, ":firstN". inputs_file reads it back without the limit."""
    return name + (f":first{limit}" if limit else "")


def inputs_file(label: str) -> str:
    """An `inputs` label (inputs_label) with its limit dropped: an oracle sweep over the first N inputs
    reads the same file, with the same options, as a head sweep over all of them."""
    return ":".join(t for t in label.split(":") if not re.fullmatch(r"first\d+", t))


TEXT_COLUMNS = {"sampler", "scan", "puzzles", "inputs", "mdm_sha", "head_sha"}  # a sha can look like 1e5


def typed(row: dict) -> dict:
    """A sweep.csv row read back as text -> numbers where they are numbers."""
    out = {}
    for k, v in row.items():
        if isinstance(v, str) and k not in TEXT_COLUMNS:
            try:
                v = None if v == "" else (int(v) if v.lstrip("-").isdigit() else float(v))
            except ValueError:
                pass
        out[k] = v
    return out


def rows_path(out_dir: str | Path, label: str) -> Path:
    """Where a sweep keeps one setting's per-item rows (--save-rows): OUT/rows/LABEL.csv.gz, the
    label as SamplerConfig.label() (or samplers.row_label, from a sweep.csv line) writes it."""
    return Path(out_dir) / "rows" / (label.replace(" ", "_") + ".csv.gz")


def saved_rows(rows: list[dict], unsaved: tuple[str, ...]) -> list[dict]:
    """Per-item rows as a sweep saves them: the item's index i first, without the domain's
    unsaved columns (Domain.unsaved_columns: what the index recovers)."""
    return [{"i": i, **{k: v for k, v in row.items() if k not in unsaved}} for i, row in enumerate(rows)]


@dataclass(frozen=True)
class SweepOptions:
    """How a sweep runs and what it writes beside its rows: batch_size sequences a pass; jobs
    settings side by side (bench.run_grid); resume reuses rows of the same setting, inputs and
    weights (keep_others: and keeps those the grid does not name); save_rows writes each setting's
    per-item rows; title and plot (metric, scale, paper points) draw sweep.png; streams: each
    item's random stream; extra(BenchResult) -> dict adds set-level figures to a fresh row (a
    judge); report(dict) is called with each row as it is ready and last with the run's summary."""

    batch_size: int = 64
    jobs: int = 1
    resume: bool = False
    save_rows: bool = False
    keep_others: bool = False
    title: str = ""
    plot: dict | None = None
    streams: list[int] | None = None
    extra: Callable[[BenchResult], dict] | None = None
    report: Callable[[dict], None] | None = None


DEFAULTS = SweepOptions()  # one process, nothing resumed or saved beyond sweep.csv and its plot


def run_sweep(
    domain: Domain,
    cfgs: list[SamplerConfig],
    items: list,
    inputs: dict,
    out_dir: str | Path,
    weights: Weights = SHIPPED,
    options: SweepOptions = DEFAULTS,
) -> list[dict]:
    """Decode items under every setting and write OUT/sweep.csv (+ sweep.png / sweep.html).

    inputs: what identifies the items in a row ({"puzzles": "test_hard.txt"} for Sudoku);
    weights: the backbone and heads (bench.Weights) and the file the rows fingerprint; options:
    how it runs (SweepOptions). Returns the rows in grid order; with keep_others, the earlier rows
    whose setting is not in this grid stay, after the grid's (a sweep that adds settings, or rows
    of an earlier rule, keeps its history)."""
    o, w = options, weights
    checkpoint, head, device, tv_head = w.checkpoint, w.head, w.device, w.tv_head
    batch_size, jobs, resume, save_rows, keep_others = o.batch_size, o.jobs, o.resume, o.save_rows, o.keep_others
    title, plot, mdm_path, extra, report, streams = o.title, o.plot, w.fingerprint, o.extra, o.report, o.streams
    say = report or (lambda d: None)
    t0 = time.perf_counter()
    kinds = kinds_of(cfgs)
    if kinds and jobs > 1:  # a bad head fails here, not in a worker after other settings ran
        load_models(domain, checkpoint, head, device, kinds=kinds, tv_head=tv_head, model=w.built())
    mdm_sha = fingerprint(mdm_path or checkpoint or domain.default_model)
    head_sha = {k: fingerprint(require_head(domain, k, head if k == "mi" else tv_head, checkpoint)) for k in kinds}
    keys = setting_keys() + tuple(inputs) + FINGERPRINTS
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    previous = previous_rows(out / "sweep.csv", keys) if resume else {}
    summaries: dict[int, dict] = {}
    idents, todo = [], []
    for i, c in enumerate(cfgs):
        ident = {
            "sampler": c.name,
            **setting_columns(c),
            "temperature": c.temperature if c.temperature > 0 else None,
            "seed": c.seed if c.temperature > 0 else None,
            "rule_version": c.rule.version,
            "n": len(items),
            **inputs,
            "mdm_sha": mdm_sha,
            "head_sha": head_sha[c.head_kind] if c.needs_head else "",
        }
        idents.append(ident)
        old = previous.get(setting_key(ident, keys))
        if old is not None:  # same setting, same inputs, same weights: the decode is deterministic
            summaries[i] = typed(old)
            log.info("reused: %s (same inputs and weights)", c.label())
            say(summaries[i])
        else:
            todo.append(i)

    kept: list[dict] = []
    if keep_others:
        mine = {setting_key(ident, keys) for ident in idents}
        kept = [typed(r) for k, r in previous.items() if k not in mine]

    def write_csv() -> None:
        rows = [summaries[i] for i in sorted(summaries)] + kept
        with open(out / "sweep.csv", "w", newline="") as f:
            cols = list(dict.fromkeys(k for s in rows for k in s))  # rows of older sweeps may lack a column
            w = csv.DictWriter(f, fieldnames=cols, restval="")
            w.writeheader()
            w.writerows(rows)

    grid = run_grid(domain, [cfgs[i] for i in todo], items, w, batch_size, jobs, streams=streams)
    for j, r in grid:
        i = todo[j]
        judged = extra(r) if extra else {}  # first: a judge may add its per-item figures to the rows
        if save_rows:
            write_rows(saved_rows(r.rows, domain.unsaved_columns), rows_path(out, cfgs[i].label()))
        summaries[i] = {
            **r.summary,
            **judged,
            **{k: idents[i][k] for k in (*inputs, *FINGERPRINTS)},
            "jobs": jobs,
        }
        say(summaries[i])
        write_csv()
    write_csv()
    rows = [summaries[i] for i in sorted(summaries)] + kept
    plot_sweep(rows, out / "sweep.png", out / "sweep.html", title=title, style=SweepStyle(**(plot or {})))
    say(
        {
            "points": len(rows),
            "decoded": len(todo),
            "jobs": jobs,
            "wall_seconds": round(time.perf_counter() - t0, 1),
            "out_dir": str(out),
        }
    )
    return rows
