"""Antibody command-line verbs: `python -m mi_viz {bench,sweep,mi-report} antibody ...`.

    python -m mi_viz bench antibody --fasta FILE --mask cdr3 --sampler mi --temperature 1 --seed 0 --out x.csv
    python -m mi_viz sweep antibody --mask cdrs --grid "sequential; topk:k=2,4" --out-dir DIR
    python -m mi_viz mi-report antibody --states 32 --out report.json

Inputs: the shipped test chains (data/antibody/test.tsv) or a FASTA of the user's V domains,
numbered by riot-na (IMGT); --mask names the region to infill (cdr3, cdrs, fwr1 .. fwr4, a
1-based span 95-108, or regions joined by '+'). bench writes a row per chain and prints its JSON
summary: avg_passes, pll (the infill's pseudo-log-likelihood under the backbone, beside the
natural chains' pll_natural), log10_pgen / pgen_zero (OLGA, heavy chains), jsd (k-means on the
backbone's embeddings against the reference chains; jsd_unirep by UniRep when installed) and
recovery. Values are sampled at temperature 1 by default (seeded).
"""

from __future__ import annotations

import random
from pathlib import Path

import torch

from ...core import driver
from ...core.backbone import Backbone
from ...core.cli_contract import DomainCLI
from ...core.errors import InputError
from ...core.mi_data import right_padded
from ...core.mi_report import midway_state
from ...core.models import load_models, require_head
from ...core.paths import portable
from ...core.sweep import inputs_label
from ..cli_runs import report_run, run_of
from ..protein.alphabet import PAD
from . import CHAIN_TYPES, DATA, DOMAIN, LOCI_OF, SCOPE, read_infills


def add_arguments(command: str, p):
    p.add_argument("--fasta", default=str(DATA / "test.tsv"), help="V domains (FASTA, or the shipped .tsv sets)")
    p.add_argument("--mask", default="cdr3", help="cdr3, cdrs, fwr1..fwr4, cdr1+cdr2, or a span 95-108")
    p.add_argument("--limit", type=int, default=None, help="the first N chains only (of --chains' type)")
    p.add_argument(
        "--chains",
        choices=tuple(LOCI_OF),
        default=None,
        help="keep only chains the numbering calls this type (a 'heavy' set can hold a VH-linker-VL fusion "
        "that numbers as its VL); each kept chain samples as it would in the whole file",
    )
    p.add_argument(
        "--backbone", default=None, help=f"{', '.join(SCOPE)} (the first the default), or a masked LM directory"
    )
    p.add_argument("--head", default=None, help="MI head checkpoint (default: checkpoints/antibody_mi_head)")
    p.add_argument("--tv-head", default=None, help="TV (DEMASK) head checkpoint, for demask (default: the shipped one)")
    p.add_argument(
        "--in-scope",
        action="store_true",
        help="keep only the chains inside what the backbone was trained on (its species and chain types, as the "
        "numbering calls them: Sapiens VH, human heavy chains); the others are counted, not infilled",
    )
    if command == "mi-report":
        p.add_argument(
            "--target", choices=("mi", "tv"), default="mi", help="report the MI head, or the TV head against exact TV"
        )
    if command == "mi-report":
        p.add_argument("--pairs", default=None, help="optional .npz with every masked pair (for plots)")
        return
    p.add_argument(
        "--reference",
        default=None,
        help="chains of the same type for the k-means JSD (e.g. data/antibody/reference_test.tsv.gz, OLGA's); "
        "default none: no JSD",
    )
    p.add_argument("--clusters", type=int, default=15, help="k of the k-means JSD (paper: 15)")
    p.add_argument("--no-judge", action="store_true", help="skip UniRep, the independent judge, even if installed")
    p.add_argument(
        "--no-other-lms", action="store_true", help="judge by the backbone's PLL only (not AntiBERTy / Sapiens)"
    )


def infill_states(model, items, n: int, seed: int, dev: str) -> torch.Tensor:
    """n held-out states (N, the longest chain), right-padded with PAD: alternately a chain with its mask
    as given, and a state at a random step of an EB (gamma 1, temperature 1) infill of it."""
    g = random.Random(seed)
    max_length = max(len(it.sequence) for it in items)
    out = []
    for k in range(n):
        it = items[k % len(items)]
        x = DOMAIN.encode([it])[0]
        out.append(midway_state(model, x, k, g.randrange, dev) if k % 2 == 1 else x)
    return right_padded(out, max_length, PAD)


def read(a, b: Backbone) -> list:
    """The chains to infill; those the numbering refuses named on stderr and counted (a.skipped),
    a constant region's trimming said once; chains outside what the backbone b was trained on said
    (or, with --in-scope, left out)."""
    got = read_infills(a.fasta, a.mask, a.limit, loci=LOCI_OF[a.chains] if a.chains else None)
    for rid, why in got.skipped:
        driver.warn(f"skipped {rid}: {why}")
    if got.other_loci:
        calls = ", ".join(f"{rid} ({CHAIN_TYPES.get(lc, lc)})" for rid, lc in got.other_loci)
        driver.warn(f"{len(got.other_loci)} chains are not {a.chains}: left out ({calls})")
    # with --chains each chain keeps its place in the file as its random stream; else its place among those read
    a.streams = got.streams if a.chains else None
    trimmed = sum(1 for it in got.items if it.numbered is not None and it.numbered.trimmed != (0, 0))
    if trimmed:
        driver.warn(
            f"{trimmed} of {len(got.items)} chains trimmed to their V domain "
            "(IMGT 1-128; a constant region or leader cut)"
        )
    scope = SCOPE.get(b.name)
    outside = [it for it in got.items if scope is not None and scope.warning("", it.numbered)]
    a.outside = 0
    if outside and a.in_scope:
        driver.warn(f"{len(outside)} of {len(got.items)} chains are outside {b.name}'s scope: left out")
        a.outside = len(outside)
        got.items[:] = [it for it in got.items if it not in outside]
        a.streams = None  # in scope: the kept chains sample by their place among the kept (as its rows were made)
        if not got.items:
            raise InputError(f"no chain of {a.fasta} is inside {b.name}'s scope")
    elif outside:
        driver.warn(
            f"{len(outside)} of {len(got.items)} chains are outside what {b.name} was trained on "
            f"({', '.join(scope.species)}; {', '.join(scope.loci)}; {scope.source}): infilled all the same"  # type: ignore[union-attr]
        )
    a.skipped, a.trimmed = len(got.skipped), trimmed
    return got.items


def run(command: str, a, cfg_or_grid, dev: str):
    b = DOMAIN.backbone(a.backbone)  # resolved once: everything below reads this object
    items = read(a, b)
    if command == "mi-report":
        model, heads = load_models(DOMAIN, b.spec, a.head, dev, kinds=(a.target,), tv_head=a.tv_head, model=b.load(dev))
        head = heads[a.target] if isinstance(heads, dict) else heads
        states = infill_states(model, items, a.states, a.seed, dev).to(dev)
        more = {"chains": Path(a.fasta).name, "mask": a.mask, "backbone": b.name}
        used = require_head(DOMAIN, a.target, a.head if a.target == "mi" else a.tv_head, b.spec)
        report = driver.ReportTask(model, head, states=states, more=lambda rep: {**more, "head": portable(used)})
        return driver.report(report, report_run(a))
    model = b.load(dev)
    scorer = DOMAIN.judge(model, a.reference, items=items, k=a.clusters, unirep=not a.no_judge,
                          backbone=b, others=not a.no_other_lms)  # fmt: skip
    what = inputs_label(f"{Path(a.fasta).name}:{a.mask}" + (f":{a.chains}" if a.chains else ""), a.limit)
    what += ":in-scope" if a.in_scope else ""
    reference = Path(a.reference).name if a.reference else "none"
    task = driver.Task(
        DOMAIN,
        items,
        {"inputs": what, "reference": reference},
        b,
        weights=b.weights,
        head=a.head,
        tv_head=a.tv_head,
        score=lambda r: scorer(r.rows),
        columns={
            "inputs": what,
            "backbone": b.name,
            "skipped": a.skipped,
            "trimmed": a.trimmed,
            **({"outside_scope": a.outside} if a.in_scope else {}),
        },  # fmt: skip
        tail={"reference": reference},
        ids=[it.id for it in items],
        streams=a.streams,
        title=f"Antibodies ({a.mask} infill): pseudo-log-likelihood vs passes",
        plot={"metric": "pll", "scale": 1.0, "ylabel": "infill pseudo-log-likelihood (nats / residue)"},
        temperature=a.temperature if command == "sweep" else None,
        sample_seed=getattr(a, "sample_seed", 0),
    )
    return driver.bench_or_sweep(task, cfg_or_grid, run_of(command, a), dev)


CLI = DomainCLI(
    add_arguments=add_arguments,
    run=run,
    default_grid="sequential; topk:k=2,4; eb:gamma=1,4,16; mi:gamma=1,4,16:lam=1",
    domain_args=lambda a: (a.backbone,) if getattr(a, "backbone", None) else (),
)
