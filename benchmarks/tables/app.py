"""The app's own measurements: the decode viewer at long lengths, its exports, side by side."""

from __future__ import annotations

import json

import pandas as pd

from .common import R, markdown, need


def viewer_table() -> str:
    """results/app/viewer.json (`python -m benchmarks.app_latency --viewer`) against the viewer's targets
    (docs/app.md)."""
    r = json.loads(need(R / "app" / "viewer.json", "python -m benchmarks.app_latency --viewer").read_text())
    mb = lambda b: f"{b / 1e6:.2f} MB"  # noqa: E731
    rows = []
    for L, v in r["long"].items():
        rows.append([f"a step at L = {int(L):,} (median of 7; slowest)",
                     f"{v['step_ms']:.0f} ms ({v['step_ms_max']:.0f} ms)", f"{v['previous_step_ms']:.0f} ms",
                     "<= 200 ms" if L == "1024" else ""])  # fmt: skip
        rows.append(["its offline page, 8 steps", mb(v["page_bytes"]), mb(v["previous_page_bytes"]), ""])
    s = r["sudoku"]
    rows += [
        [f"Sudoku: a step of the whole decode ({s['steps']} steps)", f"{s['step_ms']:.0f} ms", "", "<= 50 ms"],
        ["Sudoku: a step side by side (shared pass slider)", f"{s['pair_step_ms']:.0f} ms", "", "<= 50 ms"],
        ["Sudoku: the whole decode as an offline page (pair)", f"{mb(s['page_bytes'])} ({mb(s['pair_page_bytes'])})",
         "", "<= 6 MB"],
        ["Sudoku: the whole decode as a GIF (pair)", f"{mb(s['gif_bytes'])} ({mb(s['pair_gif_bytes'])})", "",
         "<= 5 MB"],
    ]  # fmt: skip
    return markdown(pd.DataFrame(rows, columns=["measure", "this viewer", "the previous viewer", "target"]))


def attention_vs_mi_table() -> str:
    """results/attention_vs_mi.json (`python -m benchmarks.attention_vs_mi`): the backbone's attention
    (DAWN's dependency map) and the MI head, each against the ground-truth MI, on every domain."""
    r = json.loads(need(R / "attention_vs_mi.json", "python -m benchmarks.attention_vs_mi").read_text())
    domains = [(d, r[d]) for d in ("sudoku", "protein") if d in r]
    domains += [(f"family {f}", v) for f, v in r.get("family", {}).items()]
    rows = []
    for name, v in domains:
        h, a = v["head"], v["attention"]
        auroc = (
            f"{v['truth_auroc_structure']:.2f} / {h['auroc_structure']:.2f} / {a['auroc_structure']:.2f}"
            if v.get("truth_auroc_structure") is not None
            else ""
        )
        rows.append({
            "domain": name,
            "states / pairs": f"{v['n_states']} / {v['n_pairs']:,}",
            "Pearson: head / attention": f"**{h['pearson']:.2f}** / {a['pearson']:.2f}",
            "Spearman: head / attention": f"{h['spearman']:.2f} / {a['spearman']:.2f}",
            "top-pair recall: head / attention": f"{h['top_pair_recall']:.2f} / {a['top_pair_recall']:.2f}",
            "structure AUROC: truth / head / attention": auroc,
        })  # fmt: skip
    return markdown(pd.DataFrame(rows))


# the generated blocks this module writes (`<!-- tables:NAME -->`), gathered by benchmarks/tables/__init__.py
BLOCKS = {"viewer": viewer_table, "attention_vs_mi": attention_vs_mi_table}
