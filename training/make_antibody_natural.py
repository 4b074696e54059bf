"""Natural, mature antibody chains for the antibody domain's validation and test, from
../shared/data/antibody (provenance and licences in its README and docs/results-antibody.md).

    python training/make_antibody_natural.py        # -> data/antibody/natural/ (about a minute)

- sabdab_test.tsv.gz (437 heavy chains) and sabdab_val.tsv.gz (403): SAbDab structures' heavy
  chains in RefineGNN's CDR-H3 cluster split (no test CDR-H3 shares a cluster with a training or
  validation one). The validation rows are written in a seeded random order, so a sweep's
  `--limit 128` reads a random sample of 128.
- rabd_test.tsv.gz: the RAbD benchmark's heavy chains, those whose PDB entry also sits in a SAbDab
  fold dropped (counted in natural.json).
- light_test.tsv.gz / light_val.tsv.gz: CoV-AbDab's VL chains, deduplicated by CDR-L3, each put in
  the fold of its heavy partner where that partner's PDB entry is in a SAbDab fold, the rest
  assigned test or val by a seeded draw; at most 128 a fold.
Every chain is numbered by riot-na (IMGT) and kept as its V domain: SAbDab's chains carry CH1
after it, trimmed here (the count in `trimmed_after`). A chain riot-na cannot number is dropped and
counted with its reason. Columns: the chains TSV's (id, chain, v_gene, j_gene, junction, sequence)
then species (riot-na's call), v_identity, source, pdb, trimmed_after and, for SAbDab and RAbD,
`refinegnn_cdr3` (the CDR-H3 as RefineGNN's mask marks it, 0-based start-end in the V domain: the
published recovery figures' region). natural.json holds the counts, drops and overlaps.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import random
import re
from pathlib import Path

from mi_viz.core import strict_json
from mi_viz.domains.antibody import DATA
from mi_viz.domains.antibody.numbering import NumberingError, v_domain

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "antibody"
COLUMNS = ("id", "chain", "v_gene", "j_gene", "junction", "sequence", "species", "v_identity", "source", "pdb",
           "trimmed_after", "refinegnn_cdr3")  # fmt: skip
LOCI = {"igh": "heavy", "igk": "kappa", "igl": "lambda"}
LIGHT_CAP = 128


def read_tsv(path: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO(gzip.decompress(path.read_bytes()).decode()), delimiter="\t"))


def record(rid: str, seq: str, source: str, pdb: str = "", cdr_mask: str = "") -> dict:
    """A chain as a row: its V domain and calls (NumberingError if riot-na refuses it)."""
    n = v_domain(seq, rid)
    s, e = n.regions["cdr3"]
    ref = ""
    if cdr_mask:  # RefineGNN's per-residue marks over the chain as deposited -> the V domain's coordinates
        idx = [i - n.trimmed[0] for i, c in enumerate(cdr_mask) if c == "3"]
        ref = f"{idx[0]}-{idx[-1] + 1}" if idx else ""
    return {
        "id": rid,
        "chain": LOCI[n.locus],
        "v_gene": n.v_call,
        "j_gene": n.j_call,
        "junction": n.sequence[max(0, s - 1) : e + 1],
        "sequence": n.sequence,
        "species": n.species if not n.species_uncertain else f"{n.species}?",
        "v_identity": round(n.v_identity, 3),
        "source": source,
        "pdb": pdb,
        "trimmed_after": n.trimmed[1],
        "refinegnn_cdr3": ref,
    }


def write(path: Path, rows: list[dict]) -> None:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, delimiter="\t", lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(buf.getvalue().encode(), mtime=0))


def structures(rows: list[dict], source: str) -> tuple[list[dict], dict]:
    """SAbDab / RAbD rows -> chain records, and the count of what was dropped and why."""
    out, dropped = [], {}
    for r in rows:
        try:
            out.append(record(f"{source}_{r['pdb']}", r["seq"], source, r["pdb"], r["cdr"]))
        except NumberingError as e:
            dropped[r["pdb"]] = str(e).split(": ", 1)[-1]
    return out, dropped


def stats(rows: list[dict]) -> dict:
    species: dict[str, int] = {}
    for r in rows:
        species[r["species"]] = species.get(r["species"], 0) + 1
    agree = sum(r["refinegnn_cdr3"] == _imgt_cdr3(r) for r in rows if r["refinegnn_cdr3"])
    with_ref = sum(1 for r in rows if r["refinegnn_cdr3"])
    return {
        "chains": len(rows),
        "species": dict(sorted(species.items(), key=lambda kv: -kv[1])),
        "constant_region_trimmed": sum(1 for r in rows if int(r["trimmed_after"]) > 0),
        "cdr3_length_mean": round(sum(len(r["junction"]) - 2 for r in rows) / max(1, len(rows)), 2),
        "refinegnn_cdr3_equals_imgt": f"{agree}/{with_ref}" if with_ref else None,
    }


def _imgt_cdr3(r: dict) -> str:
    s = r["sequence"].find(r["junction"]) + 1
    return f"{s}-{s + len(r['junction']) - 2}"


def light_chains(sabdab: dict[str, set[str]], seed: int) -> tuple[dict[str, list[dict]], dict]:
    """CoV-AbDab's VL chains: numbered, deduplicated by CDR-L3, put in the fold of a heavy partner
    in SAbDab (by PDB entry), the rest drawn test or val; at most LIGHT_CAP a fold."""
    text = gzip.decompress((SHARED / "covabdab_2021-08-05.csv.gz").read_bytes()).decode("utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(text)))
    seen_l3: set[str] = set()
    partnered: dict[str, list[dict]] = {"test": [], "val": []}
    rest: list[dict] = []
    info = {"rows": len(rows), "no_vl": 0, "not_numbered": 0, "not_light": 0, "duplicate_cdr_l3": 0}
    for r in rows:
        vl = re.sub(r"\s", "", r.get("VL", "")).upper()
        if not vl or vl in ("ND", "NA", "N/A") or not vl.isalpha():
            info["no_vl"] += 1
            continue
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", r["\ufeffName"] if "\ufeffName" in r else r["Name"]).strip("_")
        try:
            rec = record(f"covabdab_{name}", vl, "covabdab")
        except NumberingError:
            info["not_numbered"] += 1
            continue
        if rec["chain"] == "heavy":
            info["not_light"] += 1
            continue
        if rec["junction"] in seen_l3:
            info["duplicate_cdr_l3"] += 1
            continue
        seen_l3.add(rec["junction"])
        pdbs = {p.lower() for p in re.findall(r"\b([0-9][A-Za-z0-9]{3})\b", r.get("Structures", ""))}
        rec["pdb"] = ";".join(sorted(pdbs & (sabdab["test"] | sabdab["val"])))
        fold = next((f for f in ("test", "val") if pdbs & sabdab[f]), None)
        (partnered[fold] if fold else rest).append(rec)
    g = random.Random(seed)
    g.shuffle(rest)
    folds = {}
    for k, fold in enumerate(("test", "val")):
        mine = partnered[fold] + rest[k::2]  # partners first, then every other one of the seeded draw
        folds[fold] = mine[:LIGHT_CAP]
        info[f"{fold}_with_sabdab_partner"] = min(len(partnered[fold]), LIGHT_CAP)
    return folds, info


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", default=str(SHARED))
    ap.add_argument("--out", default=str(DATA / "natural"))
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    src, out = Path(a.shared), Path(a.out)
    summary: dict = {"source": "../shared/data/antibody (README there)", "sets": {}}
    sab = {}
    for fold in ("test", "val"):
        rows = read_tsv(src / f"sabdab_hcdr3_cluster_{fold}.tsv.gz")
        recs, dropped = structures(rows, "sabdab")
        if fold == "val":
            random.Random(a.seed).shuffle(recs)  # `--limit N` then reads a random sample
        sab[fold] = recs
        write(out / f"sabdab_{fold}.tsv.gz", recs)
        summary["sets"][f"sabdab_{fold}"] = {"rows": len(rows), **stats(recs), "not_numbered": dropped}
    pdbs = {f: {r["pdb"] for r in recs} for f, recs in sab.items()}
    summary["overlaps"] = {
        "sabdab_test_val_same_pdb": sorted(pdbs["test"] & pdbs["val"]),
        "sabdab_test_val_same_v_domain": len(
            {r["sequence"] for r in sab["test"]} & {r["sequence"] for r in sab["val"]}
        ),
    }
    rabd_rows = read_tsv(src / "rabd_test.tsv.gz")
    in_folds = sorted({r["pdb"] for r in rabd_rows} & (pdbs["test"] | pdbs["val"]))
    rabd, dropped = structures([r for r in rabd_rows if r["pdb"] not in in_folds], "rabd")
    write(out / "rabd_test.tsv.gz", rabd)
    summary["sets"]["rabd_test"] = {"rows": len(rabd_rows), "dropped_in_sabdab_folds": in_folds, **stats(rabd),
                                    "not_numbered": dropped}  # fmt: skip
    light, info = light_chains(pdbs, a.seed)
    for fold, recs in light.items():
        write(out / f"light_{fold}.tsv.gz", recs)
        summary["sets"][f"light_{fold}"] = stats(recs)
    summary["covabdab"] = info
    (out / "natural.json").write_text(strict_json.dumps(summary, indent=1) + "\n")
    print(strict_json.dumps({k: v["chains"] for k, v in summary["sets"].items()}))


if __name__ == "__main__":
    main()
