"""How much of a Table 2 JSD difference is noise: bootstrap and k-means-seed spread per row.

    python -m benchmarks.protein_jsd_noise --out results/protein/jsd_noise.json

For every row of a protein sweep that kept its sequences (`--save-rows`, rows/*.csv.gz) and for
the natural set natural_test_b (the floor), with the shipped backbone's embeddings:
- the k-means JSD as in Table 2 (k = 15 fitted on the reference, seed 0);
- its spread over k-means seeds 0..4 (another partition of the same reference);
- a bootstrap (1,000 resamples with replacement of the generated set and of the reference,
  seed 0 partition held fixed): the 5th-95th percentile of the JSD. Note that resampling adds
  its own plug-in bias (the JSD of a histogram of n draws is biased up by about (k - 1) / (4 n ln 2)
  bits per side), so the interval is for comparing rows, not an unbiased estimate of each.
Two rows whose intervals overlap widely are not told apart by this metric at n = 500.
Last stdout line: one-line JSON.
"""

from __future__ import annotations

import argparse
import csv
import gzip
from pathlib import Path

import numpy as np
import torch

from benchmarks.report import save
from mi_viz.domains import get_domain
from mi_viz.domains.protein import DATA
from mi_viz.domains.protein.fasta import read_fasta
from mi_viz.domains.protein.metrics import embed, jsd

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None):
    from sklearn.cluster import KMeans

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sweep-dir", default=str(ROOT / "results" / "protein" / "table2"))
    ap.add_argument("--reference", default=str(DATA / "reference_test.fasta"))
    ap.add_argument("--clusters", type=int, default=15)
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    model = get_domain("protein").load_model().eval()
    ref = [s for _, s in read_fasta(a.reference)]
    ref_emb = embed(model, ref)
    fits = [KMeans(n_clusters=a.clusters, n_init=10, random_state=s).fit(ref_emb) for s in range(5)]
    ref_lab = fits[0].labels_
    sets = {"natural vs natural (natural_test_b)": [s for _, s in read_fasta(DATA / "natural_test_b.fasta")]}
    for f in sorted(Path(a.sweep_dir, "rows").glob("*.csv.gz")):
        with gzip.open(f, "rt", newline="") as h:
            sets[f.name.removesuffix(".csv.gz")] = [r["sequence"] for r in csv.DictReader(h)]
    g = np.random.default_rng(0)
    out = {}
    for name, seqs in sets.items():
        e = embed(model, seqs)
        by_seed = [
            jsd(np.bincount(km.predict(e), minlength=a.clusters), np.bincount(km.labels_, minlength=a.clusters))
            for km in fits
        ]
        lab = fits[0].predict(e)
        boot = [
            jsd(
                np.bincount(lab[g.integers(0, len(lab), len(lab))], minlength=a.clusters),
                np.bincount(ref_lab[g.integers(0, len(ref_lab), len(ref_lab))], minlength=a.clusters),
            )
            for _ in range(a.boot)
        ]
        out[name] = {
            "n": len(seqs),
            "jsd": round(by_seed[0], 4),
            "jsd_kmeans_seeds_mean": round(float(np.mean(by_seed)), 4),
            "jsd_kmeans_seeds_sd": round(float(np.std(by_seed)), 4),
            "boot_p05": round(float(np.percentile(boot, 5)), 4),
            "boot_p95": round(float(np.percentile(boot, 95)), 4),
        }
        r = out[name]
        print(
            f"{name:42s} JSD {r['jsd']:.3f}  over k-means seeds {r['jsd_kmeans_seeds_mean']:.3f} +- "
            f"{r['jsd_kmeans_seeds_sd']:.3f}  bootstrap 5-95 % [{r['boot_p05']:.3f}, {r['boot_p95']:.3f}]"
        )
    res = {"reference": Path(a.reference).name, "clusters": a.clusters, "boot": a.boot, "rows": out}
    save(res, a.out, {k: v["jsd_kmeans_seeds_sd"] for k, v in out.items()})


if __name__ == "__main__":
    main()
