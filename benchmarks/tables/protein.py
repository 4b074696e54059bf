"""The protein tables: Table 2 and its extracts, the backbones, the MI report, the head's baselines."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from mi_viz.core.paths import read_text
from mi_viz.core.samplers import config_for
from mi_viz.domains.protein import DOMAIN as PROTEIN
from mi_viz.domains.protein import PAPER_TABLE2

from .common import R, label, markdown, need, rows_of
from .sudoku import metric_table

PAPER_JSD = {  # our row's label -> the paper's passes / JSD
    lab: f"{p['avg_passes']} / {p['jsd']}" for p in PAPER_TABLE2 for lab in p["ours"]
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
    paper = set(PAPER_JSD)  # the settings the paper's Table 2 reports, as run here
    keep = lambda r: (  # noqa: E731
        r["sampler"] in ("sequential", "topk", "mi-gt")
        or label(r) in paper
        or (r["sampler"] != "mi-tc" and chosen.get(r["sampler"]) == label(r))
    )
    return [r for r in rows if keep(r)]


def protein_table(path=None, floor=None) -> str:
    """Table 2 as run here: one row per setting (500 proteins, lengths 50-100) with every metric
    against the test reference, the natural-vs-natural floor, and the paper's rows beside."""
    path = need(path or R / "protein" / "table2" / "sweep.csv", "make protein-results")
    floor = Path(floor or R / "protein" / "floor.json")
    cols = ["sampler", "avg passes", "k-means JSD (bits)", "the same, UniRep", "composition JSD", "Frechet",
            "distinct 3-mers", "longest run", "low-complexity share", "paper: passes / JSD"]  # fmt: skip
    out = []
    if floor.exists():
        f = json.loads(floor.read_text())["natural_test_b"]
        cells = [f"{f[c]:.3f}" if c != "frechet" else f"{f[c]:.2f}" for c in PROTEIN_COLS]
        out.append(["*natural vs natural (the floor)*", "", *cells, ""])
    chosen = protein_choice()
    for r in protein_rows(path, short=False):
        cells = [fmt(r.get(c), c) for c in PROTEIN_COLS]
        out.append([protein_label(r, chosen), f"{float(r['avg_passes']):.1f}", *cells, PAPER_JSD.get(label(r), "")])
    return markdown(pd.DataFrame(out, columns=cols))


def protein_table_short(path=None, floor=None) -> str:
    """The README's Table 2: passes and the two JSDs, the floor and the paper beside."""
    path = need(path or R / "protein" / "table2" / "sweep.csv", "make protein-results")
    floor = Path(floor or R / "protein" / "floor.json")
    cols = ["sampler", "avg passes", "k-means JSD to natural (bits)", "the same, UniRep embeddings",
            "paper: passes / JSD"]  # fmt: skip
    out = []
    if floor.exists():
        f = json.loads(floor.read_text())["natural_test_b"]
        out.append(["*natural vs natural (the floor)*", "", fmt(f["jsd"], "jsd"), fmt(f.get("jsd_unirep"), "jsd"), ""])
    chosen = protein_choice()
    for r in protein_rows(path, short=True):
        out.append([protein_label(r, chosen), f"{float(r['avg_passes']):.1f}", fmt(r["jsd"], "jsd"),
                    fmt(r.get("jsd_unirep"), "jsd"), PAPER_JSD.get(label(r), "")])  # fmt: skip
    return markdown(pd.DataFrame(out, columns=cols))


def protein_oracle_table(path=None) -> str:
    """The exact-MI oracle (mi-gt) beside the head (mi) and sequential on the first 50 of the 500
    lengths: passes, the oracle's extra passes, and the metrics (noisy at n = 50)."""
    path = need(path or R / "protein" / "table2_gt_subset" / "sweep.csv", "make protein-mi-results")
    out = [
        {
            "sampler (50 proteins)": label(r),
            "avg passes": f"{float(r['avg_passes']):.1f}",
            "oracle passes / protein": f"{float(r['avg_oracle_passes']):,.0f}" if r.get("avg_oracle_passes") else "",
            "k-means JSD": fmt(r["jsd"], "jsd"),
            "UniRep JSD": fmt(r.get("jsd_unirep"), "jsd"),
            "composition JSD": fmt(r["composition_jsd"], "jsd"),
        }
        for r in rows_of(path)
    ]
    return markdown(pd.DataFrame(out))


def protein_backbones_table(path=None) -> str:
    path = need(path or R / "protein" / "backbones.json", "make protein-results")
    b = json.loads(path.read_text())
    sets = list(b["unigram_ppl"])
    cols = ["backbone", "parameters", *(f"{s}: MDM loss / pseudo-ppl (15 %)" for s in sets)]
    out = [["amino-acid unigram (training split)", "19", *(f"/ {b['unigram_ppl'][s]:.2f}" for s in sets)]]
    for name, v in b["backbones"].items():
        if not v.get("available"):
            out.append([name, "absent on this machine", *("" for _ in sets)])
            continue
        figures = [f"{v[s]['mdm_loss']:.3f} / {v[s]['pseudo_ppl_15']:.2f}" for s in sets]
        out.append([name, f"{v['parameters']:,}", *figures])
    return markdown(pd.DataFrame(out, columns=cols))


def protein_mi_table(path=None, lat_path=None) -> str:
    """The protein head against the ground truth on held-out states (results/protein/mi_report.json)
    and one decode step's latency (results/protein/latency.txt)."""
    return metric_table(protein_mi_rows(path, lat_path).values())


def protein_mi_rows(path=None, lat_path=None) -> dict:
    """{name: (metric, measured, target)} of protein_mi_table."""
    path = need(path or R / "protein" / "mi_report.json", "make protein-mi-results")
    lat_path = Path(lat_path or R / "protein" / "latency.txt")
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
    path = need(path or R / "protein" / "head_baselines.json", "python -m benchmarks.protein_head_baselines")
    r = json.loads(path.read_text())
    out = [
        [name, f"{r[f'pearson_{key}']:.3f}", f"{r[f'within_state_pearson_{key}']:.3f}"]
        for key, name in (
            ("head", "the shipped head"),
            ("separation", "separation \\|i - j\\| only"),
            ("separation_entropies", "separation + the two entropies"),
        )
    ]
    c = r["shuffled_control"]
    out.append([
        f"*the truth, {c['proteins']} test proteins half masked: mean MI natural / residues shuffled*",
        f"{c['mean_mi_natural']:.5f} / {c['mean_mi_shuffled']:.5f} nats",
        f"neighbours {c['mean_mi_natural_neighbours']:.4f} / {c['mean_mi_shuffled_neighbours']:.4f}",
    ])  # fmt: skip
    cols = [f"predictor ({r['eval_states']} held-out states, {r['eval_pairs']:,} pairs)", "pooled Pearson",
            "within-state Pearson"]  # fmt: skip
    return markdown(pd.DataFrame(out, columns=cols))


def protein_separation_table(path=None) -> str:
    """Mean MI by sequence separation |i - j|, truth and head: local against long-range dependence."""
    path = need(path or R / "protein" / "mi_report.json", "make protein-mi-results")
    rep = json.loads(path.read_text())
    out = [
        {
            "separation \\|i - j\\|": str(b["separation"]),
            "pairs": f"{b['n_pairs']:,}",
            "mean MI, truth (nats)": f"{b['mean_gt']:.4f}",
            "mean MI, head": f"{b['mean_est']:.4f}",
            "Pearson within the bin": "" if b.get("pearson") is None else f"{b['pearson']:.3f}",
        }
        for b in rep["separation"]
    ]
    return markdown(pd.DataFrame(out))


def figure3_table(path=None, how: str = "python -m benchmarks.protein_figure3") -> str:
    """A Figure-3 run's sets and centroid shifts (benchmarks/protein_figure3.py, family_figure3.py)."""
    p = need(path or R / "protein" / "figure3.json.gz", how)
    r = json.loads(read_text(p))
    ev = r["explained_variance"]
    cols = [f"set ({r['embedding']}; PC1 {ev[0]:.0%}, PC2 {ev[1]:.0%} of the natural variance)", "n", "from",
            "centroid shift (natural spreads)"]  # fmt: skip
    out = [[k, str(v["n"]), v["source"], f"{v['centroid_shift']:.2f}"] for k, v in r["sets"].items()]
    return markdown(pd.DataFrame(out, columns=cols))


# the generated blocks this module writes (`<!-- tables:NAME -->`), gathered by benchmarks/tables/__init__.py
BLOCKS = {
    "table2": protein_table,
    "table2_short": protein_table_short,
    "protein_backbones": protein_backbones_table,
    "protein_mi": protein_mi_table,
    "table2_oracle": protein_oracle_table,
    "protein_separation": protein_separation_table,
    "protein_head_baselines": protein_head_baselines_table,
    "protein_figure3": figure3_table,
}
