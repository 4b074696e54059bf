"""Protein data with honest splits, from the Swiss-Prot corpus beside the project.

    python training/make_protein_data.py            # about 10 minutes on 2 cores (mmseqs2)

1. Read ../shared/data/swissprot_goa_2014.fasta.gz (already the 20 standard amino
   acids, lengths 30..512; its headers are BL_ORD_ID:N, kept as record ids).
2. Remove exact duplicates (first record of each sequence kept).
3. Cluster with MMseqs2 (`easy-cluster`, 50 % identity, 80 % coverage of the member:
   --cov-mode 1, as UniRef50, so fragments join the cluster of the protein they come from).
4. Deal whole clusters into train / validation / test, seeded, so near-identical
   sequences never straddle splits: 60 / 15 / 25 % of the clusters that hold a sequence of
   length 50-100 (the references' length; about 1 cluster in 12), 90 / 5 / 5 % of the rest.
   Then every validation / test sequence is searched against the training split (mmseqs
   easy-search) and each held-out cluster with a hit (>= 50 % identity over >= 80 % of the
   held-out sequence) moves to train: clusters are stars, not connected components.
5. Write the full splits under runs/protein_data/ (not committed: the training data) and
   the small committed files under data/protein/:
   - reference_test.fasta: 500 natural sequences of length 50-100 from the test clusters,
     one per cluster (the paper's reference: UniRef50 50-100),
   - natural_test_b.fasta: 500 more from other test clusters (the natural-vs-natural floor),
   - reference_val.fasta: 500 from the validation clusters (for choosing defaults),
   - heldout_test.fasta: 500 test-cluster sequences of any length, one per cluster (the
     backbone's held-out loss and pseudo-perplexity),
   - splits.tsv.gz: every unique record id, its cluster representative and its split,
   - stats.json: counts, thresholds, and the leakage check (test references against the
     training split with mmseqs easy-search).
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from mi_viz.domains.protein.fasta import read_fasta, write_fasta
from mi_viz.domains.protein.splits import cluster_mmseqs, dedupe, pick_one_per_cluster, split_clusters

ROOT = Path(__file__).resolve().parents[1]
SHORT_FRACTIONS = (0.60, 0.15, 0.25)  # train / val / test of the clusters with a 50-100 residue member
OTHER_FRACTIONS = (0.90, 0.05, 0.05)


def hits(queries, targets, identity: float, threads: int, coverage: float) -> tuple[dict, dict]:
    """mmseqs easy-search of queries against targets at >= identity (default sensitivity):
    ({query: best identity over hits covering >= coverage of it}, {query: best identity of any
    local hit})."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        write_fasta(tmp / "q.fasta", queries)
        write_fasta(tmp / "t.fasta", targets)
        subprocess.run(
            [
                "mmseqs",
                "easy-search",
                str(tmp / "q.fasta"),
                str(tmp / "t.fasta"),
                str(tmp / "hits.m8"),
                str(tmp / "work"),
                "--min-seq-id",
                str(identity),
                "--threads",
                str(threads),
                "-v",
                "1",
            ],
            check=True,
        )
        qlen = {rid: len(seq) for rid, seq in queries}
        local: dict[str, float] = {}
        covered: dict[str, float] = {}
        for line in (tmp / "hits.m8").read_text().splitlines():
            f = line.split("\t")  # query target identity length mismatch gaps qstart qend tstart tend evalue bits
            q, ident = f[0], float(f[2])
            local[q] = max(local.get(q, 0.0), ident)
            if (int(f[7]) - int(f[6]) + 1) >= coverage * qlen[q]:
                covered[q] = max(covered.get(q, 0.0), ident)
    return covered, local


def leakage(queries, targets, identity: float, threads: int, coverage: float) -> dict:
    """How many queries hit a target at >= identity over >= coverage of the query (what the
    split excludes), and over any local stretch (a shared domain, which it does not)."""
    covered, local = hits(queries, targets, identity, threads, coverage)
    return {
        "queries": len(queries),
        "identity": identity,
        "query_coverage": coverage,
        "with_a_covering_train_hit": len(covered),
        "with_any_local_train_hit": len(local),
        "max_identity_covering": round(max(covered.values()), 3) if covered else None,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fasta", default=str(ROOT.parent / "shared" / "data" / "swissprot_goa_2014.fasta.gz"))
    ap.add_argument("--identity", type=float, default=0.5)
    ap.add_argument("--coverage", type=float, default=0.8)
    ap.add_argument("--cov-mode", type=int, default=1, help="mmseqs --cov-mode (1: coverage of the member, as UniRef)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-ref", type=int, default=500)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--limit", type=int, default=None, help="first N records only (tests)")
    ap.add_argument("--out", default=str(ROOT / "runs" / "protein_data"), help="full splits (not committed)")
    ap.add_argument("--data-dir", default=str(ROOT / "data" / "protein"), help="the small committed files")
    a = ap.parse_args(argv)
    t0 = time.time()
    if shutil.which("mmseqs") is None:
        raise SystemExit("error: mmseqs not found: install MMseqs2 (Debian: apt-get install mmseqs2)")
    records = read_fasta(a.fasta)
    if a.limit:
        records = records[: a.limit]
    unique, n_dup = dedupe(records)
    print(f"{len(records)} records, {n_dup} exact duplicates removed, {len(unique)} unique", flush=True)
    rep_of = cluster_mmseqs(unique, a.identity, a.coverage, a.cov_mode, a.threads)
    # Clusters holding a sequence of the reference's length (50-100) are rare (about 1 in 12) and
    # the held-out references need 1,500 of them, one per cluster: that stratum is dealt
    # 60 / 15 / 25 % into train / val / test, every other cluster 90 / 5 / 5 %.
    short = {rep_of[rid] for rid, seq in unique if 50 <= len(seq) <= 100}
    fractions = {"short": SHORT_FRACTIONS, "": OTHER_FRACTIONS}
    split_of = split_clusters(rep_of, seed=a.seed, strata={r: "short" for r in short}, strata_fractions=fractions)
    print(f"{len(set(rep_of.values()))} clusters ({time.time() - t0:.0f} s)", flush=True)
    out, data = Path(a.out), Path(a.data_dir)
    out.mkdir(parents=True, exist_ok=True)
    data.mkdir(parents=True, exist_ok=True)
    # Clusters are stars around a representative, not connected components: a held-out sequence
    # can still be similar to a training member of another cluster. So search every held-out
    # sequence against the training split and move each cluster with a hit (>= identity over
    # >= coverage of the held-out sequence) into train: held-out is then dissimilar to train.
    held = [r for r in unique if split_of[r[0]] != "train"]
    train = [r for r in unique if split_of[r[0]] == "train"]
    covered, _ = hits(held, train, a.identity, a.threads, a.coverage)
    moved = {rep_of[q] for q in covered}
    moved_by_split = {s: len({c for c in moved if split_of[c] == s}) for s in ("val", "test")}
    split_of = {rid: "train" if rep_of[rid] in moved else s for rid, s in split_of.items()}
    print(f"{len(moved)} held-out clusters with a training hit moved to train ({time.time() - t0:.0f} s)", flush=True)
    by_split = {s: [r for r in unique if split_of[r[0]] == s] for s in ("train", "val", "test")}
    for s, recs in by_split.items():
        write_fasta(out / f"{s}.fasta", recs)
    n = a.n_ref
    ref = pick_one_per_cluster(by_split["test"], rep_of, n, seed=a.seed)
    ref_b = pick_one_per_cluster(
        by_split["test"], rep_of, n, seed=a.seed + 1, exclude_clusters={rep_of[r] for r, _ in ref}
    )
    ref_val = pick_one_per_cluster(by_split["val"], rep_of, n, seed=a.seed)
    heldout = pick_one_per_cluster(by_split["test"], rep_of, n, lengths=(1, 10**6), seed=a.seed + 2)
    files = {
        "reference_test.fasta": ref,
        "natural_test_b.fasta": ref_b,
        "reference_val.fasta": ref_val,
        "heldout_test.fasta": heldout,
    }
    for name, recs in files.items():
        write_fasta(data / name, recs)
    with gzip.open(data / "splits.tsv.gz", "wt") as f:
        f.write("id\tcluster\tsplit\n")
        for rid, _ in unique:
            f.write(f"{rid}\t{rep_of[rid]}\t{split_of[rid]}\n")
    stats = {
        "source": Path(a.fasta).name,
        "records": len(records),
        "exact_duplicates_removed": n_dup,
        "unique": len(unique),
        "clusters": len(set(rep_of.values())),
        "mmseqs": {"command": "easy-cluster", "min_seq_id": a.identity, "coverage": a.coverage, "cov_mode": a.cov_mode},
        "seed": a.seed,
        "split_fractions": {"clusters_with_a_50_100_member": SHORT_FRACTIONS, "other_clusters": OTHER_FRACTIONS},
        "held_out_clusters_moved_to_train": moved_by_split,
        "split_sequences": {s: len(r) for s, r in by_split.items()},
        "split_clusters": {s: len({rep_of[r] for r, _ in recs}) for s, recs in by_split.items()},
        "split_residues": {s: sum(len(q) for _, q in r) for s, r in by_split.items()},
        "committed": {k: len(v) for k, v in files.items()},
        "leakage_reference_test_vs_train": leakage(ref, by_split["train"], a.identity, a.threads, a.coverage),
        "seconds": round(time.time() - t0, 1),
    }
    (data / "stats.json").write_text(json.dumps(stats, indent=1))
    print(json.dumps(stats))


if __name__ == "__main__":
    main()
