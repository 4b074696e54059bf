"""Protein command-line verbs: `python -m mi_viz {bench,sweep} protein ...`.

    python -m mi_viz bench protein --n 500 --lengths 50-100 --sampler sequential --out OUT.csv
    python -m mi_viz bench protein --prompts PROMPTS.fasta --sampler eb --gamma 1 --out OUT.csv
    python -m mi_viz sweep protein --n 500 --grid "sequential; topk:k=4,8" --out-dir DIR

bench writes one CSV row per sequence (length, passes, the sequence), the sequences as FASTA
beside it (OUT.fasta), and prints as its last line a JSON summary with the set's metrics
against the reference (metrics.set_metrics: the paper's k-means JSD, in bits, and the rest).
Values are sampled (temperature 1 by default: argmax makes repeats in proteins), seeded.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import torch

from ...core import driver, strict_json
from ...core.cli_contract import DomainCLI, Verb
from ...core.mi_data import right_padded
from ...core.mi_report import midway_state
from ...core.models import load_models
from ...core.paths import portable
from ..cli_runs import report_run, run_of
from . import DATA, DOMAIN, PAPER_TABLE2, prompts_of_lengths
from .alphabet import MASK, PAD, SequenceError, encode
from .backbone import ESMC_300M_REPO, esmc_300m_weights, weights_file
from .fasta import read_fasta, write_fasta
from .report import separation_profile

DEFAULT_REFERENCE = DATA / "reference_test.fasta"


def add_arguments(command: str, p):
    if command == "mi-report":
        p.add_argument("--heldout", default=str(DATA / "heldout_test.fasta"), help="held-out proteins (test split)")
        p.add_argument("--backbone", default=None, help="protein_mdm (default), esmc_300m, a .pth, or a checkpoint")
        p.add_argument("--head", default=None, help="MI head checkpoint (default: the shipped protein head)")
        p.add_argument("--max-length", type=int, default=100, help="held-out proteins cropped to this many residues")
        p.add_argument("--pairs", default=None, help="optional .npz with every masked pair (for plots)")
        return
    src = p.add_mutually_exclusive_group()
    src.add_argument("--n", type=int, default=500, help="unconditional: this many proteins (default 500)")
    src.add_argument("--prompts", default=None, help="FASTA of prompts: residues kept, '_' positions generated")
    p.add_argument("--lengths", default="50-100", help="unconditional lengths, drawn uniformly from LO-HI (seeded)")
    p.add_argument("--length-seed", type=int, default=0, help="seed of the drawn lengths")
    p.add_argument("--reference", default=str(DEFAULT_REFERENCE), help="natural reference FASTA for the metrics")
    p.add_argument(
        "--backbone", default=None, help="protein_mdm (default), esmc_300m, a .pth of its weights, or a checkpoint"
    )
    p.add_argument(
        "--embedder", default=None, help="the model whose embeddings the JSD clusters (default: the backbone)"
    )
    p.add_argument("--head", default=None, help="MI head checkpoint (mi sampler)")
    p.add_argument("--clusters", type=int, default=15, help="k of the k-means JSD (paper: 15)")
    p.add_argument("--no-judge", action="store_true", help="skip UniRep, the independent judge, even if installed")


def lengths_of(text: str) -> tuple[int, int]:
    try:
        lo, hi = (int(v) for v in text.split("-"))
    except ValueError:
        raise SequenceError(f"--lengths wants LO-HI, e.g. 50-100, got {text!r}") from None
    return lo, hi


def prompts_of(a) -> tuple[list[str], list[str], str]:
    """(ids, prompts, what they are) from --prompts or --n / --lengths."""
    if a.prompts:
        recs = read_fasta(a.prompts, validate=False)
        for rid, seq in recs:
            try:
                DOMAIN.encode([seq])
            except SequenceError as e:
                raise SequenceError(f"{a.prompts}, record {rid}: {e}") from None
            if "_" not in seq:
                raise SequenceError(f"{a.prompts}, record {rid}: the prompt has no masked position ('_') to generate")
        return [r for r, _ in recs], [s for _, s in recs], Path(a.prompts).name
    prompts = prompts_of_lengths(a.n, lengths_of(a.lengths), a.length_seed)
    return [f"gen{i}" for i in range(len(prompts))], prompts, f"n{a.n}_len{a.lengths}_seed{a.length_seed}"


def report_states(model, path, n: int, max_length: int, seed: int, dev: str):
    """n held-out states (N, max_length), right-padded with PAD: alternately a test protein
    (cropped to a random window of <= max_length residues) masked at a ratio ~ U(0.2, 0.95),
    and a state at a random step of a decode that keeps a random half of such a protein."""
    g = random.Random(seed)
    seqs = [s for _, s in read_fasta(path)]
    out = []
    for k in range(n):
        s = seqs[k % len(seqs)]
        start = g.randrange(max(1, len(s) - max_length + 1))
        x = encode(s[start : start + max_length])
        if k % 2 == 0:
            ratio = g.uniform(0.2, 0.95)
            m = torch.tensor([g.random() < ratio for _ in range(len(x))])
        else:
            m = torch.tensor([g.random() < 0.5 for _ in range(len(x))])
        m[g.randrange(len(x))] = True
        m[(g.randrange(len(x)) + 1) % len(x)] = True
        x = torch.where(m, torch.full_like(x, MASK), x)
        out.append(midway_state(model, x, k, g.randrange, dev) if k % 2 == 1 else x)
    return right_padded(out, max_length, PAD)


def run(command: str, a, cfg_or_grid, dev: str):
    b = DOMAIN.backbone(a.backbone)  # resolved once: everything below reads this object
    if command == "mi-report":
        model, head = load_models(DOMAIN, b.spec, a.head, dev, need_head=True, model=b.load(dev))
        states = report_states(model, a.heldout, a.states, a.max_length, a.seed, dev).to(dev)

        def more(rep) -> dict:
            return {
                "separation": separation_profile(rep.pairs),
                "heldout": Path(a.heldout).name,
                "backbone": b.name,
                "head": portable(a.head or DOMAIN.default_head()),
            }

        return driver.report(driver.ReportTask(model, head, states=states, more=more), report_run(a))
    ids, prompts, what = prompts_of(a)
    model = b.load(dev)
    scorer = DOMAIN.judge(
        model,
        a.reference,
        a.clusters,
        unirep=not a.no_judge,
        embedder=None if a.embedder is None else DOMAIN.load_model(a.embedder, dev),
    )
    task = driver.Task(
        DOMAIN,
        prompts,
        {"inputs": what, "reference": Path(a.reference).name},
        b,
        weights=weights_file(b.spec or DOMAIN.default_model),  # esmc_300m, a .pth, or a checkpoint
        head=a.head,
        score=lambda r: scorer(r.rows),
        columns={"inputs": what, "backbone": b.name},
        tail={"reference": Path(a.reference).name},
        ids=ids,
        companions=lambda rows, out: write_fasta(out.with_suffix(".fasta"), [(r["id"], r["sequence"]) for r in rows]),
        title=f"Proteins: JSD to {Path(a.reference).name} vs passes",
        plot={
            "paper": PAPER_TABLE2,
            "paper_label": "paper Table 2",
            "metric": "jsd",
            "scale": 1.0,
            "ylabel": "k-means JSD to the reference (bits)",
        },
        temperature=a.temperature if command == "sweep" else None,
        sample_seed=getattr(a, "sample_seed", 0),
    )
    return driver.bench_or_sweep(task, cfg_or_grid, run_of(command, a), dev)


def fetch_esmc(a=None) -> int:
    """The one explicit download: ESM-C 300M's weights file, from Hugging Face, into its cache."""
    print(f"downloading {ESMC_300M_REPO} (weights only) into the Hugging Face cache ...", file=sys.stderr)
    try:
        path = esmc_300m_weights(allow_download=True)
    except Exception as e:  # no network, no access: say so in one line
        print(f"error: could not download ESM-C 300M ({type(e).__name__}: {e})", file=sys.stderr)
        return 2
    print(strict_json.dumps({"weights": str(path)}))
    return 0


CLI = DomainCLI(
    add_arguments=add_arguments,
    run=run,
    default_grid="sequential; topk:k=4,8,12; eb:gamma=1,2,4",
    verbs={
        "fetch-esmc": Verb(
            "download ESM-C 300M's weights (about 1.2 GB) into the Hugging Face cache", lambda p: None, fetch_esmc
        )
    },
)
