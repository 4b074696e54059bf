"""The antibody tables: CDR infill on AntiBERTy (Table 2 on a real pretrained model), its fronts at
matched passes, the MI head against ground truth. Built as DataFrames, rendered by `markdown`."""

from __future__ import annotations

import json

import pandas as pd

from benchmarks.report import defaults_from_choice
from mi_viz.core.samplers import config_for

from .common import R, label, markdown, need, rows_of

MASKS = {"cdr3": "CDR3", "cdrs": "all three CDRs"}


def _f(v, digits: int) -> str:
    return "" if v in (None, "") else f"{float(v):.{digits}f}"


def antibody_defaults(where: str = "olga") -> dict[str, dict]:
    """The settings a validation sweep chose (results/antibody/[where/]val_sweep/choice.json)."""
    path = (
        R / "antibody" / where / "val_sweep" / "choice.json" if where else R / "antibody" / "val_sweep" / "choice.json"
    )
    return defaults_from_choice(json.loads(need(path, "make antibody-val-sweep").read_text())["chosen"])


def antibody_choice(where: str = "olga") -> dict[str, str]:
    """sampler -> label of its validation-chosen setting (results/antibody/[olga/]val_sweep/choice.json)."""
    defaults = antibody_defaults(where)
    return {n: config_for(n, defaults).label() for n in defaults}


def antibody_table(mask: str = "cdr3") -> str:
    """Every setting of the test sweep: passes, the infill's PLL under AntiBERTy (+- its standard
    error over chains), OLGA's log10 Pgen of the heavy chains' CDR3 (and the share it cannot
    generate), the k-means JSD of AntiBERTy's and UniRep's embeddings, recovery."""
    path = need(R / "antibody" / "olga" / mask / "sweep.csv", "make antibody-olga-results")
    rows, chosen = rows_of(path), antibody_choice()
    seq = next(r for r in rows if r["sampler"] == "sequential")
    natural = {"sampler": "*natural chains (the test set's own)*", "avg passes": "", "PLL (nats / residue)":
               _f(seq["pll_natural"], 3)}  # fmt: skip
    body = []
    for r in rows:
        lab = label(r)
        body.append({
            "sampler": f"**{lab} (default)**" if chosen.get(r["sampler"]) == lab else lab,
            "avg passes": _f(r["avg_passes"], 1),
            "PLL (nats / residue)": f"{float(r['pll']):.3f} +- {float(r['pll_se']):.3f}",
            "log10 Pgen (OLGA)": _f(r.get("log10_pgen"), 2),
            "Pgen = 0": "" if r.get("pgen_zero") in (None, "") else f"{100 * float(r['pgen_zero']):.0f} %",
            "JSD AntiBERTy (bits)": _f(r.get("jsd"), 3),
            "JSD UniRep (bits)": _f(r.get("jsd_unirep"), 3),
            "recovery": f"{100 * float(r['recovery']):.1f} %",
        })  # fmt: skip
    return markdown(pd.DataFrame([natural, *body]).fillna(""))


def antibody_fronts_table(masks: tuple[str, ...] = tuple(MASKS)) -> str:
    """At a quarter, a third and half of sequential's passes: each curve's PLL there (linear between
    its rows), and the best MI rule's lead over the best rival with its 90 % interval."""
    path = need(R / "antibody" / "olga" / "fronts.json", "python -m benchmarks.fronts antibody-olga")
    f = json.loads(path.read_text())
    out = []
    for mask, m in f["masks"].items():
        if mask not in masks:
            continue
        s, own = m["sequential"], m.get("mi_default", {}).get("avg_passes")
        for x, at in m["at"].items():
            c, lead = at["curves"], at["lead"]
            row = {
                "infilled": MASKS.get(mask, mask),
                "passes": x + (" (the mi default's)" if own is not None and float(x) == own else ""),
                "sequential (passes / PLL)": f"{s['avg_passes']:.1f} / {s['pll']:.3f}",
            }
            for name in ("topk", "eb", "mi-zero", "dawn", "threshold", "mi", "mi-cap", "mi-tc"):
                vals = [v for k, v in c.items() if k.split()[0] == name]  # a rule's best curve (e.g. mi lam=1, lam=4)
                row[name] = f"{max(vals):.3f}" if vals else ""
            row["best MI rule minus best rival (90 % interval)"] = (
                "" if lead is None else
                f"{lead['diff']:+.3f} ({lead['lo']:+.3f} .. {lead['hi']:+.3f}; {lead['mi']} vs {lead['vs']})"
            )  # fmt: skip
            out.append(row)
    df = pd.DataFrame(out)
    return markdown(df.loc[:, (df != "").any()])  # a rule with no curve through these passes: no column


def antibody_paired_table() -> str:
    """The fronts' leads again, their 90 % interval from a paired bootstrap over the 64 chains beside
    the independent one fronts.json gives (benchmarks/antibody_paired.py)."""
    path = need(R / "antibody" / "olga" / "fronts_paired.json", "python -m benchmarks.antibody_paired")
    f = json.loads(path.read_text())
    rows = [
        {
            "passes": x,
            "lead": f"{v['mi']} vs {v['vs']}",
            "best MI rule minus best rival": f"{v['diff']:+.3f}",
            "90 % interval, chains paired": f"{v['paired_lo']:+.3f} .. {v['paired_hi']:+.3f}",
            "90 % interval, independent (fronts.json)": f"{v['independent_lo']:+.3f} .. {v['independent_hi']:+.3f}",
        }
        for x, v in f["at"].items()
    ]
    return markdown(pd.DataFrame(rows))


def antibody_mi_table() -> str:
    """The antibody head against exact ground truth on held-out test states."""
    path = need(R / "antibody" / "olga" / "mi_report.json", "make antibody-olga-results")
    m = json.loads(path.read_text())
    rows = [
        ("held-out states (pairs)", f"{m['n_states']} ({m['n_pairs']:,}), {m['avg_masked']:.1f} masked on average", ""),
        ("Pearson / Spearman, head vs ground truth", f"**{m['pearson']:.3f}** / {m['spearman']:.3f}", ">= 0.85"),
        ("mean absolute error (nats)", f"{m['mae']:.4f}", ""),
        ("top-pair recall", f"{m['top_pair_recall']:.3f}", ""),
        (f"ground truth: passes / seconds a state ({m['torch_threads']} thread{'s' * (m['torch_threads'] > 1)})",
         f"{m['gt_passes_per_state']:.0f} / {m['gt_seconds_per_state']:.1f}", ""),
        ("head: share of a backbone pass", f"{100 * m['head_over_forward']:.1f} %", "<= 10 %"),
    ]  # fmt: skip
    return markdown(pd.DataFrame(rows, columns=["metric", "measured", "target"]))


def antibody_cdr3_pairs_table() -> str:
    """The infilled CDR3s' pair statistics against the OLGA reference's heavy chains
    (benchmarks/antibody_cdr3_pairs.py), the test chains' own CDR3s as the ceiling at that n."""
    path = need(R / "antibody" / "olga" / "cdr3_pairs.json", "python -m benchmarks.antibody_cdr3_pairs")
    sets = json.loads(path.read_text())["sets"]
    body = [
        {
            "CDR3s": k if k.startswith("natural") else k.replace("_", " ").replace("=", " "),
            "n": v["n"],
            "pair-correlation Pearson (90 % interval)": f"{v['pair_corr_pearson']:.3f} "
            f"({v['pair_corr_ci90'][0]:.3f} .. {v['pair_corr_ci90'][1]:.3f})",
            "single-position Pearson": f"{v['single_freq_pearson']:.3f}",
        }
        for k, v in sets.items()
    ]
    return markdown(pd.DataFrame(body))
