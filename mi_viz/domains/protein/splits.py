"""Honest splits of a protein corpus: exact duplicates out, then whole clusters per split.

Swiss-Prot holds the same protein from many species; a split by sequence would put
near-identical homologs on both sides. So: exact duplicates are removed (the first
record of each sequence is kept), the rest is clustered with MMseqs2 (Debian package
`mmseqs2`; identity and coverage thresholds are arguments, recorded by the caller), and
clusters, never sequences, are drawn into train / validation / test by a seeded shuffle.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import tempfile
from pathlib import Path

from ...core.errors import InputError
from .fasta import write_fasta


def dedupe(records: list[tuple[str, str]]) -> tuple[list[tuple[str, str]], int]:
    """Exact duplicates removed, first occurrence kept: (unique records, number dropped)."""
    seen: set[str] = set()
    out = []
    for rid, seq in records:
        if seq not in seen:
            seen.add(seq)
            out.append((rid, seq))
    return out, len(records) - len(out)


def cluster_mmseqs(
    records,
    identity: float = 0.5,
    coverage: float = 0.8,
    cov_mode: int = 1,
    threads: int = 2,
    workdir: str | Path | None = None,
) -> dict[str, str]:
    """Cluster with `mmseqs easy-cluster`: {record id: its cluster representative's id}.

    cov_mode 1 (coverage of the member): a short sequence that is 80 % covered by a longer
    one joins its cluster, as in UniRef50 (80 % overlap with the seed), so that a fragment of
    a training protein cannot become a test protein (cov_mode 0 asks both to be covered and
    lets such fragments through: measured, make_protein_data.py's leakage check)."""
    exe = shutil.which("mmseqs")
    if exe is None:
        raise RuntimeError("mmseqs not found: install MMseqs2 (Debian: apt-get install mmseqs2)")
    with tempfile.TemporaryDirectory(dir=workdir) as tmp_name:
        tmp = Path(tmp_name)
        write_fasta(tmp / "in.fasta", records)
        subprocess.run(
            [
                exe,
                "easy-cluster",
                str(tmp / "in.fasta"),
                str(tmp / "res"),
                str(tmp / "work"),
                "--min-seq-id",
                str(identity),
                "-c",
                str(coverage),
                "--cov-mode",
                str(cov_mode),
                "--threads",
                str(threads),
                "-v",
                "1",
            ],
            check=True,
        )
        rep_of = {}
        for line in (tmp / "res_cluster.tsv").read_text().splitlines():
            rep, member = line.split("\t")
            rep_of[member] = rep
    missing = [rid for rid, _ in records if rid not in rep_of]
    if missing:
        raise RuntimeError(f"mmseqs left {len(missing)} records unclustered (first: {missing[:3]})")
    return rep_of


def split_clusters(
    rep_of: dict[str, str],
    fractions=(0.9, 0.05, 0.05),
    seed: int = 0,
    strata: dict[str, str] | None = None,
    strata_fractions: dict | None = None,
) -> dict[str, str]:
    """{record id: 'train' | 'val' | 'test'}, whole clusters at a time. Clusters are
    shuffled (seeded) and dealt out until each split holds its fraction of the clusters.

    strata ({cluster representative: stratum name}) deals each stratum separately, with its own
    fractions (strata_fractions[name], default `fractions`): still whole clusters, so still
    no leakage, but a rare kind of cluster (those with a sequence of the reference's length)
    can be given a larger share of the held-out splits."""
    reps = sorted(set(rep_of.values()))
    groups: dict[str, list[str]] = {}
    for r in reps:
        groups.setdefault((strata or {}).get(r, ""), []).append(r)
    split_of_rep: dict[str, str] = {}
    for name in sorted(groups):
        g = groups[name]
        random.Random(f"{seed}:{name}").shuffle(g)
        f = (strata_fractions or {}).get(name, fractions)
        n_val, n_test = round(f[1] * len(g)), round(f[2] * len(g))
        split_of_rep.update({r: "val" for r in g[:n_val]})
        split_of_rep.update({r: "test" for r in g[n_val : n_val + n_test]})
    return {rid: split_of_rep.get(rep, "train") for rid, rep in rep_of.items()}


def merge_linked(rep_of: dict[str, str], links: dict[str, set[str]]) -> dict[str, str]:
    """Clusters joined into connected components through links ({record: records it is similar
    to}), by union-find: {record id: the component's name (its smallest cluster representative)}.
    Why: MMseqs2 clusters are stars around a representative, so a sequence can be similar to a
    member of another cluster; dealing components, not clusters, keeps such pairs on one side."""
    parent: dict[str, str] = {}

    def find(x):
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for q, targets in links.items():
        for t in targets:
            a, b = find(rep_of[q]), find(rep_of[t])
            if a != b:
                parent[max(a, b)] = min(a, b)
    return {rid: find(rep) for rid, rep in rep_of.items()}


def pick_one_per_cluster(
    records,
    rep_of: dict[str, str],
    n: int,
    lengths=(50, 100),
    seed: int = 0,
    exclude_clusters: frozenset[str] | set[str] = frozenset(),
) -> list[tuple[str, str]]:
    """n records of length in [lo, hi], at most one per cluster (a UniRef50-like set: each
    family once), drawn at random (seeded) among the clusters not in exclude_clusters."""
    lo, hi = lengths
    by_cluster: dict[str, list[tuple[str, str]]] = {}
    for rid, seq in records:
        if lo <= len(seq) <= hi and rep_of[rid] not in exclude_clusters:
            by_cluster.setdefault(rep_of[rid], []).append((rid, seq))
    clusters = sorted(by_cluster)
    g = random.Random(seed)
    g.shuffle(clusters)
    if len(clusters) < n:
        raise InputError(f"only {len(clusters)} clusters have a sequence of length {lo}-{hi}; asked for {n}")
    return [g.choice(by_cluster[c]) for c in clusters[:n]]
