"""The results tables of the README and docs/, made from the committed files under results/.

    python -m benchmarks.tables            # print every table
    python -m benchmarks.tables --write    # rewrite the generated blocks of README.md and docs/*.md
    python -m benchmarks.tables --check    # exit 1 if a block differs from what the files give (CI)

A generated block sits between `<!-- tables:NAME -->` and `<!-- /tables -->`; the prose around
it is written by hand, the numbers inside it never are, so they cannot drift from results/.
"""

from __future__ import annotations

import argparse
import csv
import functools
import json
import re
import sys
from pathlib import Path

from mi_viz.core.plots import sweep_family  # the same curve grouping as the sweep plots
from mi_viz.core.samplers import config_for, row_label
from mi_viz.domains.protein import DOMAIN as PROTEIN
from mi_viz.domains.protein import PAPER_TABLE2 as PROTEIN_PAPER_TABLE2
from mi_viz.domains.sudoku import DOMAIN as SUDOKU
from mi_viz.domains.sudoku import PAPER_TABLE1

SUDOKU_DEFAULTS = SUDOKU.sampler_defaults

ROOT = Path(__file__).resolve().parents[1]
R = ROOT / "results"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PAPER = {  # our row's label -> the paper's passes / solved beside it
    lab: f"{p['avg_passes']} / {100 * p['solved_frac']:.1f} %"
    + ("" if p["method"] == lab else f" (paper: {p['method']})")
    for p in PAPER_TABLE1
    for lab in p["ours"]
}
# the Sudoku defaults, from the domain (each sampler's validation choice; mi-gt is the oracle)
DEFAULTS = {config_for(name, SUDOKU_DEFAULTS).label() for name in SUDOKU_DEFAULTS if name != "mi-gt"}


def rows_of(path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


label = row_label  # the library's: every table labels a row as a SamplerConfig would


def sweep_table(path, paper=False, wall=True, only=None) -> str:
    rows = [r for r in rows_of(path) if only is None or label(r) in only]
    oracle = any(r.get("avg_oracle_passes") for r in rows)  # a column only where an oracle row exists
    head = "| sampler | avg passes | solved |" + (" oracle passes / puzzle |" if oracle else "")
    head += (" wall (s) / CPU threads |" if wall else "") + (" paper: passes / solved |" if paper else "")
    out = [head, "|" + "---|" * (3 + oracle + wall + paper)]
    for r in rows:
        lab = label(r)
        name = (
            f"**{lab} (default)**"
            if lab in DEFAULTS
            else f"**{lab} (oracle ceiling)**"
            if r["sampler"] == "mi-gt"
            else lab
        )
        line = f"| {name} | {float(r['avg_passes']):.1f} | {100 * float(r['solved_frac']):.1f} % |"
        if oracle:
            line += f" {float(r['avg_oracle_passes']):.1f} |" if r.get("avg_oracle_passes") else " |"
        if wall:
            line += f" {float(r['seconds']):.0f} / {r.get('threads') or '?'} |"
        if paper:
            line += f" {PAPER.get(lab, '')} |"
        out.append(line)
    return "\n".join(out)


def interpolate(points, x):
    """Solve rate of a curve [(passes, solved)] at `x` passes, linear between its points; None outside."""
    pts = sorted(points)
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if x0 <= x <= x1:
            return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return None


def matched_passes(path, method="mi lam=10", against=("eb", "mi-zero", "topk", "mi-pairs lam=0.25")) -> str:
    """Each `method` row against the other curves at the same average passes (linear
    interpolation along their points; blank where the row lies outside a curve)."""
    rows = rows_of(path)
    curves: dict[str, list] = {}
    for r in rows:
        curves.setdefault(sweep_family(r), []).append((float(r["avg_passes"]), 100 * float(r["solved_frac"])))
    out = [
        f"| {method} row | passes | solved | " + " | ".join(f"{a} at same passes" for a in against) + " |",
        "|" + "---|" * (3 + len(against)),
    ]
    for r in sorted((r for r in rows if sweep_family(r) == method), key=lambda r: -float(r["avg_passes"])):
        x, y = float(r["avg_passes"]), 100 * float(r["solved_frac"])
        cells = []
        for a in against:
            v = interpolate(curves.get(a, []), x)
            cells.append("" if v is None else f"{v:.1f} % ({y - v:+.1f})")
        out.append(f"| {label(r)} | {x:.1f} | {y:.1f} % | " + " | ".join(cells) + " |")
    return "\n".join(out)


def fronts_table(path=None) -> str:
    """Every sampler front against the MI rule's at matched passes, with paired bootstrap intervals
    (results/sudoku/fronts.json, benchmarks/sudoku_fronts.py)."""
    path = Path(path or R / "sudoku" / "fronts.json")
    if not path.exists():
        return f"(no {path.relative_to(ROOT)} yet: `python -m benchmarks.sudoku_fronts --out {path.relative_to(ROOT)}`)"
    f = json.loads(path.read_text())
    fams = sorted({fam for cell in f["at"].values() for fam in cell["vs"]})
    xs = list(f["at"])
    # one row a front (a table as wide as the pass counts, however many samplers there are)
    out = [
        "| front | " + " | ".join(f"solves at {x} passes (difference, 90 % CI)" for x in xs) + " |",
        "|---|" + "---|" * len(xs),
        f"| **{f['method']}** | "
        + " | ".join("" if f["at"][x]["method"] is None else f"**{f['at'][x]['method']:.1f} %**" for x in xs)
        + " |",
    ]

    def cell(v):
        return (
            "" if v is None else f"{v['solved']:.1f} % ({v['diff']:+.1f}, {v['ci90'][0]:+.1f} .. {v['ci90'][1]:+.1f})"
        )

    for fam in fams:
        out.append(f"| {fam} | " + " | ".join(cell(f["at"][x]["vs"].get(fam)) for x in xs) + " |")
    if f.get("points") or f.get("outside"):
        out += [
            "",
            f"| sampler run at one setting (or beyond the front) | its passes | its solves | {f['method']} at those "
            "passes | difference (90 % CI) |",
            "|---|---|---|---|---|",
        ]
        for fam, v in f.get("points", {}).items():
            out.append(
                f"| {fam} | {v['passes']:.1f} | {v['solved']:.1f} % | {v['method']:.1f} % | "
                f"{v['diff']:+.1f} ({v['ci90'][0]:+.1f} .. {v['ci90'][1]:+.1f}) |"
            )
    for fam, v in f.get("outside", {}).items():  # no pass count in common with the MI front
        best = v["method_best_at_fewer_passes"]
        out.append(
            f"| {fam} (beyond the {f['method']} front) | "
            + ", ".join(f"{p:.1f}" for p, _ in v["points"])
            + " | "
            + ", ".join(f"{s:.1f} %" for _, s in v["points"])
            + f" | {'' if best is None else f'{best:.1f} % in fewer passes'} | |"
        )
    return "\n".join(out)


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
    rows = [
        ("Pearson / Spearman, head vs ground truth", f"**{rep['pearson']:.3f}** / {rep['spearman']:.3f}", ">= 0.9"),
        (
            "structure AUROC, decode states: truth / head",
            f"{rep['auroc_structure_gt']:.3f} / {rep['auroc_structure_est']:.3f}",
            ">= 0.95",
        ),
    ]
    if "0.9" in by:
        rows.append(
            (
                "... 90 %-masked valid boards: truth / head",
                f"{by['0.9']['auroc_gt']:.3f} / {by['0.9']['auroc_est']:.3f}",
                ">= 0.95",
            )
        )
    rows.append(
        (
            "ground truth: passes / seconds per state",
            f"{rep['gt_passes_per_state']:.1f} / {rep['gt_seconds_per_state']:.2f}",
            "<= 1 s",
        )
    )
    if lat:
        rows.append(
            (
                "head: share of a pass at batch 1 / 64 (`results/latency.txt`)",
                f"{100 * lat['head_over_forward']:.1f} % / {100 * lat['head_over_forward_batch']:.1f} %",
                "<= 10 %",
            )
        )
    return metric_table(rows)


def metric_table(rows) -> str:
    """(metric, measured, target) rows as the README's three-column table."""
    return "\n".join(["| metric | measured | target |", "|---|---|---|"] + [f"| {a} | {b} | {c} |" for a, b, c in rows])


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
    if "app_step_render_seconds_median" in lat:
        rows += [
            (
                "app, server view: one click on Step, the page rerun (AppTest)",
                f"{lat['app_step_render_seconds_median']:.2f} s",
                "",
            ),
            ("app: ground-truth MI switched on for that step", f"{lat['app_ground_truth_seconds']:.2f} s", ""),
        ]
    return "\n".join(["| what | measured | target |", "|---|---|---|"] + [f"| {a} | {b} | {c} |" for a, b, c in rows])


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
    path = R / "sudoku" / "test_hard" / "sweep.csv"
    table = sweep_table(path, paper=True, wall=False, only=set(keep))
    missing = [lab for lab in dict.fromkeys(keep) if lab not in {label(r) for r in rows_of(path)}]
    if missing:  # a default or a paper setting with no committed row is said, not dropped
        cols = table.splitlines()[0].count("|") - 1
        table += "\n" + "\n".join(f"| {lab} | not run yet (`make results`) |" + " |" * (cols - 2) for lab in missing)
    return table


PAPER_TABLE2 = {  # our row's label -> the paper's passes / JSD
    lab: f"{p['avg_passes']} / {p['jsd']}" for p in PROTEIN_PAPER_TABLE2 for lab in p["ours"]
}
PROTEIN_COLS = (
    "jsd",
    "jsd_unirep",
    "composition_jsd",
    "frechet",
    "distinct_3mers",
    "longest_run_mean",
    "low_complexity_share",
)


def fmt(v, col: str) -> str:
    if v in (None, ""):
        return ""
    return f"{float(v):.2f}" if col.startswith("frechet") else f"{float(v):.3f}"


def protein_choice() -> dict[str, str]:
    """sampler -> label of its default row: the domain's sampler_defaults (the validation choice of
    results/protein/val_sweep/choice.json, made under rule 3: mi-pairs is that choice as run;
    tests/test_protein.py checks the two agree)."""
    if not (R / "protein" / "val_sweep" / "choice.json").exists():
        return {}
    return {n: config_for(n, PROTEIN.sampler_defaults).label() for n in ("eb", "mi", "mi-tc", "mi-zero", "mi-pairs")}


def protein_label(r, chosen: dict) -> str:
    lab = label(r)
    return f"**{lab} (default)**" if chosen.get(r["sampler"]) == lab else lab


def protein_rows(path, short: bool) -> list[dict]:
    """Table 2's rows; short (the README): sequential, top-k, the paper's MI settings, mi-gt and
    the validation-chosen EB / MI / mi-zero rows (the rest are in docs/results-protein.md)."""
    rows, chosen = rows_of(path), protein_choice()
    if not short:
        return rows
    paper = set(PAPER_TABLE2)  # the settings the paper's Table 2 reports, as run here
    keep = lambda r: (  # noqa: E731
        r["sampler"] in ("sequential", "topk", "mi-gt")
        or label(r) in paper
        or (r["sampler"] != "mi-tc" and chosen.get(r["sampler"]) == label(r))
    )
    return [r for r in rows if keep(r)]


def protein_table(path=None, floor=None) -> str:
    """Table 2 as run here: one row per setting (500 proteins, lengths 50-100) with every metric
    against the test reference, the natural-vs-natural floor, and the paper's rows beside."""
    path = Path(path or R / "protein" / "table2" / "sweep.csv")
    floor = Path(floor or R / "protein" / "floor.json")
    if not path.exists():
        return f"(no {path.relative_to(ROOT)} yet: `make protein-results`)"
    head = (
        "| sampler | avg passes | k-means JSD (bits) | the same, UniRep | composition JSD | Frechet | "
        "distinct 3-mers | longest run | low-complexity share | paper: passes / JSD |"
    )
    out = [head, "|" + "---|" * 10]
    if floor.exists():
        f = json.loads(floor.read_text())["natural_test_b"]
        out.append(
            "| *natural vs natural (the floor)* | | "
            + " | ".join(f"{f[c]:.3f}" if c != "frechet" else f"{f[c]:.2f}" for c in PROTEIN_COLS)
            + " | |"
        )
    chosen = protein_choice()
    for r in protein_rows(path, short=False):
        cells = [fmt(r.get(c), c) for c in PROTEIN_COLS]
        out.append(
            f"| {protein_label(r, chosen)} | {float(r['avg_passes']):.1f} | "
            + " | ".join(cells)
            + f" | {PAPER_TABLE2.get(label(r), '')} |"
        )
    return "\n".join(out)


def protein_table_short(path=None, floor=None) -> str:
    """The README's Table 2: passes and the two JSDs, the floor and the paper beside."""
    path = Path(path or R / "protein" / "table2" / "sweep.csv")
    floor = Path(floor or R / "protein" / "floor.json")
    if not path.exists():
        return f"(no {path.relative_to(ROOT)} yet: `make protein-results`)"
    out = [
        "| sampler | avg passes | k-means JSD to natural (bits) | the same, UniRep embeddings | paper: passes / JSD |",
        "|---|---|---|---|---|",
    ]
    if floor.exists():
        f = json.loads(floor.read_text())["natural_test_b"]
        out.append(
            f"| *natural vs natural (the floor)* | | {fmt(f['jsd'], 'jsd')} | {fmt(f.get('jsd_unirep'), 'jsd')} | |"
        )
    chosen = protein_choice()
    for r in protein_rows(path, short=True):
        out.append(
            f"| {protein_label(r, chosen)} | {float(r['avg_passes']):.1f} | {fmt(r['jsd'], 'jsd')} "
            f"| {fmt(r.get('jsd_unirep'), 'jsd')} | {PAPER_TABLE2.get(label(r), '')} |"
        )
    return "\n".join(out)


def protein_oracle_table(path=None) -> str:
    """The exact-MI oracle (mi-gt) beside the head (mi) and sequential on the first 50 of the 500
    lengths: passes, the oracle's extra passes, and the metrics (noisy at n = 50)."""
    path = Path(path or R / "protein" / "table2_gt_subset" / "sweep.csv")
    if not path.exists():
        return f"(no {path.relative_to(ROOT)} yet: `make protein-mi-results`)"
    out = [
        "| sampler (50 proteins) | avg passes | oracle passes / protein | k-means JSD | UniRep JSD | composition JSD |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows_of(path):
        o = f"{float(r['avg_oracle_passes']):,.0f}" if r.get("avg_oracle_passes") else ""
        out.append(
            f"| {label(r)} | {float(r['avg_passes']):.1f} | {o} | {fmt(r['jsd'], 'jsd')} | "
            f"{fmt(r.get('jsd_unirep'), 'jsd')} | {fmt(r['composition_jsd'], 'jsd')} |"
        )
    return "\n".join(out)


def protein_backbones_table(path=None) -> str:
    path = Path(path or R / "protein" / "backbones.json")
    if not path.exists():
        return f"(no {path.relative_to(ROOT)} yet: `make protein-results`)"
    b = json.loads(path.read_text())
    sets = list(b["unigram_ppl"])
    out = [
        "| backbone | parameters | " + " | ".join(f"{s}: MDM loss / pseudo-ppl (15 %)" for s in sets) + " |",
        "|---|---|" + "---|" * len(sets),
        "| amino-acid unigram (training split) | 19 | "
        + " | ".join(f"/ {b['unigram_ppl'][s]:.2f}" for s in sets)
        + " |",
    ]
    for name, v in b["backbones"].items():
        if not v.get("available"):
            out.append(f"| {name} | absent on this machine | " + " | ".join("" for _ in sets) + " |")
            continue
        out.append(
            f"| {name} | {v['parameters']:,} | "
            + " | ".join(f"{v[s]['mdm_loss']:.3f} / {v[s]['pseudo_ppl_15']:.2f}" for s in sets)
            + " |"
        )
    return "\n".join(out)


def protein_mi_short_table() -> str:
    """The README's extract of protein_mi_table: fidelity, and the step's latency."""
    rows = protein_mi_rows()
    if isinstance(rows, str):
        return rows
    return metric_table(rows[k] for k in ("pearson", "directional", "step") if k in rows)


def protein_mi_table(path=None, lat_path=None) -> str:
    """The protein head against the ground truth on held-out states (results/protein/mi_report.json)
    and one decode step's latency (results/protein/latency.txt)."""
    rows = protein_mi_rows(path, lat_path)
    return rows if isinstance(rows, str) else metric_table(rows.values())


def protein_mi_rows(path=None, lat_path=None) -> dict | str:
    """{name: (metric, measured, target)} of protein_mi_table, or why there is none yet."""
    path = Path(path or R / "protein" / "mi_report.json")
    lat_path = Path(lat_path or R / "protein" / "latency.txt")
    if not path.exists():
        return f"(no {path.relative_to(ROOT)} yet: `make protein-mi-results`)"
    rep = json.loads(path.read_text())
    rows = {
        "pearson": (
            f"Pearson / Spearman, head vs ground truth ({rep['n_states']} held-out states, {rep['n_pairs']:,} pairs)",
            f"**{rep['pearson']:.3f}** / {rep['spearman']:.3f}",
            ">= 0.9 (Sudoku's)",
        ),
        "recall": ("top-pair recall", f"{rep['top_pair_recall']:.3f}", ""),
        "directional": ("the truth's two directions agree (Pearson)", f"{rep['gt_directional_pearson']:.3f}", ""),
        "gt": (
            "ground truth: passes / seconds per state",
            f"{rep['gt_passes_per_state']:.0f} / {rep['gt_seconds_per_state']:.1f}",
            "",
        ),
    }
    lines = lat_path.read_text().strip().splitlines() if lat_path.exists() else []
    if lines and lines[-1].startswith("{"):
        lat = json.loads(lines[-1])
        rows["step"] = (
            f"one `mi` decode step, length {lat['length']} ({lat['masked']} masked), {lat['threads']} threads "
            f"(`results/protein/latency.txt`)",
            f"{lat['decode_step_mi_ms']:.0f} ms (a pass {lat['forward_ms']:.0f} ms, the head "
            f"{100 * lat['head_over_forward']:.0f} % of it)",
            "< 1 s",
        )
        rows["step_gt"] = (
            "ground truth of that state",
            f"{lat['ground_truth_passes']:,} passes, {lat['ground_truth_seconds']:.1f} s",
            "",
        )
    return rows


def protein_head_baselines_table(path=None) -> str:
    """The protein head beside two trivial baselines on the same held-out pairs, and the truth under
    shuffled residues (results/protein/head_baselines.json, benchmarks/protein_head_baselines.py)."""
    path = Path(path or R / "protein" / "head_baselines.json")
    if not path.exists():
        return f"(no {path.relative_to(ROOT)} yet: `python -m benchmarks.protein_head_baselines`)"
    r = json.loads(path.read_text())
    out = [
        f"| predictor ({r['eval_states']} held-out states, {r['eval_pairs']:,} pairs) | pooled Pearson | "
        "within-state Pearson |",
        "|---|---|---|",
    ]
    for key, name in (
        ("head", "the shipped head"),
        ("separation", "separation |i - j| only"),
        ("separation_entropies", "separation + the two entropies"),
    ):
        out.append(f"| {name} | {r[f'pearson_{key}']:.3f} | {r[f'within_state_pearson_{key}']:.3f} |")
    c = r["shuffled_control"]
    out.append(
        f"| *the truth, {c['proteins']} test proteins half masked: mean MI natural / residues shuffled* | "
        f"{c['mean_mi_natural']:.5f} / {c['mean_mi_shuffled']:.5f} nats | neighbours "
        f"{c['mean_mi_natural_neighbours']:.4f} / {c['mean_mi_shuffled_neighbours']:.4f} |"
    )
    return "\n".join(out)


def protein_separation_table(path=None) -> str:
    """Mean MI by sequence separation |i - j|, truth and head: local against long-range dependence."""
    path = Path(path or R / "protein" / "mi_report.json")
    if not path.exists():
        return f"(no {path.relative_to(ROOT)} yet: `make protein-mi-results`)"
    rep = json.loads(path.read_text())
    out = [
        "| separation \\|i - j\\| | pairs | mean MI, truth (nats) | mean MI, head | Pearson within the bin |",
        "|---|---|---|---|---|",
    ]
    for b in rep["separation"]:
        r = "" if b.get("pearson") is None else f"{b['pearson']:.3f}"
        out.append(f"| {b['separation']} | {b['n_pairs']:,} | {b['mean_gt']:.4f} | {b['mean_est']:.4f} | {r} |")
    return "\n".join(out)


# --------------------------------------------------------------------------- protein families

FAMILIES = ("PF00595", "PF00076", "PF00072")
CONTACT_SCORES = (
    ("truth", "the backbone's conditional MI (APC)"),
    ("truth_raw", "... without APC"),
    ("head", "the MI head (APC)"),
    ("mip", "MIp"),
    ("potts", "Potts (plmDCA-style)"),
)


def _family_json(fam: str, name: str) -> dict | None:
    p = R / "family" / fam / name
    return json.loads(p.read_text()) if p.exists() else None


def family_contacts_table() -> str:
    """The README's contact table: top-L/5 precision of every score, one row per shipped family."""
    out = [
        "| family | mapped columns L | base rate | backbone's conditional MI | MI head | MIp | Potts |",
        "|---|---|---|---|---|---|---|",
    ]
    for fam in FAMILIES:
        c = _family_json(fam, "contacts.json")
        if c is None:
            out.append(f"| {fam} | (no results/family/{fam}/contacts.json yet: `make family-results`) | | | | | |")
            continue
        cell = {
            k: "" if c.get(f"precision_L5_{k}") is None else f"{c[f'precision_L5_{k}']:.2f}" for k, _ in CONTACT_SCORES
        }
        out.append(
            f"| {fam} | {c['mapped_columns']} | {c['base_rate']:.2f} | **{cell['truth']}** | {cell['head']} | "
            f"{cell['mip']} | {cell['potts']} |"
        )
    return "\n".join(out)


def family_contacts_full_table() -> str:
    """Every contact score of every family: top-L/5, top-L/2, AUROC."""
    out = ["| family | score | top-L/5 | top-L/2 | AUROC |", "|---|---|---|---|---|"]
    for fam in FAMILIES:
        c = _family_json(fam, "contacts.json")
        if c is None:
            continue
        for k, name in CONTACT_SCORES:
            if c.get(f"precision_L5_{k}") is None:
                continue
            p5, p2, au = c[f"precision_L5_{k}"], c[f"precision_L2_{k}"], c[f"auroc_{k}"]
            out.append(f"| {fam} | {name} | {p5:.3f} | {p2:.3f} | {au:.3f} |")
        out.append(
            f"| {fam} | *how* | {c['rows']} held-out rows x {c['masks_per_row']} masks of {100 * c['frac']:.0f} % | "
            f"{c['truth_passes']:,} passes | {c['seconds']:.0f} s |"
        )
    return "\n".join(out)


CLASS_PREDICTORS = (  # results/family/NAME/contact_classes.json's predictors, by what a reader calls them
    ("truth", "conditional MI"),
    ("head", "MI head"),
    ("jacobian_rows", "Jacobian, held-out rows"),
    ("jacobian_consensus", "Jacobian, consensus row"),
    ("mip", "MIp"),
    ("potts", "Potts (ours)"),
    ("ardca", "arDCA"),
)


def family_contact_classes_table() -> str:
    """Long-range top-L and all-pairs top-L/5 precision of every predictor, by the field's separation
    classes (benchmarks/family_contact_classes.py)."""
    rows = {fam: _family_json(fam, "contact_classes.json") for fam in FAMILIES}
    have = [k for k, _ in CLASS_PREDICTORS if any(r and k in r["predictors"] for r in rows.values())]
    names = dict(CLASS_PREDICTORS)
    out = [
        "| family | L | long-range contacts | "
        + " | ".join(f"{names[k]}: long top-L / all top-L/5" for k in have)
        + " |",
        "|---|---|---|" + "---|" * len(have),
    ]
    for fam, r in rows.items():
        if r is None:
            out.append(f"| {fam} | (no contact_classes.json yet: `python -m benchmarks.family_contact_classes`) |")
            continue
        p = r["predictors"]
        cells = [f"{p[k]['precision_long_L']:.2f} / {p[k]['precision_all_L5']:.2f}" if k in p else "" for k in have]
        any_p = next(iter(p.values()))
        out.append(f"| {fam} | {r['mapped_columns']} | {any_p['contacts_long']} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def family_anchors_table() -> str:
    """arDCA's 200 members beside the MDM's sequential decode, by the same pair statistics against the
    same held-out rows (results/family/NAME/contact_classes.json, sweep.csv)."""
    out = [
        "| family | arDCA: pair-correlation Pearson (90 % interval) | its fit / 200 members | "
        "MDM sequential: Pearson (interval), passes | MDM sequential minus arDCA |",
        "|---|---|---|---|---|",
    ]
    for fam in FAMILIES:
        r = _family_json(fam, "contact_classes.json")
        if r is None or "ardca" not in r:
            continue
        a = r["ardca"]
        seq = next((x for x in rows_of(R / "family" / fam / "sweep.csv") if x["sampler"] == "sequential"), None)
        if seq is None:
            continue
        diff = float(seq["pair_corr_pearson"]) - a["pair_corr_pearson"]
        lo, hi = a["pair_corr_ci90"]
        slo, shi = json.loads(seq["pair_corr_ci90"])
        out.append(
            f"| {fam} | {a['pair_corr_pearson']:.3f} ({lo:.3f} .. {hi:.3f}) | {a['fit_seconds']:.0f} s / "
            f"{a['sample_seconds']:.2f} s | {float(seq['pair_corr_pearson']):.3f} ({slo:.3f} .. {shi:.3f}), "
            f"{float(seq['avg_passes']):.0f} | {diff:+.3f} |"
        )
    return "\n".join(out)


def family_head_table() -> str:
    """The family heads against the truth on held-out rows, beside the two trivial baselines."""
    out = [
        "| family | states / pairs | head: pooled / within-state Pearson | separation only | "
        "separation + entropies | passes of the truth per state |",
        "|---|---|---|---|---|---|",
    ]
    for fam in FAMILIES:
        r = _family_json(fam, "mi_report.json")
        if r is None:
            continue
        b = r["baselines"]
        pw = {
            k: f"{b[f'pearson_{k}']:.3f} / {b[f'within_state_pearson_{k}']:.3f}"
            for k in ("head", "separation", "separation_entropies")
        }
        out.append(
            f"| {fam} | {b['eval_states']} / {b['eval_pairs']:,} | **{pw['head']}** | {pw['separation']} | "
            f"{pw['separation_entropies']} | {r['gt_passes_per_state']:.0f} |"
        )
    return "\n".join(out)


def family_pairs_table(fam: str) -> str:
    """One family's pair statistics per sampler setting, the natural-vs-natural floor first."""
    path = R / "family" / fam / "sweep.csv"
    if not path.exists():
        return f"(no {path.relative_to(ROOT)} yet: `make family-results`)"
    out = [
        "| sampler | avg passes | pair-correlation Pearson (+- sd) | column-frequency Pearson | Potts energy: "
        "mean / W1 to natural | identity to the nearest training row |",
        "|---|---|---|---|---|---|",
    ]
    fl = _family_json(fam, "floor.json")
    if fl:
        out.append(
            f"| *natural vs natural ({fl['n']} vs {fl['n']} held-out rows)* | | {fl['pair_corr_pearson']:.3f} | "
            f"{fl['single_freq_pearson']:.3f} | | |"
        )
    for r in rows_of(path):
        e = f"{float(r['mean_energy']):.1f} / {float(r['energy_w1']):.1f}" if r.get("mean_energy") else ""
        out.append(
            f"| {label(r)} | {float(r['avg_passes']):.1f} | {float(r['pair_corr_pearson']):.3f} "
            f"+- {float(r['pair_corr_sd']):.3f} | {float(r['single_freq_pearson']):.3f} | {e} | "
            f"{float(r['nearest_identity_mean']):.3f} |"
        )
    nat = next((r.get("natural_mean_energy") for r in rows_of(path) if r.get("natural_mean_energy")), None)
    if nat:
        out.append(f"| *natural held-out rows: mean Potts energy* | | | | {float(nat):.1f} | |")
    return "\n".join(out)


def lead(diff: float, sd_a: float, sd_b: float, vs: str = "") -> str:
    """A difference of two rows' pair-correlation Pearson with its 90 % interval from their bootstrap
    sds, the rows treated as independent (conservative: the samplers share their seeds)."""
    half = 1.645 * (sd_a**2 + sd_b**2) ** 0.5
    return f"{diff:+.3f} ({diff - half:+.3f} .. {diff + half:+.3f}{f'; vs {vs}' if vs else ''})"


FAMILY_CURVES = ("topk", "eb", "mi-zero", "mi lam=10", "mi-cap k=8 lam=0", "mi-cap k=8")


def family_matched_short_table() -> str:
    """The README's extract of family_matched_table: the entropy-budget samplers and mi-cap beside top-k."""
    return family_matched_table(
        at=(16, 24), curves=("topk", "eb", "mi-zero", "mi lam=10", "mi-cap k=8 lam=0", "mi-cap k=8")
    )


# the MI rules against the samplers they must beat: one column each
# (mi-cap also against its own ablation, the capped entropy budget without MI: mi-cap k=8 lam=0)
FAMILY_LEADS = (
    ("mi lam=10", ("topk", "eb", "mi-zero")),
    ("mi-cap k=8", ("topk", "eb", "mi-zero", "mi-cap k=8 lam=0")),
)


def family_matched_table(at=(12, 16, 24, 32), curves=FAMILY_CURVES, leads=FAMILY_LEADS, sweep="sweep.csv") -> str:
    """Pair-correlation Pearson of every sampler family at the same average passes (linear
    between a curve's points; blank outside it): where MI-guided decoding must show what it
    protects. Last columns: each MI rule's lead over the best of the others at those passes,
    with a 90 % interval from the rows' bootstrap sd (interpolated like the values; the two rows
    treated as independent, which is conservative: the samplers share their seeds)."""
    out = [
        "| family | passes | "
        + " | ".join(curves)
        + " | sequential (all passes) | "
        + " | ".join(f"{m} minus the best of {', '.join(r)} (90 % interval)" for m, r in leads)
        + " |",
        "|---|---|" + "---|" * (len(curves) + 1 + len(leads)),
    ]
    for fam in FAMILIES:
        path = R / "family" / fam / sweep
        if not path.exists():
            continue
        rows = rows_of(path)
        value: dict[str, list] = {}
        spread: dict[str, list] = {}
        for r in rows:
            x = float(r["avg_passes"])
            value.setdefault(sweep_family(r), []).append((x, float(r["pair_corr_pearson"])))
            spread.setdefault(sweep_family(r), []).append((x, float(r["pair_corr_sd"])))
        seq = next((r for r in rows if r["sampler"] == "sequential"), None)
        for x in at:
            at_x = {c: interpolate(v, x) for c, v in value.items()}  # every curve read once at x
            cells = ["" if at_x.get(c) is None else f"{at_x[c]:.3f}" for c in curves]
            s = f"{float(seq['pair_corr_pearson']):.3f} ({float(seq['avg_passes']):.0f})" if seq else ""
            leads_x = []
            for method, rivals in leads:
                m = at_x.get(method)
                best = max(((at_x[c], c) for c in rivals if at_x.get(c) is not None), default=None)
                if m is None or best is None:
                    leads_x.append("")
                    continue
                sds = interpolate(spread[method], x), interpolate(spread[best[1]], x)
                leads_x.append(lead(m - best[0], *sds, vs=best[1]))
            out.append(f"| {fam} | {x} | " + " | ".join(cells) + f" | {s} | " + " | ".join(leads_x) + " |")
    return "\n".join(out)


def family_oracle_table(setting=(4.0, 10.0)) -> str:
    """The MI rule on the backbone's exact MI (mi-gt, the oracle) beside the same rule on the head
    (mi) at one setting, on the test rows: does the head's estimate cost pair statistics? The
    difference's 90 % interval treats the two rows as independent (conservative: shared seeds)."""
    out = [
        "| family | sampler (gamma 4, lambda 10) | avg passes | oracle passes / member | "
        "pair-correlation Pearson (+- sd) | column-frequency Pearson | oracle minus head (90 % interval) |",
        "|---|---|---|---|---|---|---|",
    ]
    for fam in FAMILIES:
        path = R / "family" / fam / "sweep.csv"
        if not path.exists():
            continue
        pick = {
            r["sampler"]: r
            for r in rows_of(path)
            if r["sampler"] in ("mi", "mi-gt") and (float(r["gamma"]), float(r["lam"])) == setting
        }
        if "mi-gt" not in pick:
            out.append(f"| {fam} | (no oracle row yet: `make family-results`) | | | | | |")
            continue
        for name in ("mi", "mi-gt"):
            r = pick.get(name)
            if r is None:
                continue
            o = f"{float(r['avg_oracle_passes']):,.0f}" if r.get("avg_oracle_passes") else ""
            d = ""
            if name == "mi-gt" and "mi" in pick:
                h = pick["mi"]
                diff = float(r["pair_corr_pearson"]) - float(h["pair_corr_pearson"])
                d = lead(diff, float(r["pair_corr_sd"]), float(h["pair_corr_sd"]))
            who = "oracle (exact MI)" if name == "mi-gt" else "MI head"
            out.append(
                f"| {fam} | {who} | {float(r['avg_passes']):.1f} | {o} | "
                f"{float(r['pair_corr_pearson']):.3f} +- {float(r['pair_corr_sd']):.3f} | "
                f"{float(r['single_freq_pearson']):.3f} | {d} |"
            )
    return "\n".join(out)


def family_models_table() -> str:
    """The shipped family backbones: size, data, budget, held-out fit beside the column profile."""
    out = [
        "| checkpoint | parameters (float16) | rows: train / held out (Neff) | budget | held-out pseudo-ppl (15 %) vs "
        "the column profile |",
        "|---|---|---|---|---|",
    ]
    for fam in FAMILIES:
        j = ROOT / "checkpoints" / f"family_{fam}.json"
        if not j.exists():
            continue
        meta = json.loads(j.read_text())
        sp, m, ex = meta["extra"]["split"], meta["metrics"], meta["extra"]
        w = ROOT / "checkpoints" / f"family_{fam}.safetensors"
        out.append(
            f"| `family_{fam}` ({w.stat().st_size / 2**20:.1f} MiB) | ~{n_params(w) / 1e6:.2f} M: ESM-C blocks, d "
            f"{meta['config']['d_model']}, {meta['config']['n_layers']} blocks, column embedding | "
            f"{sp['train_rows']:,} / {sp['heldout_rows']:,} ({sp['neff_train']:,.0f} / {sp['neff_heldout']:,.0f}) | "
            f"kept step {meta['step']:,}, {ex.get('wall_seconds', 0) / 60:.0f} min on 2 CPU cores | "
            f"{m['heldout_pseudo_ppl_15']:.2f} vs {m['profile_pseudo_ppl_15']:.2f} |"
        )
    return "\n".join(out)


# --------------------------------------------------------------------------- models

MODEL_DATA = {  # what each shipped checkpoint was trained on (words); every number comes from its files
    "sudoku_mdm": "100,000 random grids under random Sudoku symmetries",
    "sudoku_mi_head": "7,317 ground-truth states made on the CPU (`make mi-data`)",
    "sudoku_mi_head_baseline": "4,200 GPU-made states (the previous release's head, kept for comparison)",
    "protein_mdm": "Swiss-Prot training split (212,295 proteins)",
    "protein_mi_head": "675 ground-truth states made on the CPU (`data/protein/mi_states.safetensors`)",
}


def n_params(weights: Path) -> int:
    """Parameters of a safetensors file, from its header (no tensor is read); optimizer state excluded."""
    with open(weights, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
    total = 0
    for k, v in header.items():
        if k != "__metadata__" and not k.startswith("opt."):
            size = 1
            for d in v["shape"]:
                size *= d
            total += size
    return total


def _duration(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 5400 else f"{seconds / 60:.0f} min"


def _lineage_seconds(log: Path) -> float | None:
    """Wall seconds of a head trained in chained runs: the last time of each run in its lineage log."""
    if not log.exists():
        return None
    last: dict[str, float] = {}
    for r in rows_of(log):
        last[r.get("run", "")] = float(r["seconds"])
    return sum(last.values())


def models_table() -> str:
    """The README's Models table, from the checkpoints' own files: size, parameters, the kept step,
    training wall time and device, and the held-out figure each recorded."""
    out = [
        "| checkpoint | parameters | data | training | held-out |",
        "|---|---|---|---|---|",
    ]
    for name, data in MODEL_DATA.items():
        j, w = ROOT / "checkpoints" / f"{name}.json", ROOT / "checkpoints" / f"{name}.safetensors"
        if not j.exists():
            continue
        meta = json.loads(j.read_text())
        ex, m = meta.get("extra", {}), meta.get("metrics", {})
        secs = ex.get("wall_seconds") or ex.get("seconds") or 0.0
        lineage = _lineage_seconds(R / f"{name}_log.csv") if name == "sudoku_mi_head" else None
        device = "one GPU" if ex.get("device") == "cuda" else "2 CPU cores"
        train = f"kept step {meta['step']:,}, after {_duration(lineage or secs)} on {device}"
        if lineage:
            train += " (four chained runs: `results/sudoku_mi_head_log.csv`)"
        if "tokens" in ex:
            train += f"; {ex['tokens'] / 1e6:.0f} M residues"
        if "val_pearson" in m:
            held = f"Pearson {m['val_pearson']:.3f} ({ex.get('n_val_states', '?')} held-out states)"
        elif "val_solved" in m:
            held = f"sequential solves {100 * m['val_solved']:.1f} % of the validation puzzles"
        else:
            held = f"pseudo-ppl {m['val_pseudo_ppl_15']:.1f} at 15 % masked"
        size = f"{w.stat().st_size / 2**20:.1f} MiB"
        if ex.get("stored_dtype") == "float16":  # training/ship_float16.py: the figure is the float32 run's
            size += ", float16"
            held += " (training run, float32)"
        out.append(f"| `{name}` ({size}) | {n_params(w):,} | {data} | {train} | {held} |")
    fams = [f for f in FAMILIES if (ROOT / "checkpoints" / f"family_{f}.json").exists()]
    if fams:
        sizes = [(ROOT / "checkpoints" / f"family_{f}.safetensors").stat().st_size / 2**20 for f in fams]
        out.append(
            f"| `family_{'`, `family_'.join(fams)}` ({min(sizes):.1f} MiB each, float16) and their `_mi_head`s | "
            f"{n_params(ROOT / 'checkpoints' / f'family_{fams[0]}.safetensors'):,} ({fams[0]}) | each family's "
            "alignment, 10 % held out by identity groups | about 80 passes over the training rows | "
            "[docs/results-family.md](docs/results-family.md) |"
        )
    return "\n".join(out)


def float16_table(path=None) -> str:
    """What storing the two backbones in float16 changed (benchmarks/float16_storage.py)."""
    path = Path(path or R / "float16_storage.json")
    if not path.exists():
        rel = path.relative_to(ROOT)
        return f"(no {rel} yet: `python -m benchmarks.float16_storage --out {rel}`)"
    f = json.loads(path.read_text())
    out = [
        "| backbone | states (masked positions) | max / mean abs logit change | max abs probability change "
        "| argmax flips |",
        "|---|---|---|---|---|",
    ]
    for name, o in f["outputs"].items():
        out.append(
            f"| {name} | {o['states']} ({o['masked_positions']:,}) | {o['max_abs_logit_diff']:.4f} / "
            f"{o['mean_abs_logit_diff']:.5f} | {o['max_abs_prob_diff']:.4f} | {o['argmax_flips']} |"
        )
    d = f.get("table1_decodes")
    out.append("")
    if d:
        out.append(
            f"Table 1's {len(d['settings'])} settings, {d['decodes']:,} puzzle decodes: {d['changed']:,} changed their "
            f"outcome (solved or passes) against the float32 rows at {f['float32_rev']}; the largest change of a "
            f"solve rate is {d['max_abs_solve_rate_change']:.1f} points."
        )
    t = f.get("table2_resample")
    if t:
        k, u = t["jsd"], t["jsd_unirep"]
        out.append(
            f"Table 2's {k['rows']} rows, every protein in effect sampled again (one flipped draw changes the rest "
            f"of a sequence): the k-means JSD moved by {k['mean_abs_change']:.3f} on average (at most "
            f"{k['max_abs_change']:.3f}), UniRep's by {u['mean_abs_change']:.3f} (at most {u['max_abs_change']:.3f})."
        )
    return "\n".join(out)


BLOCKS = {
    "headline": headline_table,
    "table1": lambda: sweep_table(R / "sudoku" / "test_hard" / "sweep.csv", paper=True),
    "matched": lambda: matched_passes(R / "sudoku" / "test_hard" / "sweep.csv"),
    "fronts": fronts_table,
    "kaggle_fronts": lambda: fronts_table(R / "sudoku" / "kaggle_fronts.json"),
    "kaggle": lambda: sweep_table(R / "sudoku" / "kaggle" / "sweep.csv"),
    "val": lambda: sweep_table(R / "sudoku" / "val_sweep" / "sweep.csv", wall=False),
    "mi_report": lambda: mi_report_table(R / "sudoku" / "mi_report.json"),
    "mi_short": mi_short_table,
    "latency": latency_table,
    "table2": protein_table,
    "table2_short": protein_table_short,
    "protein_backbones": protein_backbones_table,
    "protein_mi": protein_mi_table,
    "table2_oracle": protein_oracle_table,
    "protein_mi_short": protein_mi_short_table,
    "protein_separation": protein_separation_table,
    "protein_head_baselines": protein_head_baselines_table,
    "family_contacts": family_contacts_table,
    "family_contacts_full": family_contacts_full_table,
    "family_contact_classes": family_contact_classes_table,
    "family_anchors": family_anchors_table,
    "family_head": family_head_table,
    "family_matched": family_matched_table,
    "family_matched_short": family_matched_short_table,
    "family_matched_val": lambda: family_matched_table(sweep="val_sweep/sweep.csv"),
    "family_models": family_models_table,
    "family_oracle": family_oracle_table,
    "models": models_table,
    "float16": float16_table,
    **{f"family_pairs_{f}": functools.partial(family_pairs_table, f) for f in FAMILIES},
}
BLOCK = re.compile(r"(<!-- tables:(\w+) -->\n)(.*?)(<!-- /tables -->)", re.S)


def render(text: str) -> str:
    def sub(m):
        if m.group(2) not in BLOCKS:
            raise SystemExit(f"unknown generated block {m.group(2)!r}; known: {sorted(BLOCKS)}")
        return m.group(1) + BLOCKS[m.group(2)]() + "\n" + m.group(4)

    return BLOCK.sub(sub, text)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args(argv)
    if not (a.write or a.check):
        for name, fn in BLOCKS.items():
            print(f"### {name}\n\n{fn()}\n")
        return 0
    stale = []
    for doc in DOCS:
        text = doc.read_text()
        new = render(text)
        if new != text:
            stale.append(str(doc.relative_to(ROOT)))
            if a.write:
                doc.write_text(new)
    if a.check and stale:
        print(f"stale generated tables in {stale}: run `python -m benchmarks.tables --write`", file=sys.stderr)
        return 1
    print(f"{'rewrote' if a.write else 'checked'}: {stale or 'all up to date'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
