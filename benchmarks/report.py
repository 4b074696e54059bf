"""How a benchmark hands over its figures: the results file (strict JSON, indented, one trailing
newline: the committed format) and the summary line every script ends its stdout with."""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

from mi_viz.core import strict_json

ROOT = Path(__file__).resolve().parents[1]


def save(res: dict, out: str | Path | None, summary: dict | None = None) -> None:
    """res to `out` (when given) and, last on stdout, `summary` (default: res) as one JSON line."""
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(strict_json.dumps(res, indent=1) + "\n")
    print(strict_json.dumps(res if summary is None else summary))


def show(row: dict) -> None:
    """A measurement as aligned 'name  value' lines, then as one JSON line (results/*.txt keep both)."""
    w = max(len(k) for k in row)
    for k, v in row.items():
        print(f"{k:<{w}}  {v}")
    print(strict_json.dumps(row))


def validation_sweep(domain: str, doc: str | None, argv=None) -> tuple[argparse.Namespace, list[dict], dict]:
    """What a defaults script starts from: --sweep (the domain's validation sweep) and --out (its
    choice.json), the sweep's rows and sequential's row (the pass budget is a share of its passes)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sweep", default=str(ROOT / "results" / domain / "val_sweep" / "sweep.csv"))
    ap.add_argument("--out", default=str(ROOT / "results" / domain / "val_sweep" / "choice.json"))
    a = ap.parse_args(argv)
    with open(a.sweep, newline="") as f:
        rows = list(csv.DictReader(f))
    return a, rows, next(r for r in rows if r["sampler"] == "sequential")
