"""DEMASK beside the MI rule: the exact TV influence's cost, the two oracles on the same
puzzles, a TV head against exact TV. Built as DataFrames, rendered by `markdown`."""

from __future__ import annotations

import json

import pandas as pd

from .antibody import head_report_table
from .common import R, label, markdown, need, rows_of
from .sudoku import fronts_table


def tv_overhead_table() -> str:
    """The ground truth with DEMASK's TV beside the MI against the MI alone, the same passes, timed side by
    side (benchmarks/tv_overhead.py)."""
    f = json.loads(need(R / "tv_overhead.json", "make tv-overhead").read_text())
    rows = [
        {"backbone": {"sudoku": "Sudoku MDM (4.0 M)", "antibody": "AntiBERTy (26 M)"}.get(k, k),
         "passes": v["passes"], "seconds, MI and TV": f"{v['seconds_with_tv']:.2f}",
         "seconds, MI only": f"{v['seconds_mi_only']:.2f}", "ratio": f"{v['ratio']:.3f}"}
        for k, v in f.items() if isinstance(v, dict)
    ]  # fmt: skip
    return markdown(pd.DataFrame(rows))


def oracle_rows_table() -> str:
    """The two exact rules on the same puzzles (make sudoku-oracles): passes, solve rate, and the exact
    maps' passes a puzzle (what an oracle pays that its head-read twin would not)."""
    rows = rows_of(need(R / "sudoku" / "demask" / "oracles" / "sweep.csv", "make sudoku-oracles"))
    body = [
        {"setting": label(r), "puzzles": r["n"], "avg passes": f"{float(r['avg_passes']):.2f}",
         "solved": f"{100 * float(r['solved_frac']):.1f} %",
         "exact-map passes a puzzle": f"{float(r['avg_oracle_passes']):.0f}"}
        for r in sorted(rows, key=lambda r: (r["sampler"], float(r["avg_passes"])))
    ]  # fmt: skip
    return markdown(pd.DataFrame(body))


def antibody_oracle_rows_table() -> str:
    """The two exact rules on the same 32 human heavy test chains under Sapiens VH (make
    antibody-sapiens-oracles): passes, the infill's PLL under Sapiens VH (the generator, +- its standard
    error over the chains) and under AntiBERTy, recovery, and the exact maps' passes a chain."""
    rows = rows_of(need(R / "antibody" / "sapiens" / "oracles" / "sweep.csv", "make antibody-sapiens-oracles"))
    body = [
        {"setting": label(r), "chains": r["n"], "avg passes": f"{float(r['avg_passes']):.2f}",
         "PLL Sapiens VH": f"{float(r['pll']):.3f} +- {float(r['pll_se']):.3f}",
         "PLL AntiBERTy": f"{float(r['pll_antiberty']):.3f}" if r.get("pll_antiberty") else "",
         "recovery": f"{100 * float(r['recovery']):.1f} %",
         "exact-map passes a chain": f"{float(r['avg_oracle_passes']):.0f}"}
        for r in sorted(rows, key=lambda r: (r["sampler"], float(r["avg_passes"])))
    ]  # fmt: skip
    return markdown(pd.DataFrame(body))


def head_vs_oracle_table(path, make: str, inputs: str, judges: list[tuple[str, str, float, int]]) -> str:
    """Each head rule beside its oracle at the same setting, inputs paired (benchmarks/head_vs_oracle.py):
    the passes and each judge's figure (key, name, scale, digits: solves in %, PLL in nats) of both, head
    minus oracle with its 90 % paired interval."""
    f = json.loads(need(path, make).read_text())

    def diff(v: dict, digits: int, scale: float = 1.0) -> str:
        d, lo, hi = (scale * x for x in (v["diff"], *v["ci90"]))
        return f"{d:+.{digits}f} ({lo:+.{digits}f} .. {hi:+.{digits}f})"

    body = []
    for head, c in f["pairs"].items():
        row = {"rule (head / exact map)": f"{head} / {c['oracle']}", inputs: c["passes"]["n"],
               "passes, head / oracle": f"{c['passes']['head']:.2f} / {c['passes']['oracle']:.2f}",
               "passes, head minus oracle (90 % CI)": diff(c["passes"], 2)}  # fmt: skip
        for key, name, scale, digits in judges:
            if key in c:
                unit = " %" if scale == 100 else ""
                both = (f"{scale * c[key][k]:.{digits}f}{unit}" for k in ("head", "oracle"))
                row[f"{name}, head / oracle"] = " / ".join(both)
                row[f"{name}, head minus oracle (90 % CI)"] = diff(c[key], digits, scale)
        body.append(row)
    return markdown(pd.DataFrame(body))


# the generated blocks this module writes (`<!-- tables:NAME -->`), gathered by benchmarks/tables/__init__.py
BLOCKS = {
    "tv_overhead": tv_overhead_table,
    "demask_oracles": oracle_rows_table,
    "demask_oracle_fronts": lambda: fronts_table(R / "sudoku" / "demask" / "oracles" / "fronts.json"),
    "demask_oracles_sapiens": antibody_oracle_rows_table,
    "demask_oracle_fronts_sapiens": lambda: fronts_table(
        R / "antibody" / "sapiens" / "oracles" / "fronts.json", "make antibody-sapiens-oracles"
    ),
    "demask_head_vs_oracle_sapiens": lambda: head_vs_oracle_table(
        R / "antibody" / "sapiens" / "oracles" / "head_vs_oracle.json",
        "make antibody-sapiens-oracles",
        "chains",
        [("pll", "PLL Sapiens VH", 1.0, 3), ("pll_antiberty", "PLL AntiBERTy", 1.0, 3)],
    ),
    "demask_head_vs_oracle_sudoku": lambda: head_vs_oracle_table(
        R / "sudoku" / "demask" / "oracles" / "head_vs_oracle.json",
        "make sudoku-oracles",
        "puzzles",
        [("solved", "solved", 100.0, 1)],
    ),
    "demask_fronts_sudoku": lambda: fronts_table(R / "sudoku" / "demask" / "fronts.json", "make sudoku-demask"),
    "demask_tv_sudoku": lambda: head_report_table(
        "demask/tv_report.json", "make results/sudoku/demask/tv_report.json", unit="a share, 0..1", folder="sudoku"
    ),
    "demask_tv_antibody": lambda: head_report_table(
        "tv_report.json", "make results/antibody/tv_report.json", unit="a share, 0..1"
    ),
    "demask_tv_sapiens": lambda: head_report_table(
        "sapiens/tv_report.json", "make results/antibody/sapiens/tv_report.json", unit="a share, 0..1"
    ),
}
