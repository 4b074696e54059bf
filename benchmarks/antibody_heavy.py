"""The natural heavy test sets' sweeps restricted to heavy chains, from their committed per-chain rows.

SAbDab's and RAbD's "heavy" chains include VH-linker-VL fusions deposited as one chain (6kr0 and 14
more in SAbDab test, one in RAbD) that riot-na numbers as their VL, so a CDR-L3 was infilled. The
sweeps now read those sets with `--chains heavy`, and each kept chain samples from its place in the
file (`read_infills` streams), so its decode is the one already committed: this rewrites each
sweep's rows without the other chain types (the index i renumbered, as a fresh sweep writes it) and
its summary rows from them, labelled as the fresh sweep labels them. `make antibody-results` then
reuses every row (same setting, inputs and weights) and re-decodes nothing.

    python -m benchmarks.antibody_heavy results/antibody/sabdab_test results/antibody/rabd_test ...

Set-level figures are means of the per-chain figures as rows store them (4 decimals), so one may
differ from a fresh run's in its last digit; `seconds` is the whole set's decode, kept as measured.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import math
from pathlib import Path

import numpy as np

from mi_viz.core.samplers import row_label
from mi_viz.core.sweep import rows_path

HEAVY = "igh"
MEANS = ("pll", "pll_natural", "pll_sapiens", "pll_sapiens_natural", "pll_antiberty", "pll_antiberty_natural")


def read_csv(path: Path) -> list[dict]:
    raw = path.read_bytes()
    text = (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode()
    return list(csv.DictReader(io.StringIO(text)))


def write_rows(rows: list[dict], path: Path) -> None:
    """As core.bench.write_rows writes them (gzip text through csv.DictWriter)."""
    with gzip.open(path, "wt", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def _num(v: str) -> float | None:
    if v in ("", None):
        return None
    return -math.inf if v == "-inf" else float(v)


def summary(old: dict, rows: list[dict]) -> dict:
    """old's summary row with every figure the per-chain rows hold recomputed over `rows`."""
    new = dict(old)
    n = len(rows)
    new["n"] = str(n)
    new["recovery"] = str(round(float(np.mean([float(r["recovery"]) for r in rows])), 4))
    new["avg_passes"] = str(round(sum(int(r["passes"]) for r in rows) / n, 3))
    for k in MEANS:
        if old.get(k, "") == "" or k not in rows[0]:
            continue
        v = [x for x in (_num(r[k]) for r in rows) if x is not None]
        new[k] = str(round(float(np.mean(v)), 4)) if v else ""
        if k == "pll":
            new["pll_se"] = str(round(float(np.std(v, ddof=1) / np.sqrt(len(v))), 4))
    for suffix in ("", "_natural"):
        k = f"log10_pgen{suffix}"
        if old.get(k, "") == "":
            continue
        got = [x for x in (_num(r[k]) for r in rows) if x is not None]
        fin = [x for x in got if math.isfinite(x)]
        new[k] = str(round(float(np.mean(fin)), 3)) if fin else ""
        if not suffix:
            new["pgen_zero"] = str(round(1 - len(fin) / len(got), 4)) if got else ""
    if "avg_revised" in old and "revised" in rows[0]:
        new["avg_revised"] = str(round(sum(int(r["revised"]) for r in rows) / n, 3))
    return new


def heavy_only(folder: Path) -> dict:
    """Rewrite folder/sweep.csv and folder/rows/ for the heavy chains; returns what it dropped."""
    sweep = folder / "sweep.csv"
    rows = read_csv(sweep)
    if all(r["inputs"].split(":")[2:3] == ["heavy"] for r in rows):
        return {"folder": str(folder), "already": True}
    out, dropped = [], None
    for r in rows:
        path = rows_path(folder, row_label(r))
        chains = read_csv(path)
        keep = [c for c in chains if c["chain"] == HEAVY]
        gone = [int(c["i"]) for c in chains if c["chain"] != HEAVY]
        if dropped is not None and gone != dropped:
            raise SystemExit(f"{path}: other chains dropped than in the sweep's other rows")
        dropped = gone
        for i, c in enumerate(keep):
            c["i"] = str(i)
        write_rows(keep, path)
        new = summary(r, keep)
        file, mask, *rest = r["inputs"].split(":")
        new["inputs"] = ":".join([file, mask, "heavy", *rest])
        out.append(new)
    with open(sweep, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), restval="")
        w.writeheader()
        w.writerows(out)
    return {"folder": str(folder), "dropped": dropped}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folders", nargs="+")
    a = ap.parse_args(argv)
    for f in a.folders:
        print(heavy_only(Path(f)))


if __name__ == "__main__":
    main()
