"""The natural-vs-natural floor of the protein metrics: what sampling noise alone gives.

    python -m benchmarks.protein_floor --out results/protein/floor.json

Two disjoint natural sets of 500 (data/protein/natural_test_b.fasta against the reference,
data/protein/reference_test.fasta: other test clusters, the same construction) scored with
exactly the metrics a generated set gets (metrics.set_metrics, the shipped backbone's
embeddings). A generated set "close to natural" is one whose numbers are near these. The
validation reference against the test reference is reported too (another pair of disjoint
natural sets, from another split).
"""

from __future__ import annotations

import argparse

import torch

from benchmarks.report import save
from mi_viz.domains import get_domain
from mi_viz.domains.protein import DATA
from mi_viz.domains.protein.fasta import read_fasta
from mi_viz.domains.protein.metrics import Reference, default_judge


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backbone", default=None, help="the embedder (default: the shipped small backbone)")
    ap.add_argument("--clusters", type=int, default=15)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    model = get_domain("protein").load_model(a.backbone).eval()
    ref = Reference(model, DATA / "reference_test.fasta", a.clusters, judge=default_judge())
    res = {
        "reference": "reference_test.fasta",
        "embedder": a.backbone or "protein_mdm",
        "clusters": a.clusters,
        "jsd_log_base": 2,
    }
    for name in ("natural_test_b", "reference_val"):
        seqs = [s for _, s in read_fasta(DATA / f"{name}.fasta")]
        res[name] = {"n": len(seqs), **ref(seqs)}
    res["natural_test_b_self"] = {"note": "the reference against itself (every metric's zero)", **ref(ref.seqs)}
    save(res, a.out)


if __name__ == "__main__":
    main()
