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

from pathlib import Path

from ...core import strict_json
from ...core.cli_types import finite_float
from ...core.paths import portable
from . import DATA, DOMAIN, PAPER_TABLE2, prompts_of_lengths
from .alphabet import SequenceError
from .fasta import read_fasta, write_fasta
from .metrics import Reference, default_judge

COMMANDS = ("bench", "sweep", "mi-report")
DEFAULT_TEMPERATURE = 1.0
DEFAULT_REFERENCE = DATA / "reference_test.fasta"
DEFAULT_GRID = "sequential; topk:k=4,8,12; eb:gamma=1,2,4"


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
    if command == "sweep":
        p.add_argument("--temperature", type=finite_float, default=DEFAULT_TEMPERATURE)
        p.add_argument("--sample-seed", type=int, default=0, help="seed of the sampled values")


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


def heldout_states(model, path, n: int, max_length: int, seed: int, dev: str):
    """n held-out states (N, max_length), right-padded with PAD: alternately a test protein
    (cropped to a random window of <= max_length residues) masked at a ratio ~ U(0.2, 0.95),
    and a state at a random step of a decode that keeps a random half of such a protein."""
    import random

    import torch

    from ...core.samplers import SamplerConfig, decode
    from .alphabet import MASK, PAD, encode

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
        if k % 2 == 1:
            res = decode(
                model, x[None].to(dev), SamplerConfig("eb", gamma=1.0, temperature=1.0, seed=k), keep_states=True
            )
            steps = [st[0] for st in res.states or [] if int((st[0] == MASK).sum()) >= 2]
            x = steps[g.randrange(len(steps))].cpu() if steps else x
        row = torch.full((max_length,), PAD)
        row[: len(x)] = x
        out.append(row)
    return torch.stack(out)


def mi_report(a, dev: str):

    from ...core.fidelity import mi_report as report
    from ...core.fidelity import write_report
    from ...core.models import load_models
    from .report import separation_profile

    model, head = load_models(DOMAIN, a.backbone, a.head, dev, need_head=True)
    states = heldout_states(model, a.heldout, a.states, a.max_length, a.seed, dev).to(dev)
    rep = report(model, head, None, a.states, a.eps, a.seed, relations=None, states=states)
    summary, pt, tokens = rep.summary, rep.pairs, rep.tokens
    summary["separation"] = separation_profile(pt)
    summary.update(
        {
            "heldout": Path(a.heldout).name,
            "backbone": a.backbone or "protein_mdm",
            "head": portable(a.head or DOMAIN.default_head()),
        }
    )
    write_report(summary, pt, tokens, a.out, a.pairs)
    print(strict_json.dumps(summary))


def run(command: str, a, cfg_or_grid, dev: str):
    from ...core.bench import DECODE_BATCH, run_bench, write_rows
    from ...core.models import load_models

    if command == "mi-report":
        return mi_report(a, dev)
    ids, prompts, what = prompts_of(a)
    if command == "bench":
        cfg = cfg_or_grid
        model, head = load_models(DOMAIN, a.backbone, a.head, dev, need_head=cfg.needs_head)
        judge = Reference(
            model if a.embedder is None else DOMAIN.load_model(a.embedder, dev),
            a.reference,
            a.clusters,
            judge=None if a.no_judge else default_judge(),
        )
        res = run_bench(DOMAIN, model, prompts, cfg, head, a.batch_size or DECODE_BATCH, dev)
        for rid, r in zip(ids, res.rows):
            r["id"] = rid
        write_rows(res.rows, a.out)
        write_fasta(Path(a.out).with_suffix(".fasta"), [(r["id"], r["sequence"]) for r in res.rows])
        summary = {
            **res.summary,
            "inputs": what,
            "backbone": a.backbone or "protein_mdm",
            **judge([r["sequence"] for r in res.rows]),
            "reference": Path(a.reference).name,
        }
        print(strict_json.dumps(summary))
    elif command == "sweep":
        from dataclasses import replace

        from ...core.sweep import run_sweep
        from .backbone import weights_file

        cfgs = [replace(c, temperature=a.temperature, seed=a.sample_seed) for c in cfg_or_grid]  # validated anew
        mdm_file = weights_file(a.backbone or DOMAIN.default_model)  # esmc_300m, a .pth, or a checkpoint
        model = DOMAIN.load_model(a.backbone, dev)
        judge = Reference(
            model if a.embedder is None else DOMAIN.load_model(a.embedder, dev),
            a.reference,
            a.clusters,
            judge=None if a.no_judge else default_judge(),
        )
        run_sweep(
            DOMAIN,
            cfgs,
            prompts,
            {"inputs": what, "reference": Path(a.reference).name},
            a.out_dir,
            a.backbone,
            a.head,
            dev,
            a.batch_size or DECODE_BATCH,
            a.jobs,
            a.resume,
            a.save_rows,
            title=a.title or f"Proteins: JSD to {Path(a.reference).name} vs passes",
            plot={
                "paper": PAPER_TABLE2,
                "paper_label": "paper Table 2",
                "metric": "jsd",
                "scale": 1.0,
                "ylabel": "k-means JSD to the reference (bits)",
            },
            mdm_path=mdm_file,
            extra=lambda r: judge([row["sequence"] for row in r.rows]),
            report=lambda d: print(strict_json.dumps(d), flush=True),
            keep_others=a.keep_others,
        )
