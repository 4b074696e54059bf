"""Protein data with honest splits, from the Swiss-Prot corpus beside the project.

    python training/make_protein_data.py            # about 10 minutes on 2 cores (mmseqs2)

1. Read ../shared/data/swissprot_goa_2014.fasta.gz (already the 20 standard amino
   acids, lengths 30..512; its headers are BL_ORD_ID:N, kept as record ids).
2. Remove exact duplicates (first record of each sequence kept).
3. Cluster with MMseqs2 (`easy-cluster`, 50 % identity, 80 % coverage of the member:
   --cov-mode 1, as UniRef50, so fragments join the cluster of the protein they come from).
4. Link clusters: every cluster with a member of length 50-100 (the references' length)
   gets one candidate (a random such member), searched against all sequences (mmseqs
   easy-search); a hit at >= 50 % identity over >= 80 % of the candidate joins the two
   clusters into one component (clusters are stars, not connected components). Components,
   never sequences, are dealt into train / validation / test (seeded): components with a
   candidate until the held-out splits hold enough candidates for their references, the
   others 90 / 5 / 5 %.
5. Write the full splits under runs/protein_data/ (not committed: the training data) and
   the small committed files under data/protein/:
   - reference_test.fasta: 500 natural sequences of length 50-100 from the test split, one
     candidate per cluster (the paper's reference: UniRef50 50-100),
   - natural_test_b.fasta: 500 more from other test clusters (the natural-vs-natural floor),
   - reference_val.fasta: 500 from the validation clusters (for choosing defaults),
   - heldout_test.fasta: 500 test sequences of any length, one per cluster, without a
     covering hit in train (the backbone's held-out loss and pseudo-perplexity),
   - splits.tsv.gz: every held-out record id, its cluster representative and its split
     (every other unique record is train),
   - stats.json: counts, thresholds, and the leakage check (test references against the
     training split with mmseqs easy-search).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from mi_viz.core import strict_json
from mi_viz.core.cli_types import finite_float
from mi_viz.domains.protein.fasta import read_fasta, write_fasta
from mi_viz.domains.protein.splits import cluster_mmseqs, dedupe, merge_linked, pick_one_per_cluster

ROOT = Path(__file__).resolve().parents[1]
SHORT_HELD = {"test": 2.2, "val": 1.2}  # candidate clusters dealt to the held-out splits, per reference sequence
OTHER_FRACTIONS = (0.90, 0.05, 0.05)  # train / val / test of the components without a candidate


def hits(queries, targets, identity: float, threads: int, coverage: float) -> tuple[dict, dict, dict]:
    """mmseqs easy-search of queries against targets at >= identity (default sensitivity):
    ({query: best identity over hits covering >= coverage of it}, {query: best identity of any
    local hit}, {query: the targets of its covering hits})."""
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
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
        links: dict[str, set[str]] = {}
        for line in (tmp / "hits.m8").read_text().splitlines():
            f = line.split("\t")  # query target identity length mismatch gaps qstart qend tstart tend evalue bits
            q, ident = f[0], float(f[2])
            local[q] = max(local.get(q, 0.0), ident)
            if (int(f[7]) - int(f[6]) + 1) >= coverage * qlen[q]:
                covered[q] = max(covered.get(q, 0.0), ident)
                if f[1] != q:
                    links.setdefault(q, set()).add(f[1])
    return covered, local, links


def leakage(queries, targets, identity: float, threads: int, coverage: float) -> dict:
    """How many queries hit a target at >= identity over >= coverage of the query (what the
    split excludes), and over any local stretch (a shared domain, which it does not)."""
    covered, local, _ = hits(queries, targets, identity, threads, coverage)
    return {
        "queries": len(queries),
        "identity": identity,
        "query_coverage": coverage,
        "with_a_covering_train_hit": len(covered),
        "with_any_local_train_hit": len(local),
        "max_identity_covering": round(max(covered.values()), 3) if covered else None,
    }


def split_by_component(
    rep_of: dict[str, str],
    comp_of: dict[str, str],
    short_comp: set,
    candidates: list,
    n_unique: int,
    n_ref: int,
    seed: int,
) -> dict[str, str]:
    """Each record's split. Components with a candidate: enough to the held-out splits for the
    references (SHORT_HELD clusters' worth each, by a seeded shuffle), the rest to train; every other
    component 90 / 5 / 5 %. A component holding over 1 % of all sequences (and over 100) goes to
    train (a hub family)."""
    size: dict[str, int] = {}
    for rid in rep_of:
        size[comp_of[rid]] = size.get(comp_of[rid], 0) + 1
    cand_per_comp: dict[str, int] = {}
    for rid, _ in candidates:
        cand_per_comp[comp_of[rid]] = cand_per_comp.get(comp_of[rid], 0) + 1
    comps = sorted(set(comp_of.values()))
    random.Random(seed + 1).shuffle(comps)
    split_of_comp: dict[str, str] = {}
    need = {"test": SHORT_HELD["test"] * n_ref, "val": SHORT_HELD["val"] * n_ref}
    other = [c for c in comps if c not in short_comp]
    for c in comps:
        if c not in short_comp or size[c] > max(100, 0.01 * n_unique):
            continue
        s = next((k for k in ("test", "val") if need[k] > 0), "train")
        split_of_comp[c] = s
        if s != "train":
            need[s] -= cand_per_comp[c]
    n_val, n_test = round(OTHER_FRACTIONS[1] * len(other)), round(OTHER_FRACTIONS[2] * len(other))
    split_of_comp.update({c: "val" for c in other[:n_val]})
    split_of_comp.update({c: "test" for c in other[n_val : n_val + n_test]})
    return {rid: split_of_comp.get(comp_of[rid], "train") for rid in rep_of}


def references(candidates: list, split_of: dict, rep_of: dict, by_split: dict, a) -> tuple[dict, dict, list, dict]:
    """The committed sets: two disjoint test references and a validation one (one candidate per
    cluster, length 50..100), and held-out sequences of any length for the backbone's loss (one per
    test cluster, those with a covering hit in the training split left out). -> (files, the held-out
    candidates per split, the held-out pool, the pool's ids with a training hit)."""
    n = a.n_ref
    cand_in = {k: [c for c in candidates if split_of[c[0]] == k] for k in ("val", "test")}
    ref = pick_one_per_cluster(cand_in["test"], rep_of, n, seed=a.seed)
    ref_b = pick_one_per_cluster(
        cand_in["test"], rep_of, n, seed=a.seed + 1, exclude_clusters={rep_of[r] for r, _ in ref}
    )
    ref_val = pick_one_per_cluster(cand_in["val"], rep_of, n, seed=a.seed)
    n_test_clusters = len({rep_of[r] for r, _ in by_split["test"]})
    pool = pick_one_per_cluster(
        by_split["test"], rep_of, min(3 * n, n_test_clusters), lengths=(1, 10**6), seed=a.seed + 2
    )
    dirty, _, _ = hits(pool, by_split["train"], a.identity, a.threads, a.coverage)
    heldout = [r for r in pool if r[0] not in dirty][:n]
    files = {
        "reference_test.fasta": ref,
        "natural_test_b.fasta": ref_b,
        "reference_val.fasta": ref_val,
        "heldout_test.fasta": heldout,
    }
    return files, cand_in, pool, dirty


def clusters(unique: list, a, cache: Path) -> tuple[dict[str, str], dict]:
    """MMseqs2's clusters of the unique records (rep_of: id -> its cluster's representative), reused
    from `cache` by a re-run with the same settings; and the cache's contents."""
    key = {"fasta": str(a.fasta), "limit": a.limit, "identity": a.identity, "coverage": a.coverage,
           "cov_mode": a.cov_mode, "seed": a.seed}  # fmt: skip
    cached = json.loads(cache.read_text()) if cache.exists() else {}
    if cached.get("key") == key:
        return cached["rep_of"], cached
    rep_of = cluster_mmseqs(unique, a.identity, a.coverage, a.cov_mode, a.threads)
    cached = {"key": key, "rep_of": rep_of}
    cache.write_text(strict_json.dumps(cached))
    return rep_of, cached


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fasta", default=str(ROOT.parent / "shared" / "data" / "swissprot_goa_2014.fasta.gz"))
    ap.add_argument("--identity", type=finite_float, default=0.5)
    ap.add_argument("--coverage", type=finite_float, default=0.8)
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
    out, data = Path(a.out), Path(a.data_dir)
    out.mkdir(parents=True, exist_ok=True)
    data.mkdir(parents=True, exist_ok=True)
    cache = out / "clusters.json"  # the slow steps, reused by a re-run with the same settings
    rep_of, cached = clusters(unique, a, cache)
    n_clusters = len(set(rep_of.values()))
    print(f"{n_clusters} clusters ({time.time() - t0:.0f} s)", flush=True)
    # The references are drawn one per cluster among clusters with a member of length 50-100
    # (about 1 in 12). Each such cluster gets one candidate (a random member of that length),
    # searched against every other sequence; a covering hit (>= identity over >= coverage of
    # the candidate) links the two clusters, and linked clusters are dealt as one component.
    # So no candidate, and no reference drawn from the candidates, is similar to a sequence
    # on the other side of the split.
    g = random.Random(a.seed)
    members: dict[str, list[tuple[str, str]]] = {}
    for rid, seq in unique:
        if 50 <= len(seq) <= 100:
            members.setdefault(rep_of[rid], []).append((rid, seq))
    candidates = [g.choice(members[c]) for c in sorted(members)]
    if "links" in cached:
        links = {q: set(t) for q, t in cached["links"].items()}
    else:
        _, _, links = hits(candidates, unique, a.identity, a.threads, a.coverage)
        cache.write_text(strict_json.dumps({**cached, "links": {q: sorted(t) for q, t in links.items()}}))
    comp_of = merge_linked(rep_of, links)
    short_comp = {comp_of[rid] for rid, _ in candidates}
    print(
        f"{len(candidates)} candidate clusters, {len(short_comp)} components with one ({time.time() - t0:.0f} s)",
        flush=True,
    )
    split_of = split_by_component(rep_of, comp_of, short_comp, candidates, len(unique), a.n_ref, a.seed)
    by_split = {s: [r for r in unique if split_of[r[0]] == s] for s in ("train", "val", "test")}
    for s, recs in by_split.items():
        write_fasta(out / f"{s}.fasta", recs)
    files, cand_in, pool, dirty = references(candidates, split_of, rep_of, by_split, a)
    for name, recs in files.items():
        write_fasta(data / name, recs)
    with gzip.open(data / "splits.tsv.gz", "wt") as f:
        f.write("id\tcluster\tsplit\n")
        for rid, _ in unique:  # held-out records only (train: every other id of the source)
            if split_of[rid] != "train":
                f.write(f"{rid}\t{rep_of[rid]}\t{split_of[rid]}\n")
    stats = {
        "source": Path(a.fasta).name,
        "records": len(records),
        "exact_duplicates_removed": n_dup,
        "unique": len(unique),
        "clusters": len(set(rep_of.values())),
        "mmseqs": {"command": "easy-cluster", "min_seq_id": a.identity, "coverage": a.coverage, "cov_mode": a.cov_mode},
        "seed": a.seed,
        "split": {"candidate_clusters_per_reference": SHORT_HELD, "other_fractions": OTHER_FRACTIONS},
        "candidate_clusters_50_100": len(candidates),
        "components_with_a_candidate": len(short_comp),
        "held_out_candidates": {k: len(v) for k, v in cand_in.items()},
        "heldout_pool": len(pool),
        "heldout_pool_with_a_train_hit": len(dirty),
        "split_sequences": {s: len(r) for s, r in by_split.items()},
        "split_clusters": {s: len({rep_of[r] for r, _ in recs}) for s, recs in by_split.items()},
        "split_residues": {s: sum(len(q) for _, q in r) for s, r in by_split.items()},
        "committed": {k: len(v) for k, v in files.items()},
        "leakage_reference_test_vs_train": leakage(
            files["reference_test.fasta"], by_split["train"], a.identity, a.threads, a.coverage
        ),
        "leakage_reference_val_vs_train": leakage(
            files["reference_val.fasta"], by_split["train"], a.identity, a.threads, a.coverage
        ),
        "seconds": round(time.time() - t0, 1),
    }
    (data / "stats.json").write_text(strict_json.dumps(stats, indent=1))
    print(strict_json.dumps(stats))


if __name__ == "__main__":
    main()
