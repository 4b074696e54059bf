"""The Sudoku tables: Table 1 and its sweeps, fronts at matched passes, the MI report, latency."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from mi_viz.core.plots import sweep_family  # the same curve grouping as the sweep plots
from mi_viz.core.samplers import config_for
from mi_viz.domains.sudoku import DOMAIN as SUDOKU
from mi_viz.domains.sudoku import PAPER_TABLE1

from .common import R, interpolate, label, markdown, md_table, need, rows_of, sweep_rows

SUDOKU_DEFAULTS = SUDOKU.sampler_defaults
PAPER = {  # our row's label -> the paper's passes / solved beside it
    lab: f"{p['avg_passes']} / {100 * p['solved_frac']:.1f} %"
    + ("" if p["method"] == lab else f" (paper: {p['method']})")
    for p in PAPER_TABLE1
    for lab in p["ours"]
}
# the Sudoku defaults, from the domain (each sampler's validation choice; mi-gt is the oracle)
DEFAULTS = {config_for(name, SUDOKU_DEFAULTS).label() for name in SUDOKU_DEFAULTS if name != "mi-gt"}


def sweep_table(dirs, paper=False, wall=True, only=None) -> str:
    """The rows of one sweep folder, or of several read as one (common.sweep_rows)."""
    rows = [r for _, r in sweep_rows(dirs) if only is None or label(r) in only]
    oracle = any(r.get("avg_oracle_passes") for r in rows)  # a column only where an oracle row exists
    body = []
    for r in rows:
        lab = label(r)
        name = (
            f"**{lab} (default)**"
            if lab in DEFAULTS
            else f"**{lab} (oracle ceiling)**"
            if r["sampler"] == "mi-gt"
            else lab
        )
        row = {"sampler": name, "avg passes": f"{float(r['avg_passes']):.1f}",
               "solved": f"{100 * float(r['solved_frac']):.1f} %"}  # fmt: skip
        if oracle:
            row["oracle passes / puzzle"] = f"{float(r['avg_oracle_passes']):.1f}" if r.get("avg_oracle_passes") else ""
        if wall:
            row["wall (s) / CPU threads"] = f"{float(r['seconds']):.0f} / {r.get('threads') or '?'}"
        if paper:
            row["paper: passes / solved"] = PAPER.get(lab, "")
        body.append(row)
    return markdown(pd.DataFrame(body))


def matched_passes(path, method="mi lam=10", against=("eb", "mi-zero", "topk", "mi-pairs lam=0.25")) -> str:
    """Each `method` row against the other curves at the same average passes (linear
    interpolation along their points; blank where the row lies outside a curve)."""
    rows = rows_of(path)
    curves: dict[str, list] = {}
    for r in rows:
        curves.setdefault(sweep_family(r), []).append((float(r["avg_passes"]), 100 * float(r["solved_frac"])))
    body = []
    for r in sorted((r for r in rows if sweep_family(r) == method), key=lambda r: -float(r["avg_passes"])):
        x, y = float(r["avg_passes"]), 100 * float(r["solved_frac"])
        row = {f"{method} row": label(r), "passes": f"{x:.1f}", "solved": f"{y:.1f} %"}
        for a in against:
            v = interpolate(curves.get(a, []), x)
            row[f"{a} at same passes"] = "" if v is None else f"{v:.1f} % ({y - v:+.1f})"
        body.append(row)
    return markdown(pd.DataFrame(body))


# a fronts file's per-input measure -> (its column's name, a value's format, a difference's format)
MEASURES = {
    "solved": ("solves", lambda v: f"{v:.1f} %", lambda d: f"{d:+.1f}"),
    "pll": ("PLL", lambda v: f"{v:.3f}", lambda d: f"{d:+.3f}"),
}


def fronts_table(path=None, how: str = "python -m benchmarks.fronts sudoku --out {rel}") -> str:
    """Every sampler front against the MI rule's at matched passes, with paired bootstrap intervals
    (results/sudoku/fronts.json, benchmarks/fronts.py); the measure the file names (Sudoku's solve rate
    by default; the antibody oracles' PLL)."""
    path = need(path or R / "sudoku" / "fronts.json", how)
    f = json.loads(path.read_text())
    key = f.get("metric", "solved")
    name, val, dif = MEASURES[key]
    fams = sorted({fam for cell in f["at"].values() for fam in cell["vs"]})
    xs = list(f["at"])
    # one row a front (a table as wide as the pass counts, however many samplers there are)
    cols = ["front", *(f"{name} at {x} passes (difference, 90 % CI)" for x in xs)]
    method = [f"**{f['method']}**"]
    method += ["" if f["at"][x]["method"] is None else f"**{val(f['at'][x]['method'])}**" for x in xs]

    def cell(v):
        return "" if v is None else f"{val(v[key])} ({dif(v['diff'])}, {dif(v['ci90'][0])} .. {dif(v['ci90'][1])})"

    fronts = [method] + [[fam, *(cell(f["at"][x]["vs"].get(fam)) for x in xs)] for fam in fams]
    out = md_table(cols, fronts)
    if not (f.get("points") or f.get("outside")):
        return out
    cols = ["sampler run at one setting (or beyond the front)", "its passes", f"its {name}",
            f"{f['method']} at those passes", "difference (90 % CI)"]  # fmt: skip
    points = [[fam, f"{v['passes']:.1f}", val(v[key]), val(v["method"]),
               f"{dif(v['diff'])} ({dif(v['ci90'][0])} .. {dif(v['ci90'][1])})"]
              for fam, v in f.get("points", {}).items()]  # fmt: skip
    for fam, v in f.get("outside", {}).items():  # no pass count in common with the MI front
        best = v["method_best_at_fewer_passes"]
        points.append([f"{fam} (beyond the {f['method']} front)", ", ".join(f"{p:.1f}" for p, _ in v["points"]),
                       ", ".join(val(s) for _, s in v["points"]),
                       "" if best is None else f"{val(best)} in fewer passes", ""])  # fmt: skip
    return out + "\n\n" + md_table(cols, points)


def mi_report_table(path) -> str:
    rep = json.loads(Path(path).read_text())
    lat = latency()
    rows = [
        ("Pearson, head vs ground truth", f"**{rep['pearson']:.3f}**", ">= 0.9"),
        ("Spearman", f"{rep['spearman']:.3f}", ""),
        ("mean absolute error (nats)", f"{rep['mae']:.4f}", ""),
        ("top-pair recall", f"{rep['top_pair_recall']:.3f}", ""),
        (
            "structure AUROC, all masked pairs: ground truth / head",
            f"{rep['auroc_structure_gt']:.3f} / {rep['auroc_structure_est']:.3f}",
            ">= 0.95 (missed by the truth itself)",
        ),
    ]
    if "auroc_structure_gt_uncertain" in rep:
        rows.append(
            (
                f"... pairs of two uncertain cells (both H > {rep['uncertain_nats']} nats; "
                f"{rep['n_pairs_uncertain']:,} pairs)",
                f"{rep['auroc_structure_gt_uncertain']:.3f} / {rep['auroc_structure_est_uncertain']:.3f}",
                "",
            )
        )
    for ratio, v in (rep.get("structure_by_mask_ratio") or {}).items():
        rows.append(
            (
                f"... masked solutions, {float(ratio):.0%} of cells masked ({v['n_pairs']:,} pairs)",
                f"{v['auroc_gt']:.3f} / {v['auroc_est']:.3f}",
                ">= 0.95" if ratio == "0.9" else "",
            )
        )
    rows += [
        ("asymmetry mean / 99th percentile (nats)", f"{rep['asymmetry_mean']:.3f} / {rep['asymmetry_p99']:.3f}", ""),
        (
            "agreement of the truth's two directions, I(i->j) vs I(j->i) (Pearson)",
            f"{rep['gt_directional_pearson']:.3f}",
            "",
        ),
        (
            f"ground truth: passes / seconds per state (eps {rep['eps']:g}, {rep['torch_threads']} threads)",
            f"{rep['gt_passes_per_state']:.1f} / {rep['gt_seconds_per_state']:.2f}",
            "<= 1 s",
        ),
    ]
    if lat:
        rows.append(
            (
                "head: share of a pass at batch 1 / at the decoding batch of 64 (`results/latency.txt`)",
                f"{100 * lat['head_over_forward']:.1f} % / {100 * lat['head_over_forward_batch']:.1f} %",
                "<= 10 %",
            )
        )
    return metric_table(rows)


def mi_short_table(path=None) -> str:
    """The README's MI-fidelity extract (the full table: docs/results-sudoku.md)."""
    rep = json.loads(Path(path or R / "sudoku" / "mi_report.json").read_text())
    lat, by = latency(), rep.get("structure_by_mask_ratio", {})
    auroc = "{auroc_gt:.3f} / {auroc_est:.3f}".format
    gt = "{gt_passes_per_state:.1f} / {gt_seconds_per_state:.2f}".format(**rep)
    rows = [
        ("Pearson / Spearman, head vs ground truth", f"**{rep['pearson']:.3f}** / {rep['spearman']:.3f}", ">= 0.9"),
        ("structure AUROC, decode states: truth / head", auroc(**_prefixed(rep, "auroc_structure_")), ">= 0.95"),
    ]
    rows += [("... 90 %-masked valid boards: truth / head", auroc(**by["0.9"]), ">= 0.95")] if "0.9" in by else []
    rows += [("ground truth: passes / seconds per state", gt, "<= 1 s")]
    if lat:
        share = f"{100 * lat['head_over_forward']:.1f} % / {100 * lat['head_over_forward_batch']:.1f} %"
        rows += [("head: share of a pass at batch 1 / 64 (`results/latency.txt`)", share, "<= 10 %")]
    return metric_table(rows)


def _prefixed(rep: dict, prefix: str) -> dict:
    """{'auroc_gt': rep[prefix + 'gt'], 'auroc_est': rep[prefix + 'est']}: the keys `auroc` formats."""
    return {"auroc_gt": rep[prefix + "gt"], "auroc_est": rep[prefix + "est"]}


def metric_table(rows, first: str = "metric") -> str:
    """(metric, measured, target) rows as the README's three-column table."""
    return markdown(pd.DataFrame(rows, columns=[first, "measured", "target"]))


def latency() -> dict | None:
    p = R / "latency.txt"
    if not p.exists():
        return None
    return json.loads(p.read_text().strip().splitlines()[-1])


def latency_table() -> str:
    lat = latency()
    if lat is None:
        return "(no results/latency.txt yet: `make results`)"
    rows = [
        ("one MDM forward pass (1 board)", f"{lat['forward_ms']:.2f} ms", ""),
        (
            f"MI head on that pass ({lat['gt_mid_decode_masked_median']:.0f} masked cells), "
            "given the sampler's marginals",
            f"{lat['head_ms']:.2f} ms ({100 * lat['head_over_forward']:.1f} % of the pass; eager: "
            f"{100 * lat['head_over_forward_eager']:.1f} %)",
            "<= 10 %",
        ),
        (
            f"the same at the decoding batch of {lat['batch']} states",
            f"{lat['head_ms_batch']:.1f} ms / {lat['forward_ms_batch']:.1f} ms "
            f"({100 * lat['head_over_forward_batch']:.1f} %)",
            "<= 10 %",
        ),
        ("one decode step with estimated MI (pass + head + selection)", f"{lat['decode_step_mi_ms']:.1f} ms", ""),
        (
            "ground truth for a mid-decode state",
            f"{lat['gt_mid_decode_seconds_median']:.3f} s, {lat['gt_mid_decode_passes_median']:.0f} passes",
            "<= 1 s",
        ),
    ]
    if "app_decode_page_rerun_seconds_median" in lat:  # stepping runs in the browser (docs/app.md)
        rows.append(("app: the decode page rerun, its decode cached (AppTest)",
                     f"{lat['app_decode_page_rerun_seconds_median']:.2f} s", ""))  # fmt: skip
    if "app_step_render_seconds_median" in lat:  # a file written while the app still had a server step view
        rows += [
            ("app, the server step view (since removed): one click on Step, the page rerun (AppTest)",
             f"{lat['app_step_render_seconds_median']:.2f} s", ""),
            ("app, the server step view: ground-truth MI switched on for that step",
             f"{lat['app_ground_truth_seconds']:.2f} s", ""),
        ]  # fmt: skip
    return metric_table(rows, "what")


def headline_table() -> str:
    """The README's Table 1 extract: the paper's rows and ours beside them."""
    keep = [
        "sequential",
        "topk k=4",
        "eb gamma=0.2",
        *(lab for p in PAPER_TABLE1 for lab in p["ours"]),  # every paper setting as run here
        *sorted(DEFAULTS),  # every sampler at its validation choice
        config_for("mi-gt", SUDOKU_DEFAULTS).label(),
    ]
    # Table 1's sweep, and DEMASK's test rows (make sudoku-demask) on the same 1,000 puzzles
    dirs = [
        d for d in (R / "sudoku" / "test_hard", R / "sudoku" / "demask" / "test_hard") if (d / "sweep.csv").exists()
    ]
    table = sweep_table(dirs, paper=True, wall=False, only=set(keep))
    missing = [lab for lab in dict.fromkeys(keep) if lab not in {label(r) for _, r in sweep_rows(dirs)}]
    if missing:  # a default or a paper setting with no committed row is said, not dropped
        cols = table.splitlines()[0].count("|") - 1
        table += "\n" + "\n".join(f"| {lab} | not run yet (`make results`) |" + " |" * (cols - 2) for lab in missing)
    return table


# the generated blocks this module writes (`<!-- tables:NAME -->`), gathered by benchmarks/tables/__init__.py
BLOCKS = {
    "headline": headline_table,
    "table1": lambda: sweep_table([R / "sudoku" / "test_hard"], paper=True),
    "matched": lambda: matched_passes(R / "sudoku" / "test_hard" / "sweep.csv"),
    "fronts": fronts_table,
    "kaggle_fronts": lambda: fronts_table(R / "sudoku" / "kaggle_fronts.json"),
    "kaggle": lambda: sweep_table([R / "sudoku" / "kaggle"]),
    "mi_report": lambda: mi_report_table(R / "sudoku" / "mi_report.json"),
    "mi_short": mi_short_table,
    "latency": latency_table,
}
