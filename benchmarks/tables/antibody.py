"""The antibody tables: CDR infill on AntiBERTy (Table 2 on a real pretrained model), its fronts at
matched passes, the MI head against ground truth. Built as DataFrames, rendered by `markdown`."""

from __future__ import annotations

import json

import pandas as pd

from benchmarks.report import defaults_from_choice
from mi_viz.core.samplers import config_for

from .common import ROOT, Missing, R, label, markdown, need, rows_of, verdict

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


def head_report_table(
    report: str = "olga/mi_report.json",
    command: str = "make antibody-olga-results",
    unit: str = "nats",
    folder: str = "antibody",
) -> str:
    """A head against exact ground truth on held-out test states (the trivial baselines' Pearson
    beside it where the report has them: the pair's separation along the chain, and the entropies
    with it); results/FOLDER/REPORT (an antibody report by default; the Sudoku TV head's reads the same)."""
    path = need(R / folder / report, command)
    m = json.loads(path.read_text())
    rows = [
        ("held-out states (pairs)", f"{m['n_states']} ({m['n_pairs']:,}), {m['avg_masked']:.1f} masked on average", ""),
        ("Pearson / Spearman, head vs ground truth", f"**{m['pearson']:.3f}** / {m['spearman']:.3f}", ">= 0.85"),
        (f"mean absolute error ({unit})", f"{m['mae']:.4f}", ""),
        ("top-pair recall", f"{m['top_pair_recall']:.3f}", ""),
        (f"ground truth: passes / seconds a state ({m['torch_threads']} thread{'s' * (m['torch_threads'] > 1)})",
         f"{m['gt_passes_per_state']:.0f} / {m['gt_seconds_per_state']:.1f}", ""),
        ("head: share of a backbone pass", f"{100 * m['head_over_forward']:.1f} %", "<= 10 %"),
    ]  # fmt: skip
    if "pearson_baseline_separation" in m:  # the newer reports: the head against what needs no head
        best = max(m["pearson_baseline_separation"], m["pearson_baseline_entropy_separation"])
        rows.insert(2, ("Pearson of trivial baselines: separation / entropies and separation",
                        f"{m['pearson_baseline_separation']:.3f} / {m['pearson_baseline_entropy_separation']:.3f} "
                        f"(head {m['pearson'] - best:+.3f} over the better)", "head >= +0.2"))  # fmt: skip
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


# --- natural chains: SAbDab's CDR-H3 cluster split, RAbD, the validated settings -------------------
NATURAL_SETS = {"sabdab_test": "SAbDab test", "rabd_test": "RAbD", "sabdab_val": "SAbDab validation"}


def _budgets(choice: dict) -> dict[str, dict]:
    """share -> the chosen settings there (the headline first)."""
    return {f"{choice['share']:g}": choice["chosen"], **{k: v["chosen"] for k, v in choice["at_budget"].items()}}


# a backbone's folder under results/antibody ("": AntiBERTy's) -> its judges' columns and names: the generator first
JUDGES = {
    "": {"pll": "AntiBERTy", "pll_sapiens": "Sapiens"},
    "sapiens": {"pll": "Sapiens VH", "pll_antiberty": "AntiBERTy"},
}
MAKE = {"": "make antibody-results", "sapiens": "make antibody-sapiens-results"}
VAL_MAKE = {"": "make antibody-val-sweep", "sapiens": "make antibody-sapiens-results"}


def _dir(folder: str):
    return R / "antibody" / folder if folder else R / "antibody"


def _pll_columns(r: dict, folder: str) -> dict[str, str]:
    """A row's two PLL columns: the generator's (+- its standard error over chains), the other judge's."""
    (own, own_name), (other, other_name) = JUDGES[folder].items()
    return {f"PLL {own_name}": f"{float(r[own]):.3f} +- {float(r['pll_se']):.3f}",
            f"PLL {other_name}": _f(r.get(other), 3)}  # fmt: skip


def _validated_labels(folder: str = "") -> dict[str, str]:
    """label of every validated setting -> the budget(s) it was chosen at ("1/2.5, 1/2")."""
    choice = json.loads(need(_dir(folder) / "val_sweep" / "choice.json", VAL_MAKE[folder]).read_text())
    out: dict[str, list[str]] = {}
    for share, chosen in _budgets(choice).items():
        for name, row in chosen.items():
            if row:
                lab = config_for(name, defaults_from_choice({name: row})).label()
                out.setdefault(lab, []).append(f"1/{share}")
    return {k: ", ".join(v) for k, v in out.items()}


def antibody_natural_table(where: str = "sabdab_test", folder: str = "") -> str:
    """A test set's rows at the validated settings: passes, the infill's PLL under the backbone (the
    generator, +- its standard error over chains) and under the other pretrained LM (a judge that did
    not generate), recovery of the natural CDR3, OLGA's log10 Pgen of the human heavy chains'
    junctions; the natural chains' own figures first. The budget each setting was chosen at is named."""
    path = need(_dir(folder) / where / "sweep.csv", MAKE[folder])
    rows, chosen, judges = rows_of(path), _validated_labels(folder), JUDGES[folder]
    missing = [lab for lab in ["sequential", *chosen] if lab not in {label(r) for r in rows}]
    if missing:  # a sweep committed part-way (to be resumed) is not read until every validated setting is in
        rel = path.relative_to(ROOT)
        raise Missing(f"({rel} holds {len(rows)} of the {len(chosen) + 1} validated settings, a sweep part-way: "
                      f"`{MAKE[folder]}` resumes it; no table until it is whole)")  # fmt: skip
    seq = next(r for r in rows if r["sampler"] == "sequential")
    natural = {"setting": f"*the natural CDR3s ({seq['n']} chains)*", "chosen at": "", "avg passes": "",
               **{f"PLL {name}": _f(seq.get(f"{k}_natural"), 3) for k, name in judges.items()},
               "recovery": "100 %", "log10 Pgen (OLGA)": _f(seq.get("log10_pgen_natural"), 2)}  # fmt: skip
    body = []
    for r in sorted(rows, key=lambda r: (r["sampler"] != "sequential", -float(r["avg_passes"]))):
        body.append({
            "setting": label(r),
            "chosen at": chosen.get(label(r), ""),
            "avg passes": _f(r["avg_passes"], 2),
            **_pll_columns(r, folder),
            "recovery": f"{100 * float(r['recovery']):.1f} %",
            "log10 Pgen (OLGA)": _f(r.get("log10_pgen"), 2),
        })  # fmt: skip
    return markdown(pd.DataFrame([natural, *body]).fillna(""))


def _ci(c: dict, key: str = "ci90") -> str:
    return f"{c['diff']:+.3f} ({c[key][0]:+.3f} .. {c[key][1]:+.3f})"


def _verdict(c: dict, prefix: str = "") -> str:
    """The word fronts.verdict gave the 90 % interval (two one-sided tests at +-0.05 nats for "level",
    "no worse", "no better"); "no difference detected" with the smallest difference the chains detect
    at 80 % power beside it, so non-significance never reads as equivalence."""
    v = c.get("verdict") or verdict(c["ci90"])
    word = {"ahead": "MI ahead", "behind": "MI behind"}.get(v, v)
    if v == "no difference detected" and "mde80" in c:
        word += f" (detects {c['mde80']:.2f})"
    return f"{prefix}; {word}" if prefix else word


def antibody_natural_fronts_table(where: str = "sabdab_test", folder: str = "") -> str:
    """At each budget, the validated MI rule against sequential (non-inferiority: the 90 % lower bound of
    the per-chain difference above -0.05 nats) and against every rival read at the MI rule's own test
    passes (linear between the rival's settings), chains paired; the family-wise interval beside."""
    f = json.loads(need(_dir(folder) / where / "fronts.json", "python -m benchmarks.fronts antibody").read_text())
    out = []
    for share, b in f["budgets"].items():
        for m in f["metrics"]:
            judge = JUDGES[folder].get(m, m)
            s = b["vs_sequential"][m]
            out.append({"budget": f"1/{share}", "judge": judge, "MI rule (passes)": f"{b['mi']} ({b['mi_passes']:.2f})",
                        "vs": f"sequential ({b['sequential_passes']:.2f})", "difference (90 %)": _ci(s),
                        f"family-wise ({100 * f['family_wise_level']:.1f} %)": "",
                        "verdict": _verdict(s, "non-inferior" if s["ci90"][0] > -0.05 else "")})  # fmt: skip
            for rv, c in b["rivals"].items():
                if "outside" in c:
                    cell = {"difference (90 %)": f"outside its passes ({', '.join(map(str, c['outside']))})"}
                    verdict = ""
                else:
                    cm = c[m]
                    lo, hi = cm["ci_fw"]
                    verdict = _verdict(cm)
                    verdict += " (family-wise too)" if lo > 0 or hi < 0 else ""
                    cell = {"difference (90 %)": _ci(cm), f"family-wise ({100 * f['family_wise_level']:.1f} %)":
                            f"{lo:+.3f} .. {hi:+.3f}"}  # fmt: skip
                out.append({"budget": f"1/{share}", "judge": judge, "MI rule (passes)": "", "vs": rv, **cell,
                            "verdict": verdict})  # fmt: skip
    return markdown(pd.DataFrame(out).fillna(""))


def antibody_species_table(where: str = "sabdab_test") -> str:
    """Every judge by the species the numbering calls (riot-na; '?' where its closest germline is under
    70 % identical): sequential's and the MI rule's validated settings, and the natural chains'."""
    f = json.loads(need(R / "antibody" / where / "fronts.json", "python -m benchmarks.fronts antibody").read_text())
    out = []
    for sp, v in sorted(f["species"].items(), key=lambda kv: -kv[1]["chains"]):
        nat = v["natural"]
        out.append({"species (numbering)": sp, "chains": v["chains"], "setting": "*natural*",
                    "PLL AntiBERTy": _f(nat.get("pll"), 3), "PLL Sapiens": _f(nat.get("pll_sapiens"), 3),
                    "recovery": "", "log10 Pgen": _f(nat.get("log10_pgen"), 2)})  # fmt: skip
        for lab, c in v["settings"].items():
            out.append({"species (numbering)": "", "chains": "", "setting": lab, "PLL AntiBERTy": _f(c.get("pll"), 3),
                        "PLL Sapiens": _f(c.get("pll_sapiens"), 3),
                        "recovery": "" if c.get("recovery") is None else f"{100 * c['recovery']:.1f} %",
                        "log10 Pgen": _f(c.get("log10_pgen"), 2)})  # fmt: skip
    return markdown(pd.DataFrame(out).fillna(""))


def antibody_recovery_table() -> str:
    """Greedy (temperature 0) sequential CDR-H3 recovery on the natural test sets beside the published
    figures on RAbD (results/antibody/published_aar.json, with their source and setting)."""
    pub = json.loads(need(R / "antibody" / "published_aar.json", "(committed by hand, with its source)").read_text())
    out = []
    for where, name in (("sabdab_test", "SAbDab CDR-H3 cluster test"), ("rabd_test", "RAbD")):
        p = R / "antibody" / f"greedy_{where}" / "sweep.csv"
        t1 = R / "antibody" / where / "sweep.csv"
        if not p.exists():
            continue
        g = next(r for r in rows_of(p) if r["sampler"] == "sequential")
        s1 = next((r for r in rows_of(t1) if r["sampler"] == "sequential"), None) if t1.exists() else None
        out.append({"set": f"{name} ({g['n']} chains)", "method": "AntiBERTy, sequential infill (this project)",
                    "setting": "sequence only: the rest of the heavy chain", "CDR-H3 recovery": f"greedy "
                    f"{100 * float(g['recovery']):.1f} %" + ("" if s1 is None else
                    f"; sampled (T = 1) {100 * float(s1['recovery']):.1f} %")})  # fmt: skip
    for row in pub["rows"]:
        out.append({"set": row["set"], "method": f"{row['method']} ({pub['source_short']})", "setting": row["setting"],
                    "CDR-H3 recovery": f"{row['aar']:.2f} %"})  # fmt: skip
    return markdown(pd.DataFrame(out))


def antibody_sets_table() -> str:
    """The natural sets (data/antibody/natural/natural.json, training/make_antibody_natural.py): size,
    source, the species the numbering calls, constant regions trimmed, the CDR3's length."""
    info = json.loads(need(R.parent / "data" / "antibody" / "natural" / "natural.json",
                           "python training/make_antibody_natural.py").read_text())  # fmt: skip
    source = {
        "sabdab_test": "SAbDab heavy chains, RefineGNN's CDR-H3 cluster split, test fold (MIT)",
        "sabdab_val": "the same split's validation fold (rows in a seeded order: the first 128 validate)",
        "rabd_test": "RAbD's heavy chains (Adolf-Bryfogle et al. 2018) less the 8 entries in a SAbDab fold",
        "light_test": "CoV-AbDab VL (CC BY 4.0), deduplicated by CDR-L3, the heavy partner's fold",
        "light_val": "the same, validation",
    }
    out = []
    for name, v in info["sets"].items():
        sp = ", ".join(f"{k} {n}" for k, n in v["species"].items())
        out.append({"set": f"`{name}`", "chains": v["chains"], "source": source.get(name, ""),
                    "species (riot-na; ? under 70 % identity)": sp,
                    "constant region trimmed": v["constant_region_trimmed"],
                    "CDR3 length (mean)": f"{v['cdr3_length_mean']:.1f}"})  # fmt: skip
    return markdown(pd.DataFrame(out))


def antibody_val_table(folder: str = "") -> str:
    """A validation sweep (results/antibody/[folder/]val_sweep/sweep.csv): each rule's pass knob on the
    SAbDab validation chains, every row, the chosen ones marked with the budget they were chosen at."""
    rows, chosen = (
        rows_of(need(_dir(folder) / "val_sweep" / "sweep.csv", VAL_MAKE[folder])),
        _validated_labels(folder),
    )
    out = [
        {
            "setting": label(r),
            "chosen at": chosen.get(label(r), ""),
            "avg passes": _f(r["avg_passes"], 2),
            **_pll_columns(r, folder),
            "recovery": f"{100 * float(r['recovery']):.1f} %",
        }
        for r in sorted(rows, key=lambda r: (r["sampler"], float(r["avg_passes"])))
    ]
    return markdown(pd.DataFrame(out).replace("", pd.NA).dropna(axis=1, how="all").fillna(""))


# the generated blocks this module writes (`<!-- tables:NAME -->`), gathered by benchmarks/tables/__init__.py
BLOCKS = {
    "antibody_cdr3": antibody_table,
    "antibody_cdrs": lambda: antibody_table("cdrs"),
    "antibody_fronts": antibody_fronts_table,
    "antibody_fronts_cdr3": lambda: antibody_fronts_table(("cdr3",)),
    "antibody_mi": head_report_table,
    "antibody_paired": antibody_paired_table,
    "antibody_cdr3_pairs": antibody_cdr3_pairs_table,
    "antibody_sets": antibody_sets_table,
    "antibody_val": antibody_val_table,
    "antibody_sabdab": antibody_natural_table,
    "antibody_sabdab_fronts": antibody_natural_fronts_table,
    "antibody_sabdab_species": antibody_species_table,
    "antibody_rabd": lambda: antibody_natural_table("rabd_test"),
    "antibody_rabd_fronts": lambda: antibody_natural_fronts_table("rabd_test"),
    "antibody_recovery": antibody_recovery_table,
    "antibody_mi_natural": lambda: head_report_table("mi_report.json", "make results/antibody/mi_report.json"),
    "antibody_mi_sapiens": lambda: head_report_table(
        "sapiens/mi_report.json", "make results/antibody/sapiens/mi_report.json"
    ),
    "antibody_sapiens_val": lambda: antibody_val_table("sapiens"),
    "antibody_sapiens_sabdab": lambda: antibody_natural_table("sabdab_test", "sapiens"),
    "antibody_sapiens_fronts": lambda: antibody_natural_fronts_table("sabdab_test", "sapiens"),
}
