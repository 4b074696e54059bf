"""How alike a rule's samples of one chain are: a PLL judge rewards sharpening, so every antibody rule is
read on quality and diversity together (docs/results-antibody.md, "Revision").

    # the identity between two samples of each chain (sampling seeds 0 and 1), setting by setting, from the
    # rows two sweeps saved; and each setting's PLL under both seeds (the seed-to-seed spread)
    python -m benchmarks.antibody_diversity pairs --seed0 results/antibody/sabdab_test \\
        --seed1 results/antibody/sabdab_test_seed1 --out results/antibody/sabdab_test_seed1/diversity.json

    # the mean pairwise identity of 8 samples of each of the first 32 chains, decoded here
    python -m benchmarks.antibody_diversity samples --fasta data/antibody/natural/sabdab_test.tsv.gz \\
        --chains heavy --n-chains 32 --samples 8 --grid "sequential; mi-revise" --out DIR/samples.json

Identity is the share of infilled residues two samples agree on; 1 - identity is their diversity.
Prints, last, a one-line JSON.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import itertools
from pathlib import Path

import numpy as np
import torch

from benchmarks.report import save
from mi_viz.core.models import load_models
from mi_viz.core.samplers import Batching, decode, row_label
from mi_viz.core.sweep import parse_grid, rows_path
from mi_viz.domains import get_domain
from mi_viz.domains.antibody import LOCI_OF, read_infills


def identity(a: str, b: str) -> float:
    """The share of positions two infills of one chain agree on."""
    if len(a) != len(b):
        raise ValueError(f"infills of {len(a)} and {len(b)} residues are not of one chain")
    return float(np.mean([x == y for x, y in zip(a, b)])) if a else 1.0


def _rows(folder: Path, label: str) -> list[dict]:
    with gzip.open(rows_path(folder, label), "rt") as f:
        return sorted(csv.DictReader(f), key=lambda r: int(r["i"]))


def pairs(seed0: list[Path], seed1: list[Path]) -> dict:
    """Every setting both seeds hold (rows saved): per-chain identity of its two samples, and its PLLs.
    Each seed may be several folders of the same chains (a family's own sweep, then the committed one it
    re-reads): the first that holds a setting's rows gives them."""
    labels: list[str] = []
    for d in (d for d in seed1 if (d / "sweep.csv").exists()):  # a folder not made yet holds no setting
        with open(d / "sweep.csv", newline="") as f:
            labels += [lab for lab in map(row_label, csv.DictReader(f)) if lab not in labels]
    out: dict = {"seed0": ",".join(map(str, seed0)), "seed1": ",".join(map(str, seed1)), "settings": {}}
    for lab in labels:
        first = next((d for d in seed0 if rows_path(d, lab).exists()), None)
        second = next((d for d in seed1 if rows_path(d, lab).exists()), None)
        if first is None or second is None:
            continue
        a, b = _rows(first, lab), _rows(second, lab)
        if len(a) != len(b) or any(x["masked"] != y["masked"] for x, y in zip(a, b)):
            raise SystemExit(f"{lab}: the two sweeps did not read the same chains")
        ident = np.array([identity(x["infill"], y["infill"]) for x, y in zip(a, b)])
        cell: dict = {"chains": len(a), "identity": round(float(ident.mean()), 4),
                "identity_se": round(float(ident.std(ddof=1) / np.sqrt(len(ident))), 4)}  # fmt: skip
        for m in ("pll", "pll_sapiens", "pll_antiberty"):
            if m in a[0] and a[0][m] not in ("", None):
                v0 = float(np.mean([float(r[m]) for r in a]))
                v1 = float(np.mean([float(r[m]) for r in b]))
                cell[m] = {"seed0": round(v0, 4), "seed1": round(v1, 4), "spread": round(abs(v0 - v1), 4)}
        out["settings"][lab] = cell
    return out


@torch.inference_mode()
def samples(
    fasta: str, chains: str | None, n_chains: int, n_samples: int, grid: str, mask: str, temperature: float = 1.0
) -> dict:
    """Each setting's mean pairwise identity of n_samples samples (at `temperature`, seed 0, streams of
    their own) of each of the first n_chains chains (sequential at lower temperatures draws the curve a
    sharpening rule is read against)."""
    dom = get_domain("antibody")
    got = read_infills(fasta, mask, n_chains, loci=LOCI_OF[chains] if chains else None)
    model = dom.load_model()
    cfgs = [c.replace(temperature=temperature, seed=0) for c in parse_grid(grid, dom.sampler_defaults)]
    heads: dict = {}
    kinds = {c.head_kind for c in cfgs if c.needs_head}
    if kinds:
        _, heads = load_models(dom, None, None, "cpu", kinds=tuple(sorted(kinds)))
    out: dict = {"fasta": Path(fasta).name, "chains": len(got.items), "samples": n_samples, "temperature": temperature,
                 "settings": {}}  # fmt: skip
    for cfg in cfgs:
        per = []
        for it, place in zip(got.items, got.streams):
            streams = [place * 1000 + s for s in range(n_samples)]  # never one of the sweeps' streams (place)
            res = decode(model, dom.encode([it] * n_samples), cfg, head=heads or None, run=Batching(streams=streams))
            infills = [r["infill"] for r in dom.score([it] * n_samples, res.tokens)]
            per.append(np.mean([identity(a, b) for a, b in itertools.combinations(infills, 2)]))
        out["settings"][cfg.label()] = {"pairwise_identity": round(float(np.mean(per)), 4),
                                        "se": round(float(np.std(per, ddof=1) / np.sqrt(len(per))), 4)}  # fmt: skip
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    p = sub.add_parser("pairs", help="identity between two samples of a chain, from two sweeps' rows")
    p.add_argument(
        "--seed0", required=True, help="seed 0's sweep folder(s), comma-separated: the first holding a setting"
    )
    p.add_argument("--seed1", required=True, help="seed 1's sweep folder(s), comma-separated, as --seed0")
    p.add_argument("--out", required=True)
    s = sub.add_parser("samples", help="mean pairwise identity of several samples of each chain")
    s.add_argument("--fasta", required=True)
    s.add_argument("--chains", choices=tuple(LOCI_OF), default=None)
    s.add_argument("--mask", default="cdr3")
    s.add_argument("--n-chains", type=int, default=32)
    s.add_argument("--samples", type=int, default=8)
    s.add_argument("--grid", default="sequential")
    s.add_argument("--temperature", type=float, default=1.0, help="every setting's sampling temperature")
    s.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    if a.what == "pairs":
        res = pairs([Path(x) for x in a.seed0.split(",")], [Path(x) for x in a.seed1.split(",")])
    else:
        res = samples(a.fasta, a.chains, a.n_chains, a.samples, a.grid, a.mask, a.temperature)
    save(res, a.out, {"settings": len(res["settings"])})


if __name__ == "__main__":
    main()
