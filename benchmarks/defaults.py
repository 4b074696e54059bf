"""A domain's sampler defaults, chosen on its validation sweep by the criterion fixed before it ran.

    python -m benchmarks.defaults sudoku|protein|antibody [--sweep .../val_sweep/sweep.csv] [--out .../choice.json]
    python -m benchmarks.defaults family [--families PF00595 ...] [--out results/family/choice.json]

Never a test set: Sudoku's 200 validation puzzles (training distribution), the proteins' and the
antibodies' validation references, each family's *training* rows (another sample seed). The
criteria, each fixed before its sweep ran, are declared by the domains (`criteria` beside their
sampler_defaults: mi_viz/core/choice.py; docs/samplers.md has the table):
- sudoku: among a sampler's rows that average at most 1/3.5 of sequential's passes, the highest
  solve rate; ties within one puzzle go to the fewer passes; rule-4 rows only for the mi rules
  (rule-3 rows are mi-pairs').
- protein: the MI rule's rows (and EB's, mi-zero's, for the matched comparison) at most 1/5 of
  sequential's passes (the paper's operating point), the lowest k-means JSD; ties within 0.001.
- antibody: 128 natural validation heavy chains (SAbDab's CDR-H3 cluster split), every sampler's rows at
  most 1/2.5 of sequential's passes, the highest infill pseudo-log-likelihood under AntiBERTy; ties
  within 0.01 nats; the same at 1/2 and 1/4 (at_budget: the settings the test's fronts run).
  antibody-olga: the germline chains' earlier criterion (1/3), kept for results/antibody/olga/.
- family: a setting qualifies when, on every family, its pair-correlation Pearson is at most 0.02
  below sequential's; among a sampler's qualifying settings, the fewest passes relative to the
  alignment's width (averaged over the families); none qualifying: the registry's value stays.
A domain's sampler_defaults are then set to its choice (tests/test_choices.py: each choice names
the exact sweep row that earned it).
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

from benchmarks.report import best_row, params_of, save, setting
from benchmarks.tables.common import label
from mi_viz.core.samplers import PARAMS, SAMPLERS, columns
from mi_viz.core.sweep import parse_grid
from mi_viz.domains import DOMAINS, get_domain
from mi_viz.domains.family import SHIPPED

ROOT = Path(__file__).resolve().parents[1]


# every registered domain's criteria, by name (a domain without one chooses nothing here)
CRITERIA = {name: c for d in DOMAINS for name, c in getattr(get_domain(d), "criteria", {}).items()}
RULE4 = ("mi", "mi-tc", "mi-zero")  # Sudoku's mi rules: their rule-4 rows (rule 3's are mi-pairs')
MAX_DROP = 0.02  # the family criterion's pair-correlation margin


def choose(domain: str, rows: list[dict], out: str) -> dict:
    c = CRITERIA[domain]
    seq = next(r for r in rows if r["sampler"] == "sequential")
    cap = float(seq["avg_passes"]) / c.share
    tie = c.tie / int(seq["n"]) if domain.startswith("sudoku") else c.tie
    if domain == "sudoku":
        rows = [r for r in rows if r["sampler"] not in RULE4 or str(r.get("rule_version")) == "4"]
    res: dict = {
        "sweep": Path(out).name,
        "sequential": {"avg_passes": float(seq["avg_passes"]), c.metric: float(seq[c.metric])},
        "max_passes": round(cap, c.digits),
        "criterion": c.text,
    }
    samplers = c.samplers or tuple(sorted({r["sampler"] for r in rows} - {"sequential"}))

    def pick(cap: float) -> dict:
        chosen = {}
        for s in samplers:
            r = best_row(rows, s, cap, c.metric, tie, higher=c.higher)
            chosen[s] = None if r is None else {**params_of(r), **{k: float(r[k]) for k in c.figures if r.get(k)}}
        return chosen

    if c.top_level:
        res.update(pick(cap))
    else:
        res["chosen"] = pick(cap)
    if c.budgets:
        res["share"] = c.share
        res["at_budget"] = {
            f"{share:g}": {"max_passes": round(float(seq["avg_passes"]) / share, c.digits), "chosen": pick(
                float(seq["avg_passes"]) / share)} for share in c.budgets
        }  # fmt: skip
    return res


def test_grid(
    choice: dict, samplers: tuple[str, ...] | None = None, oracles: bool = False, headline: bool = False
) -> str:
    """The grid a test sweep runs from a choice file: sequential, then each chosen setting at the
    headline budget and at every further one (each setting once; `headline`: that budget's only), in
    the sweep's grid syntax. With `oracles`, each chosen rule's exact-map twin instead (X-gt at X's
    setting, where one is registered; no sequential): what benchmarks/head_vs_oracle.py pairs a head
    rule with."""
    further = [] if headline else [b["chosen"] for b in choice.get("at_budget", {}).values()]
    picks = [choice["chosen"], *further]
    parts = [] if oracles else ["sequential"]
    for chosen in picks:
        for sampler, row in chosen.items():
            if row is None or (samplers and sampler not in samplers):
                continue
            if oracles and f"{sampler}-gt" not in SAMPLERS:
                continue
            params = params_of({p: row.get(p, "") for p in columns()} | {"sampler": sampler})
            name = f"{sampler}-gt" if oracles else sampler
            part = ":".join([name, *(f"{k}={PARAMS[k].text(v)}" for k, v in params.items())])
            if part not in parts:
                parts.append(part)
    return "; ".join(parts)


CONTROLS = ("pick=random", "pick=conf", "act=defer")  # mi-revise's controls (docs/samplers.md)


def controls_grid(choice: dict) -> str:
    """ "; mi-revise:...:pick=random; ...": mi-revise's controls at its headline choice (the same setting,
    pairs drawn at random, the least confident, and the deferral twin), or "" without a choice."""
    row = choice["chosen"].get("mi-revise")
    if not row:
        return ""
    params = params_of({p: row.get(p, "") for p in columns()} | {"sampler": "mi-revise"})
    base = {k: PARAMS[k].text(v) for k, v in params.items() if k not in ("pick", "act")}
    out = []
    for c in CONTROLS:
        k, v = c.split("=")
        out.append(":".join(["mi-revise", *(f"{p}={x}" for p, x in {**base, k: v}.items())]))
    return "; " + "; ".join(out)


def choose_family(families: list[str]) -> dict:
    per: dict[tuple, dict] = {}
    seq: dict[str, dict] = {}
    for fam in families:
        width = json.loads((ROOT / "checkpoints" / f"family_{fam}.json").read_text())["config"]["width"]
        for r in csv.DictReader(open(ROOT / "results" / "family" / fam / "val_sweep" / "sweep.csv")):
            r["rel_passes"] = float(r["avg_passes"]) / width
            if r["sampler"] == "sequential":
                seq[fam] = r
            per.setdefault(setting(r), {})[fam] = r
    crit = (
        f"pair-correlation Pearson within {MAX_DROP} of sequential's on every family (training-row reference); "
        "then the fewest passes relative to the width"
    )
    res: dict = {"criterion": crit, "families": families, "chosen": {}}
    for sampler in sorted({k[0] for k in per} - {"sequential"}):
        ok = [
            (sum(v["rel_passes"] for v in fams.values()) / len(fams), k)
            for k, fams in per.items()
            if k[0] == sampler
            and len(fams) == len(families)
            and all(float(fams[f]["pair_corr_pearson"]) >= float(seq[f]["pair_corr_pearson"]) - MAX_DROP for f in fams)
        ]
        if not ok:
            res["chosen"][sampler] = None
            continue
        rel, k = min(ok)
        res["chosen"][sampler] = {**params_of(next(iter(per[k].values()))), "relative_passes": round(rel, 4)}
    return res


def folder_of(name: str) -> str:
    """results/FOLDER of a criterion's validation sweep and choice (family: results/family)."""
    c = CRITERIA.get(name)
    return (c.folder or name) if c is not None else name


def without(grid: str, sweep_dir: Path) -> str:
    """The grid's settings that have no row in sweep_dir/sweep.csv (compared by label): a test family that
    re-reads another sweep's committed decodes of the same chains runs only what that sweep lacks."""
    with open(sweep_dir / "sweep.csv", newline="") as f:
        done = {label(r) for r in csv.DictReader(f)}
    return "; ".join(part for part in grid.split("; ") if parse_grid(part)[0].label() not in done)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("domain", choices=[*CRITERIA, "family"])  # antibody-olga: results/antibody/olga/
    ap.add_argument("--sweep", default=None, help="the validation sweep (default: results/DOMAIN/val_sweep/sweep.csv)")
    ap.add_argument("--families", nargs="+", default=list(SHIPPED), help="family: default every shipped family")
    ap.add_argument("--out", default=None, help="default: results/DOMAIN/val_sweep/choice.json (family/choice.json)")
    ap.add_argument(
        "--grid", action="store_true", help="print the test grid of the committed choice file, nothing else"
    )
    ap.add_argument(
        "--samplers", default="", help="with --grid: only these samplers (comma-separated), sequential always"
    )
    ap.add_argument("--oracles", action="store_true", help="with --grid: each chosen rule's exact-map twin (X-gt)")
    ap.add_argument("--headline", action="store_true", help="with --grid: the headline budget's choices only")
    ap.add_argument(
        "--controls", action="store_true", help="with --grid: and mi-revise's controls at its headline choice"
    )
    ap.add_argument(
        "--without", default="", help="with --grid: leave out the settings that already have a row in this sweep folder"
    )
    a = ap.parse_args(argv)
    if a.grid:
        where = ROOT / "results" / folder_of(a.domain) / "val_sweep"
        only = tuple(filter(None, a.samplers.split(","))) or None
        choice = json.loads(Path(a.out or where / "choice.json").read_text())
        grid = test_grid(choice, only, a.oracles, a.headline) + (controls_grid(choice) if a.controls else "")
        print(without(grid, Path(a.without)) if a.without else grid)
        return
    if a.domain == "family":
        save(choose_family(a.families), a.out or ROOT / "results" / "family" / "choice.json")
        return
    where = ROOT / "results" / folder_of(a.domain) / "val_sweep"
    sweep = a.sweep or str(where / "sweep.csv")
    with open(sweep, newline="") as f:
        rows = list(csv.DictReader(f))
    save(choose(a.domain, rows, sweep), a.out or where / "choice.json")


if __name__ == "__main__":
    main()
