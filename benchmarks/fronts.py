"""Sampler fronts at matched passes, one domain's plan a run: every sampler family's curve (its
settings, each a point: average passes against the domain's measure) read at the same passes,
linear between the two settings around them and absent outside, and the MI rule's lead there with an
interval. The tables (benchmarks/tables/) only format what this writes.

    python -m benchmarks.fronts sudoku [--sweep-dir results/sudoku/test_hard] [--at 9,10,...] [--out FILE]
    python -m benchmarks.fronts family   [--out results/family/fronts.json]
    python -m benchmarks.fronts antibody [--sweep-dir results/antibody/rabd_test] [--choice FILE]
    python -m benchmarks.fronts antibody-olga [--out results/antibody/olga/fronts.json]
    python -m benchmarks.fronts antibody-sapiens-oracles --out results/antibody/sapiens/oracles/fronts.json

A subcommand is a plan a domain declares in its folder (`Domain.fronts`, a core.choice.Fronts):
one of the four readings below and that reading's arguments (its rivals, pass counts, files), so a
domain that reads its sweeps as another does adds no code here.

- per-input bootstrap (sudoku; antibody-sapiens-oracles: the infill's PLL, nats a residue): the solve
  rate; the interval a paired bootstrap over the puzzles
  (the per-puzzle rows the sweep saved with --save-rows, resampled with replacement, the same draw
  for every setting; every setting's passes and solve rate recomputed, the fronts read again, "the
  MI front minus the other" taken: its 5-95 % quantiles over 1,000 draws). A sampler run at one
  setting only is compared where it stands, the MI front read at that setting's own passes
  ("points"); a front with no pass count in common by its settings and the MI front's best in at
  most as many passes as its cheapest ("outside").
- pair statistics (family): the pair-correlation Pearson against held-out members, per protein
  family and sweep; each MI rule's lead over the best of its rivals, the interval from the two
  rows' bootstrap sds (interpolated like the values; treated as independent, conservative: they
  share seeds).
- row errors (antibody-olga): the germline chains' infill pseudo-log-likelihood under AntiBERTy on
  every test sweep (cdr3, cdrs) at a quarter, a third and half of sequential's passes and at the
  validated `mi` default's own row (where the all-CDR curves, which end well short of a quarter of
  sequential's passes, can be compared at all); the best MI rule's lead over the best rival, the
  interval from the two rows' standard errors over the chains (treated as independent: conservative).
- paired chains (antibody): the validated MI rule against sequential (non-inferiority) and against
  every rival at matched passes, chains paired (a bootstrap over the chains), at each budget of the
  validation choice; every judge by the species the numbering calls.

Prints, last, a one-line JSON.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.report import save
from benchmarks.tables.antibody import antibody_defaults
from benchmarks.tables.common import Z_POWER, R, interpolate, label, rows_of, sweep_rows, verdict
from mi_viz.core.choice import Fronts
from mi_viz.core.paths import portable
from mi_viz.core.plots import sweep_family
from mi_viz.core.samplers import PARAMS, SAMPLERS, config_for, row_label
from mi_viz.core.sweep import rows_path
from mi_viz.domains import DOMAINS, get_domain

MI_RULES = ("mi", "mi-tc", "mi-cap", "mi-pairs")  # the MI family: what "the best MI rule" is read among


def curves(rows: list[dict], measure: str, spread: str) -> tuple[dict[str, list], dict[str, list]]:
    """Each sampler family's points [(average passes, measure)], and the same of its spread."""
    value: dict[str, list] = {}
    sd: dict[str, list] = {}
    for r in rows:
        x = float(r["avg_passes"])
        value.setdefault(sweep_family(r), []).append((x, float(r[measure])))
        sd.setdefault(sweep_family(r), []).append((x, float(r[spread])))
    return value, sd


def quantiles(diffs: list[float], digits: int = 2) -> list[float]:
    lo, hi = np.quantile(diffs, [0.05, 0.95]) if diffs else (np.nan, np.nan)
    return [round(lo, digits), round(hi, digits)]


# --- sudoku (and the antibody oracles): a per-input measure, a paired bootstrap over the inputs ------
# a per-input column -> (its scale in the fronts, the decimals kept): Sudoku's solve rate in percent
SCALES = {"solved": (100.0, 2)}


def per_input_bootstrap(a, plan: Fronts) -> None:
    """--sweep-dir may name several sweeps of the same inputs, comma-separated (a rule swept apart from
    Table 1's, e.g. DEMASK's head rule on the same hard puzzles): their settings are read as one sweep,
    a setting already read from an earlier folder skipped, the inputs paired by their index."""
    dirs = [Path(x).resolve() for x in a.sweep_dir.split(",")]
    metric = plan.metrics or "solved"  # the per-input column read (Sudoku: solved; the antibody oracles: pll)
    scale, digits = SCALES.get(metric, (1.0, 3))
    settings = []  # (front, the metric (N,), passes (N,))
    for d, r in sweep_rows(dirs, keep=lambda d, r: rows_path(d, row_label(r)).exists()):
        with gzip.open(rows_path(d, row_label(r)), "rt") as h:
            per = list(csv.DictReader(h))
        value = np.array([float(p[metric] or "nan") for p in per], dtype=float)  # nan: an input its judge skipped
        settings.append((sweep_family(r), value, np.array([int(p["passes"]) for p in per], dtype=float)))
    fronts = sorted({s[0] for s in settings})
    if a.method not in fronts:
        raise SystemExit(f"no saved rows for the front {a.method!r}; fronts with rows: {fronts}")
    N = len(settings[0][1])
    if any(len(s[1]) != N for s in settings):
        sizes = sorted({len(s[1]) for s in settings})
        raise SystemExit(f"the sweeps in {a.sweep_dir} do not hold the same inputs (sizes {sizes})")

    def points(idx):
        c: dict[str, list] = {}
        for fam, value, passes in settings:
            c.setdefault(fam, []).append((passes[idx].mean(), scale * np.nanmean(value[idx])))
        return c

    full = points(np.arange(N))
    g = np.random.default_rng(0)
    draws = [points(g.integers(0, N, N)) for _ in range(a.boot)]
    out = {"sweep_dir": ",".join(str(portable(d)) for d in dirs), "method": a.method, "n": N, "boot": a.boot, "at": {}}
    if metric != "solved":  # Sudoku's files predate the key
        out["metric"] = metric
    for x in (float(x) for x in a.at.split(",")):
        m = interpolate(full[a.method], x)
        cell: dict[str, Any] = {"method": None if m is None else round(m, digits), "vs": {}}
        for fam in fronts:
            o = interpolate(full[fam], x)
            if fam == a.method or m is None or o is None:
                continue
            diffs = [
                dm - do
                for c in draws
                if (dm := interpolate(c[a.method], x)) is not None and (do := interpolate(c[fam], x)) is not None
            ]
            cell["vs"][fam] = {metric: round(o, digits), "diff": round(m - o, digits), "ci90": quantiles(diffs, digits)}
        out["at"][f"{x:g}"] = cell
    out["points"] = {}
    for fam in fronts:
        if fam == a.method or len(full[fam]) != 1:
            continue
        x, o = full[fam][0]
        m = interpolate(full[a.method], x)
        if m is None:
            continue
        diffs = [dm - c[fam][0][1] for c in draws if (dm := interpolate(c[a.method], c[fam][0][0])) is not None]
        out["points"][fam] = {"passes": round(x, 2), metric: round(o, digits), "method": round(m, digits),
                              "diff": round(m - o, digits), "ci90": quantiles(diffs, digits)}  # fmt: skip
    compared = {fam for cell in out["at"].values() for fam in cell["vs"]} | set(out["points"])
    out["outside"] = {}
    for fam in fronts:
        if fam == a.method or fam in compared:
            continue
        pts = sorted(full[fam])
        below = [s for p, s in full[a.method] if p <= pts[0][0]]
        out["outside"][fam] = {
            "points": [[round(p, 2), round(s, digits)] for p, s in pts],
            "method_best_at_fewer_passes": round(max(below), digits) if below else None,
        }
    save(out, a.out)


# --- family: pair statistics, the rows' bootstrap sds ----------------------------------------------
def family_fronts(rows: list[dict], plan: Fronts) -> dict:
    """{x: {"curves": {family: value}, "leads": {label: {"diff", "sd_method", "sd_rival", "vs"}}}}"""
    value, spread = curves(rows, "pair_corr_pearson", "pair_corr_sd")
    out = {}
    for x in plan.at:
        at_x = {c: interpolate(v, x) for c, v in value.items()}  # every curve read once at x
        leads = {}
        for name, method, rivals in plan.leads:
            m = at_x.get(method)
            best = max(((at_x[c], c) for c in rivals if at_x.get(c) is not None), default=None)
            if m is None or best is None:
                continue
            leads[name] = {"diff": m - best[0], "sd_method": interpolate(spread[method], x),
                           "sd_rival": interpolate(spread[best[1]], x), "vs": best[1]}  # fmt: skip
        out[str(x)] = {"curves": {c: v for c, v in at_x.items() if v is not None}, "leads": leads}
    return out


def pair_statistics(a, plan: Fronts) -> None:
    res: dict = {"at": list(plan.at), "leads": [[n, m, list(r)] for n, m, r in plan.leads], "families": {}}
    for fam in plan.members:
        for sweep in plan.sweeps:
            path = R / plan.sweep_dir / fam / sweep
            if not path.exists():
                continue
            rows = rows_of(path)
            seq = next((r for r in rows if r["sampler"] == "sequential"), None)
            res["families"].setdefault(fam, {})[sweep] = {
                "sequential": None
                if seq is None
                else {"pair_corr_pearson": float(seq["pair_corr_pearson"]), "avg_passes": float(seq["avg_passes"])},
                "at": family_fronts(rows, plan),
            }
    save(res, a.out, {"families": list(res["families"])})


# --- antibody: infill pseudo-log-likelihood, the rows' standard errors -----------------------------
def antibody_fronts(rows: list[dict], at: list[float], rivals: tuple[str, ...]) -> dict:
    value, spread = curves([r for r in rows if r["sampler"] != "sequential" and r.get("pll_se")], "pll", "pll_se")
    out = {}
    for x in at:
        at_x = {c: interpolate(v, x) for c, v in value.items()}
        at_x = {c: v for c, v in at_x.items() if v is not None}
        mi = max(((v, c) for c, v in at_x.items() if c.split()[0] in MI_RULES), default=None)
        rival = max(((v, c) for c, v in at_x.items() if c.split()[0] in rivals), default=None)
        lead = None
        if mi and rival:
            sm, sr = interpolate(spread[mi[1]], x), interpolate(spread[rival[1]], x)
            half = 1.645 * (sm**2 + sr**2) ** 0.5
            lead = {"mi": mi[1], "vs": rival[1], "diff": mi[0] - rival[0], "lo": mi[0] - rival[0] - half,
                    "hi": mi[0] - rival[0] + half}  # fmt: skip
        out[f"{x:g}"] = {"curves": at_x, "lead": lead}
    return out


def row_errors(a, plan: Fronts) -> None:
    """The germline (OLGA) chains' fronts (results/antibody/olga/): each member a mask's sweep."""
    res: dict = {"masks": {}}
    for mask in plan.members:
        path = R / plan.sweep_dir / mask / plan.sweeps[0]
        if not path.exists():
            continue
        rows = rows_of(path)
        seq = next(r for r in rows if r["sampler"] == "sequential")
        n = float(seq["avg_passes"])
        at = [round(n / k, 2) for k in (4, 3, 2)]  # a quarter, a third and half of sequential's passes
        default = config_for("mi", antibody_defaults(plan.choice)).label()
        own = [round(float(r["avg_passes"]), 2) for r in rows if label(r) == default]  # the default's own row
        res["masks"][mask] = {
            "sequential": {k: float(seq[k]) for k in ("avg_passes", "pll", "pll_se", "pll_natural") if seq.get(k)},
            "at": antibody_fronts(rows, sorted(set(at + own)), plan.rivals),
            "mi_default": {"label": default, "avg_passes": own[0] if own else None},
        }
    save(res, a.out, {"masks": list(res["masks"])})


# --- antibody: natural chains, the validated settings, chains paired ------------------------------
def saved_chains(sweep_dir: Path, row: dict) -> list[dict]:
    """A setting's per-chain rows (a sweep's --save-rows), in the chains' order."""
    with gzip.open(rows_path(sweep_dir, label(row)), "rt") as f:
        return sorted(csv.DictReader(f), key=lambda r: int(r["i"]))


def per_chain(chains: list[dict], metric: str) -> np.ndarray:
    """(N,) one figure per chain (nan where the judge had none: a Pgen of a non-human chain, -inf as nan)."""
    return np.array([float(r[metric]) if r.get(metric) not in ("", None, "-inf") else np.nan for r in chains])


def paired(d: np.ndarray, draws: np.ndarray, levels: tuple[float, ...]) -> dict:
    """A per-chain difference's mean and its bootstrap intervals (chains resampled, the same draws for
    every comparison): {diff, ci90: [lo, hi], ci_fw: [lo, hi] (the family-wise level)}; the word the
    90 % interval earns at +-MARGIN (verdict), and the smallest difference n chains of this spread
    detect at 80 % power (mde80 = (z_.95 + z_.80) sd / sqrt(n))."""
    ok = ~np.isnan(d)
    boot = np.nanmean(np.where(ok[draws], d[draws], np.nan), axis=1)
    out: dict = {"diff": round(float(np.nanmean(d)), 4), "n": int(ok.sum())}
    for name, level in zip(("ci90", "ci_fw"), levels):
        lo, hi = np.nanquantile(boot, [(1 - level) / 2, 1 - (1 - level) / 2])
        out[name] = [round(float(lo), 4), round(float(hi), 4)]
    sd = float(np.nanstd(d, ddof=1)) if ok.sum() > 1 else float("nan")
    out["sd"] = round(sd, 4)
    out["mde80"] = round(Z_POWER * sd / np.sqrt(max(1, ok.sum())), 4)
    out["verdict"] = verdict(out["ci90"])
    return out


def paired_chains(a, plan: Fronts) -> None:
    """The validated MI rule against sequential (non-inferiority) and against every rival at matched
    passes, chains paired, at each budget of the validation choice; every judge by species."""
    d = Path(a.sweep_dir).resolve()
    choice = json.loads(Path(a.choice).read_text())
    rows = rows_of(d / "sweep.csv")
    by_label = {label(r): r for r in rows}
    chains = {lab: saved_chains(d, r) for lab, r in by_label.items()}
    also = getattr(a, "also", "")
    if also:  # the committed decodes of the same chains join where this sweep has no row of that setting
        other = Path(also).resolve()
        for r in rows_of(other / "sweep.csv"):
            same = all(r.get(k) == rows[0].get(k) for k in ("inputs", "seed", "temperature"))
            if label(r) not in by_label and same:
                by_label[label(r)] = r
                chains[label(r)] = saved_chains(other, r)
                rows.append(r)
    ids = {tuple((c["i"], c.get("species"), c.get("masked")) for c in cs) for cs in chains.values()}
    if len(ids) != 1:
        raise SystemExit(f"the rows of {d}{' and ' + also if also else ''} do not hold the same chains")
    n = len(next(iter(chains.values())))
    seq = next(lab for lab, r in by_label.items() if r["sampler"] == "sequential")
    budgets = {f"{choice['share']:g}": choice["chosen"], **{k: v["chosen"] for k, v in choice["at_budget"].items()}}
    only = [b for b in getattr(a, "budgets", "").split(",") if b]  # a family whose test rows are not all made yet
    if only:
        unknown = sorted(set(only) - set(budgets))
        if unknown:
            raise SystemExit(f"no budget {', '.join(unknown)} in {a.choice} (it has {', '.join(budgets)})")
        budgets = {k: v for k, v in budgets.items() if k in only}
    metrics = [m for m in a.metrics.split(",") if m in rows[0]]
    rule = plan.method or "mi"  # the validated rule set against the others (mi-revise for the revisers' family)
    rivals = [r for r in plan.rivals if any(row["sampler"] == r for row in rows)]
    defaults = SAMPLERS[rule].params if rule in SAMPLERS else {}

    def is_control(r: dict) -> bool:  # a row of the rule that differs from it in a control parameter
        return r["sampler"] == rule and any(str(r.get(p, "")) not in ("", str(defaults.get(p))) for p in plan.controls)

    n_controls = sum(1 for r in rows if is_control(r))  # each a comparison of the family too
    n_cmp = len(budgets) * (len(rivals) + n_controls)
    fw = 1 - 0.10 / max(1, n_cmp)  # Bonferroni: the family of MI-vs-rival comparisons at 90 %
    draws = np.random.default_rng(0).integers(0, n, (a.boot, n))
    out: dict = {"sweep_dir": portable(d), "chains": n, "boot": a.boot, "metrics": metrics,
                 "comparisons_vs_rivals": n_cmp, "family_wise_level": round(fw, 5), "budgets": {}}  # fmt: skip
    if also:
        out["also"] = portable(Path(also).resolve())
    if only:
        out["budgets_read"] = only

    def value(lab: str, m: str) -> np.ndarray:
        return per_chain(chains[lab], m)

    def passes(lab: str) -> float:
        return float(by_label[lab]["avg_passes"])

    def front_at(sampler: str, x: float, m: str):
        """A rule's per-chain figures at x passes, linear between its two test settings around x (as
        fronts read means); None outside its settings' passes."""
        pts = sorted((passes(lab), lab) for lab, r in by_label.items() if r["sampler"] == sampler)
        for (x0, l0), (x1, l1) in zip(pts, pts[1:]):
            if x0 <= x <= x1:
                w = 0.0 if x1 == x0 else (x - x0) / (x1 - x0)
                return (1 - w) * value(l0, m) + w * value(l1, m), [l0, l1]
        exact = [lab for p, lab in pts if abs(p - x) < 1e-9]
        return (value(exact[0], m), exact) if exact else None

    for share, chosen in budgets.items():
        if not chosen.get(rule):
            continue
        mi = config_for(rule, {rule: {k: v for k, v in chosen[rule].items() if k in PARAMS}}).label()
        if mi not in by_label:
            raise SystemExit(f"the validated setting {mi} has no row in {d}/sweep.csv: run its test sweep")
        x = passes(mi)
        cell: dict = {"mi": mi, "mi_passes": x, "sequential_passes": passes(seq),
                      "vs_sequential": {m: paired(value(mi, m) - value(seq, m), draws, (0.90, 0.90)) for m in metrics},
                      "rivals": {}}  # fmt: skip
        for rv in rivals:
            own = chosen.get(rv)
            at = front_at(rv, x, metrics[0])
            if at is None:
                pts = sorted(round(passes(lab), 2) for lab, r in by_label.items() if r["sampler"] == rv)
                cell["rivals"][rv] = {"outside": pts}
                continue
            labels = at[1]
            cell["rivals"][rv] = {"settings": labels, "validated": None if own is None else config_for(
                rv, {rv: {k: v for k, v in own.items() if k in PARAMS}}).label(), **{
                m: paired(value(mi, m) - front_at(rv, x, m)[0], draws, (0.90, fw)) for m in metrics}}  # type: ignore[index]  # fmt: skip
        if plan.controls:  # the rule's own controls at its chosen setting, chain by chain (no interpolation)
            mine = chosen[rule]
            cell["controls"] = {
                lab: {"passes": passes(lab),
                      **{m: paired(value(mi, m) - value(lab, m), draws, (0.90, fw)) for m in metrics}}
                for lab, r in by_label.items()
                if r["sampler"] == rule and lab != mi
                and all(str(r.get(p, "")) in ("", str(v)) or p in plan.controls for p, v in mine.items() if p in PARAMS)
            }  # fmt: skip
        out["budgets"][share] = cell
    species: dict = {}
    for lab in [seq, *dict.fromkeys(c["mi"] for c in out["budgets"].values())]:
        for sp in sorted({r["species"] for r in chains[lab]}):
            sel = [r for r in chains[lab] if r["species"] == sp]
            cell = species.setdefault(sp, {"chains": len(sel), "natural": {}, "settings": {}})
            cell["natural"] = {m: _nanmean(per_chain(sel, f"{m}_natural")) for m in (*metrics, "log10_pgen")}
            cell["settings"][lab] = {m: _nanmean(per_chain(sel, m)) for m in (*metrics, "recovery", "log10_pgen")}
    out["species"] = species
    seed1 = getattr(a, "seed1", "")
    if seed1 and (Path(seed1) / "sweep.csv").exists():  # a second sampling seed: its spread, beside the intervals
        out["seed1"] = portable(Path(seed1).resolve())
        out["seed_spread"] = seed_spread(by_label, rows_of(Path(seed1) / "sweep.csv"), metrics)
    save(out, a.out, {"budgets": list(out["budgets"]), "chains": n})


def seed_spread(seed0: dict[str, dict], seed1_rows: list[dict], metrics: list[str]) -> dict:
    """Each setting both seeds decoded (the same chains, another sampling seed): its mean judge figure
    under each seed and their absolute difference, the seed-to-seed spread a reader sets beside an
    interval (the intervals resample chains at one seed; this is the sampling's own noise)."""
    out: dict = {}
    for r in seed1_rows:
        lab = label(r)
        if lab not in seed0:
            continue
        cell = {}
        for m in metrics:
            if seed0[lab].get(m) not in (None, "") and r.get(m) not in (None, ""):
                v0, v1 = float(seed0[lab][m]), float(r[m])
                cell[m] = {"seed0": v0, "seed1": v1, "spread": round(abs(v0 - v1), 4)}
        out[lab] = cell
    return out


def _nanmean(v: np.ndarray) -> float | None:
    return None if np.isnan(v).all() else round(float(np.nanmean(v)), 4)


READINGS = {
    "per-input bootstrap": per_input_bootstrap,
    "pair statistics": pair_statistics,
    "row errors": row_errors,
    "paired chains": paired_chains,
}


def plans() -> dict[str, Fronts]:
    """Every registered domain's fronts plans, by subcommand."""
    return {name: p for d in DOMAINS for name, p in getattr(get_domain(d), "fronts", {}).items()}


def add_arguments(s: argparse.ArgumentParser, plan: Fronts) -> None:
    """A plan's subcommand's options: its reading's arguments, defaulting to the plan's."""
    if plan.reading == "per-input bootstrap":
        s.add_argument("--sweep-dir", default=str(R / plan.sweep_dir))
        s.add_argument("--method", default=plan.method, help="the front compared against every other")
        s.add_argument("--at", default=",".join(f"{x:g}" for x in plan.at), help="pass counts (inside the MI front)")
        s.add_argument("--boot", type=int, default=plan.boot)
        s.add_argument("--out", default=None)
    elif plan.reading == "paired chains":
        s.add_argument("--sweep-dir", default=str(R / plan.sweep_dir))
        s.add_argument("--choice", default=str(R / plan.choice))
        s.add_argument("--metrics", default=plan.metrics, help="per-chain judges compared (those present)")
        s.add_argument(
            "--budgets", default="", help="only these budgets of the choice (e.g. 2.5): the rest not yet made"
        )
        s.add_argument(
            "--also",
            default=str(R / plan.also) if plan.also else "",
            help="another sweep of the same chains whose rows join where this one has none",
        )
        s.add_argument(
            "--seed1", default="", help="the same chains at sampling seed 1: each setting's seed-to-seed spread"
        )
        s.add_argument("--boot", type=int, default=plan.boot)
        s.add_argument("--out", default=None, help="default: SWEEP_DIR/fronts.json")
    else:
        s.add_argument("--out", default=str(R / plan.out))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="plan", required=True)
    known = plans()
    for name, plan in known.items():
        add_arguments(sub.add_parser(name, help=plan.help), plan)
    a = ap.parse_args(argv)
    plan = known[a.plan]
    if plan.reading == "paired chains" and a.out is None:
        a.out = str(Path(a.sweep_dir) / "fronts.json")
    READINGS[plan.reading](a, plan)


if __name__ == "__main__":
    main()
