"""Print the README's result tables from the committed files under results/ (no computation).

    python benchmarks/tables.py
"""

import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mi_viz.bench import sweep_family  # noqa: E402  (the same curve grouping as the sweep plots)

R = Path(__file__).resolve().parents[1] / "results"
PAPER = {"sequential": "53.9 / 61.6 %", "topk k=4": "14.9 / 52.4 %", "eb gamma=0.2": "15.3 / 61.0 %",
         "mi gamma=0.3 lam=0": "15.2 / 63.6 % (paper: gamma 0.3)", "mi gamma=0.6 lam=0": "9.7 / 56.2 % (paper: gamma 0.6)"}


def label(r):
    parts = [r["sampler"]]
    for k in ("k", "gamma", "lam"):
        if r.get(k) not in ("", None):
            parts.append(f"{k}={float(r[k]):g}")
    if r.get("scan") == "skip":
        parts.append("scan=skip")
    return " ".join(parts)


def sweep_table(path, paper=False):
    rows = list(csv.DictReader(open(path)))
    oracle = any(r.get("avg_oracle_passes") for r in rows)  # a column only where an oracle row exists
    head = ("| sampler | avg passes | solved |" + (" oracle passes / puzzle |" if oracle else "")
            + " wall (s) / CPU threads |" + (" paper: passes / solved |" if paper else ""))
    print(head)
    print("|" + "---|" * (4 + oracle + paper))
    for r in rows:
        lab = label(r)
        line = f"| {lab} | {float(r['avg_passes']):.1f} | {100 * float(r['solved_frac']):.1f} % |"
        if oracle:
            line += f" {float(r['avg_oracle_passes']):.1f} |" if r.get("avg_oracle_passes") else " |"
        line += f" {float(r['seconds']):.0f} / {r.get('threads') or '?'} |"
        if paper:
            line += f" {PAPER.get(lab, '')} |"
        print(line)
    print()


def interpolate(points, x):
    """Solve rate of a curve [(passes, solved)] at `x` passes, linear between its points; None outside."""
    pts = sorted(points)
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if x0 <= x <= x1:
            return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return None


def matched_passes(path, method="mi lam=0.25", against=("eb", "mi-zero", "topk")):
    """Issue #4's two targets, read off a sweep: (1) rows within 1/3.5 of sequential's passes and their
    distance to sequential's solve rate; (2) each `method` row against the other curves at the same
    average passes (linear interpolation along their points; blank where the row lies outside a curve)."""
    rows = list(csv.DictReader(open(path)))
    curves = {}
    for r in rows:
        curves.setdefault(sweep_family(r), []).append((float(r["avg_passes"]), 100 * float(r["solved_frac"])))
    seq_passes, seq_solved = curves["sequential"][0]
    print(f"sequential: {seq_solved:.1f} % in {seq_passes:.1f} passes; 1/3.5 of its passes = {seq_passes / 3.5:.1f}\n")
    print("| row (<= 1/3.5 of sequential's passes) | passes | solved | vs sequential |")
    print("|---|---|---|---|")
    for r in rows:
        x, y = float(r["avg_passes"]), 100 * float(r["solved_frac"])
        if x <= seq_passes / 3.5 and sweep_family(r).startswith(("mi", "eb")):
            print(f"| {label(r)} | {x:.1f} | {y:.1f} % | {y - seq_solved:+.1f} |")
    print()
    print(f"| {method} row | passes | solved | " + " | ".join(f"{a} at same passes" for a in against) + " |")
    print("|" + "---|" * (3 + len(against)))
    for r in sorted((r for r in rows if sweep_family(r) == method), key=lambda r: float(r["avg_passes"])):
        x, y = float(r["avg_passes"]), 100 * float(r["solved_frac"])
        cells = []
        for a in against:
            v = interpolate(curves.get(a, []), x)
            cells.append("" if v is None else f"{v:.1f} % ({y - v:+.1f})")
        print(f"| {label(r)} | {x:.1f} | {y:.1f} % | " + " | ".join(cells) + " |")
    print()


def structure_table(path):
    """The structure AUROC on masked solutions, by masking ratio (mi_report.json)."""
    import json

    rep = json.loads(Path(path).read_text())
    by = rep.get("structure_by_mask_ratio")
    if not by:
        return
    print("| masked share | states | masked pairs | AUROC, ground truth | AUROC, head | Pearson | ground-truth passes / state |")
    print("|---|---|---|---|---|---|---|")
    for ratio, v in by.items():
        print(f"| {float(ratio):.0%} | {v['n_states']} | {v['n_pairs']:,} | {v['auroc_gt']:.3f} | {v['auroc_est']:.3f} | "
              f"{v['pearson']:.3f} | {v['gt_passes_per_state']:.0f} |")
    print()


def probes_table(path):
    """The MI head probes (head_probes.csv): one change each, equal budget."""
    rows = list(csv.DictReader(open(path)))
    print("| probe (change from the base: the shipped configuration without augmentation) | parameters | train states | held-out Pearson | "
          "dev Pearson (hard validation decode states) | structure AUROC, 90 %-masked boards (truth) |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        rules = f"{float(r['rules_auroc']):.3f} ({float(r['rules_auroc_truth']):.3f})" if r.get("rules_auroc") else ""
        print(f"| {r['probe']} | {int(r['n_params']):,} | {int(r['n_train_states']):,} | {float(r['val_pearson']):.3f} | "
              f"{float(r['dev_pearson']):.3f} | {rules} |")
    print()


if __name__ == "__main__":
    for name, paper in (("test_hard", True), ("kaggle", False), ("val_sweep", False)):
        p = R / "sudoku" / name / "sweep.csv"
        if p.exists():
            print(f"### {name}\n")
            sweep_table(p, paper)
    for name in ("test_hard", "kaggle", "val_sweep"):
        p = R / "sudoku" / name / "sweep.csv"
        if p.exists():
            print(f"### {name}: matched passes\n")
            matched_passes(p)
    if (R / "sudoku" / "mi_report.json").exists():
        print("### structure AUROC on masked solutions\n")
        structure_table(R / "sudoku" / "mi_report.json")
    if (R / "sudoku" / "head_probes.csv").exists():
        print("### MI head probes\n")
        probes_table(R / "sudoku" / "head_probes.csv")
    for p in sorted(R.glob("sudoku/*.json")) + sorted(R.glob("sudoku/test_hard/*.json")) + sorted(R.glob("gpu_run/*.jsonl")):
        print(f"{p.relative_to(R)}: {p.read_text().strip()}")
