"""How a benchmark hands over its figures: the results file (strict JSON, indented, one trailing
newline: the committed format) and the summary line every script ends its stdout with."""

from __future__ import annotations

from pathlib import Path

from mi_viz.core import strict_json
from mi_viz.core.paths import write_text
from mi_viz.core.samplers import PARAMS, columns

ROOT = Path(__file__).resolve().parents[1]


def save(res: dict, out: str | Path | None, summary: dict | None = None) -> None:
    """res to `out` (when given; gzip-compressed when it ends in .gz) and, last on stdout, `summary`
    (default: res) as one JSON line."""
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        write_text(out, strict_json.dumps(res, indent=1) + "\n")
    print(strict_json.dumps(res if summary is None else summary))


def show(row: dict) -> None:
    """A measurement as aligned 'name  value' lines, then as one JSON line (results/*.txt keep both)."""
    w = max(len(k) for k in row)
    for k, v in row.items():
        print(f"{k:<{w}}  {v}")
    print(strict_json.dumps(row))


def setting(row: dict) -> tuple:
    """A sweep row's identity: its sampler and every declared parameter (samplers.columns(), `scan`
    included), as the row writes them ("" where the rule does not take it)."""
    return (row["sampler"], *((row.get(p) or "") for p in columns()))


def params_of(row: dict) -> dict:
    """A sweep row's parameters by the registry's declarations: every declared parameter the row
    sets, cast to its declared kind (an int stays an int, a choice a string). A choice file built
    from this names exactly the row that earned it (tests/test_choices.py)."""
    return {p: PARAMS[p].cast(str(row[p])) for p in columns() if row.get(p) not in ("", None)}


def defaults_from_choice(chosen: dict[str, dict | None]) -> dict[str, dict]:
    """A choice file's `chosen` -> a domain's sampler_defaults: each chosen sampler's declared
    parameters (figures such as relative_passes dropped); a sampler without a choice is absent
    (it keeps the registry's value); mi-gt and demask-gt, the oracles beside mi and demask, take a copy
    of their rule's."""
    out = {name: {k: v for k, v in row.items() if k in PARAMS} for name, row in chosen.items() if row is not None}
    for rule, oracle in (("mi", "mi-gt"), ("demask", "demask-gt")):
        if rule in out and oracle not in out:
            out[oracle] = dict(out[rule])
    return out


def rows_for(rows: list[dict], sampler: str, params: dict) -> list[dict]:
    """The sweep rows of one setting (a choice's sampler and parameters): the inverse of params_of."""
    want = (sampler, *(PARAMS[p].text(params[p]) if p in params else "" for p in columns()))
    return [r for r in rows if (r["sampler"], *(_text(p, r.get(p)) for p in columns())) == want]


def _text(p: str, v) -> str:
    return "" if v in ("", None) else PARAMS[p].text(PARAMS[p].cast(str(v)))


def best_row(rows: list[dict], sampler: str, max_passes: float, metric: str, tie: float, higher: bool = False):
    """A defaults criterion: among the sampler's rows that average at most max_passes, the best
    `metric` (the highest if higher, else the lowest); rows within `tie` of it go to the fewer
    passes. None if no row is that fast."""
    cand = [r for r in rows if r["sampler"] == sampler and float(r["avg_passes"]) <= max_passes]
    if not cand:
        return None
    sign = -1.0 if higher else 1.0  # compare as a loss
    best = min(sign * float(r[metric]) for r in cand)
    return min((r for r in cand if sign * float(r[metric]) <= best + tie), key=lambda r: float(r["avg_passes"]))
