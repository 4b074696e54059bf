"""Print the README's result tables from the committed files under results/ (no computation).

    python benchmarks/tables.py
"""

import csv
from pathlib import Path

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
    head = "| sampler | avg passes | solved | wall (s) / CPU threads |" + (" paper: passes / solved |" if paper else "")
    print(head)
    print("|" + "---|" * (5 if paper else 4))
    for r in rows:
        lab = label(r)
        line = f"| {lab} | {float(r['avg_passes']):.1f} | {100 * float(r['solved_frac']):.1f} % | {float(r['seconds']):.0f} / {r.get('threads') or '?'} |"
        if paper:
            line += f" {PAPER.get(lab, '')} |"
        print(line)
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


if __name__ == "__main__":
    for name, paper in (("test_hard", True), ("kaggle", False), ("val_sweep", False)):
        p = R / "sudoku" / name / "sweep.csv"
        if p.exists():
            print(f"### {name}\n")
            sweep_table(p, paper)
    if (R / "sudoku" / "mi_report.json").exists():
        print("### structure AUROC on masked solutions\n")
        structure_table(R / "sudoku" / "mi_report.json")
    for p in sorted(R.glob("sudoku/*.json")) + sorted(R.glob("sudoku/test_hard/*.json")) + sorted(R.glob("gpu_run/*.jsonl")):
        print(f"{p.relative_to(R)}: {p.read_text().strip()}")
