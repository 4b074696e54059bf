"""How a benchmark hands over its figures: the results file (strict JSON, indented, one trailing
newline: the committed format) and the summary line every script ends its stdout with."""

from __future__ import annotations

from pathlib import Path

from mi_viz.core import strict_json


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
