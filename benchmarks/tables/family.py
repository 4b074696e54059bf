"""The protein-family tables: contacts (and by separation class), anchors, heads, pair statistics at
matched passes, the oracle, the family models."""

from __future__ import annotations

import functools
import json

import pandas as pd

from mi_viz.domains.family import SHIPPED
from mi_viz.domains.family.predictors import ANCHORS, NAMES

from .common import ROOT, R, label, lead, markdown, md_table, need, read_json, rows_of
from .models import family_weights
from .protein import figure3_table

FAMILIES = SHIPPED  # every shipped family, in the order the tables list them
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


README_PREDICTORS = ("truth", "jacobian_rows", "head", "mip", "potts", "plmdca", "ardca")


def family_contacts_table() -> str:
    """The README's contact table: every family's headline predictors by the field's conventions
    (all pairs >= 6 apart at top L/5, long range at top L; contact_classes.json), the backbone's
    extraction chosen without the structure in bold."""
    cols = ["family", "mapped columns L", *(NAMES[k] for k in README_PREDICTORS)]
    out = []
    for fam in FAMILIES:
        r = _family_json(fam, "contact_classes.json")
        if r is None:
            out.append(_pad([fam, "(no contact_classes.json yet: `make family-results`)"], cols))
            continue
        p, chosen = r["predictors"], r.get("extraction", {}).get("chosen")
        cells = []
        for k in README_PREDICTORS:
            cell = f"{p[k]['precision_all_L5']:.2f} / {p[k]['precision_long_L']:.2f}" if k in p else ""
            cells.append(f"**{cell}**" if k == chosen else cell)
        out.append([fam, str(r["mapped_columns"]), *cells])
    return markdown(pd.DataFrame(out, columns=cols))


def _pad(cells: list[str], cols: list[str]) -> list[str]:
    """A row that says why a family has no figures yet, as wide as the table."""
    return cells + [""] * (len(cols) - len(cells))


def family_contacts_full_table() -> str:
    """Every contact score of every family: top-L/5, top-L/2, AUROC."""
    out = []
    for fam in FAMILIES:
        c = _family_json(fam, "contacts.json")
        if c is None:
            continue
        for k, name in CONTACT_SCORES:
            if c.get(f"precision_L5_{k}") is None:
                continue
            p5, p2, au = c[f"precision_L5_{k}"], c[f"precision_L2_{k}"], c[f"auroc_{k}"]
            out.append([fam, name, f"{p5:.3f}", f"{p2:.3f}", f"{au:.3f}"])
        out.append([fam, "*how*", f"{c['rows']} held-out rows x {c['masks_per_row']} masks of {100 * c['frac']:.0f} %",
                    f"{c['truth_passes']:,} passes", f"{c['seconds']:.0f} s"])  # fmt: skip
    return markdown(pd.DataFrame(out, columns=["family", "score", "top-L/5", "top-L/2", "AUROC"]))


def family_contact_classes_table() -> str:
    """Long-range top-L and all-pairs top-L/5 precision of every predictor, by the field's separation
    classes (benchmarks/family_contact_classes.py)."""
    rows = {fam: _family_json(fam, "contact_classes.json") for fam in FAMILIES}
    have = [k for k in NAMES if any(r and k in r["predictors"] for r in rows.values())]
    cols = ["family", "L", "long-range contacts", *(f"{NAMES[k]}: long top-L / all top-L/5" for k in have)]
    out = []
    for fam, r in rows.items():
        if r is None:
            out.append(
                _pad([fam, "(no contact_classes.json yet: `python -m benchmarks.family_contact_classes`)"], cols)
            )
            continue
        p = r["predictors"]
        cells = [f"{p[k]['precision_long_L']:.2f} / {p[k]['precision_all_L5']:.2f}" if k in p else "" for k in have]
        any_p = next(iter(p.values()))
        out.append([fam, str(r["mapped_columns"]), str(any_p["contacts_long"]), *cells])
    return markdown(pd.DataFrame(out, columns=cols))


def family_anchors_table() -> str:
    """The field's anchors' 200 members beside the MDM's sequential decode, by the same pair statistics
    against the same held-out rows (results/family/NAME/contact_classes.json, sweep.csv)."""
    out = []
    for fam in FAMILIES:
        r = _family_json(fam, "contact_classes.json")
        sweep = R / "family" / fam / "sweep.csv"
        seq = next((x for x in rows_of(sweep) if x["sampler"] == "sequential"), None) if sweep.exists() else None
        if r is None or seq is None:
            continue
        slo, shi = json.loads(seq["pair_corr_ci90"])
        for key in ANCHORS:
            if key not in r:
                continue
            a = r[key]
            lo, hi = a["pair_corr_ci90"]
            fit = a.get("settings", {})
            note = "" if fit.get("converged", True) else f" ({fit['gradient_steps']} steps, short of its target)"
            out.append({
                "family": fam,
                "anchor": f"{NAMES[key]}{note}",
                "its pair-correlation Pearson (90 % interval)": f"{a['pair_corr_pearson']:.3f} ({lo:.3f} .. {hi:.3f})",
                "its fit / 200 members": f"{a['fit_seconds']:.0f} s / {a['sample_seconds']:.2f} s",
                "MDM sequential: Pearson (interval), passes":
                    f"{float(seq['pair_corr_pearson']):.3f} ({slo:.3f} .. {shi:.3f}), {float(seq['avg_passes']):.0f}",
                "MDM sequential minus the anchor": f"{float(seq['pair_corr_pearson']) - a['pair_corr_pearson']:+.3f}",
            })  # fmt: skip
    return markdown(pd.DataFrame(out))


def family_ceiling_table() -> str:
    """Every set on one set of terms (results/family/ceiling.json, benchmarks/family_ceiling.py): n rows
    against held-out half B; the natural half A and the training rows' own statistics beside."""
    c = read_json(need(R / "family" / "ceiling.json", "python -m benchmarks.family_ceiling"))
    assert c is not None
    labels: list[str] = []
    for f in c["families"].values():
        labels += [k for k in f["rows"] if k not in labels]

    def cell(r: dict) -> str:
        lo, hi = r["pair_corr_ci90"]
        passes = f", {r['avg_passes']:.0f} passes" if r.get("avg_passes") is not None else ""
        return f"{r['pair_corr_pearson']:.3f} ({lo:.2f} .. {hi:.2f}){passes}"

    head = ["family", "n", "natural half A", "training statistics (n -> inf)"]
    head += [NAMES[k] if k in ANCHORS else k for k in labels]
    rows = []
    for fam, f in c["families"].items():
        rows.append(
            [fam, f["n"], cell(f["natural"]), f"{f['training_bound']:.3f}"]
            + [cell(f["rows"][k]) if k in f["rows"] else "" for k in labels]
        )
    return md_table(head, rows)


def family_head_table() -> str:
    """The family heads against the truth on held-out rows, beside the two trivial baselines."""
    out = []
    for fam in FAMILIES:
        r = _family_json(fam, "mi_report.json")
        if r is None:
            continue
        b = r["baselines"]
        pw = {
            k: f"{b[f'pearson_{k}']:.3f} / {b[f'within_state_pearson_{k}']:.3f}"
            for k in ("head", "separation", "separation_entropies")
        }
        out.append([fam, f"{b['eval_states']} / {b['eval_pairs']:,}", f"**{pw['head']}**", pw["separation"],
                    pw["separation_entropies"], f"{r['gt_passes_per_state']:.0f}"])  # fmt: skip
    cols = ["family", "states / pairs", "head: pooled / within-state Pearson", "separation only",
            "separation + entropies", "passes of the truth per state"]  # fmt: skip
    return md_table(cols, out)


def family_pairs_table(fam: str) -> str:
    """One family's pair statistics per sampler setting, the natural-vs-natural floor first."""
    path = need(R / "family" / fam / "sweep.csv", "make family-results")
    cols = ["sampler", "avg passes", "pair-correlation Pearson (+- sd)", "column-frequency Pearson",
            "Potts energy: mean / W1 to natural", "identity to the nearest training row"]  # fmt: skip
    out = []
    fl = _family_json(fam, "floor.json")
    if fl:
        out.append([f"*natural vs natural ({fl['n']} vs {fl['n']} held-out rows)*", "",
                    f"{fl['pair_corr_pearson']:.3f}", f"{fl['single_freq_pearson']:.3f}", "", ""])  # fmt: skip
    for r in rows_of(path):
        e = f"{float(r['mean_energy']):.1f} / {float(r['energy_w1']):.1f}" if r.get("mean_energy") else ""
        out.append([label(r), f"{float(r['avg_passes']):.1f}",
                    f"{float(r['pair_corr_pearson']):.3f} +- {float(r['pair_corr_sd']):.3f}",
                    f"{float(r['single_freq_pearson']):.3f}", e,
                    f"{float(r['nearest_identity_mean']):.3f}"])  # fmt: skip
    nat = next((r.get("natural_mean_energy") for r in rows_of(path) if r.get("natural_mean_energy")), None)
    if nat:
        out.append(["*natural held-out rows: mean Potts energy*", "", "", "", f"{float(nat):.1f}", ""])
    return md_table(cols, out)


FAMILY_CURVES = ("topk", "eb", "mi-zero", "mi lam=10", "mi-cap k=8 lam=0", "mi-cap k=8", "dawn")


def family_matched_table(
    at=(12, 16, 24, 32), curves=FAMILY_CURVES, labels: tuple[str, ...] | None = None, sweep="sweep.csv"
) -> str:
    """Pair-correlation Pearson of every sampler family at the same average passes, and each MI
    rule's lead over the best of its rivals there with its 90 % interval (benchmarks/fronts.py
    computes them and names the leads: results/family/fronts.json; this only formats; labels: which
    leads, default all)."""
    fronts = read_json(R / "family" / "fronts.json") or {"families": {}, "leads": []}
    leads = [(label, m, r) for label, m, r in fronts["leads"] if labels is None or label in labels]
    cols = ["family", "passes", *curves, "sequential (all passes)"]
    cols += [f"{m} minus {'the best of ' if len(r) > 1 else ''}{', '.join(r)} (90 % interval)" for _, m, r in leads]
    out = []
    for fam in FAMILIES:
        f = fronts["families"].get(fam, {}).get(sweep)
        if f is None:
            continue
        seq = f["sequential"]
        for x in at:
            at_x = f["at"][str(x)]
            cells = [f"{at_x['curves'][c]:.3f}" if c in at_x["curves"] else "" for c in curves]
            s = f"{seq['pair_corr_pearson']:.3f} ({seq['avg_passes']:.0f})" if seq else ""
            leads_x = [
                lead(v["diff"], v["sd_method"], v["sd_rival"], vs=v["vs"]) if (v := at_x["leads"].get(label)) else ""
                for label, _, _ in leads
            ]
            out.append([fam, str(x), *cells, s, *leads_x])
    return md_table(cols, out)


def family_oracle_table(setting=(4.0, 10.0)) -> str:
    """The MI rule on the backbone's exact MI (mi-gt, the oracle) beside the same rule on the head
    (mi) at one setting, on the test rows: does the head's estimate cost pair statistics? The
    difference's 90 % interval treats the two rows as independent (conservative: shared seeds)."""
    cols = ["family", "sampler (gamma 4, lambda 10)", "avg passes", "oracle passes / member",
            "pair-correlation Pearson (+- sd)", "column-frequency Pearson",
            "oracle minus head (90 % interval)"]  # fmt: skip
    out = []
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
            out.append(_pad([fam, "(no oracle row yet: `make family-results`)"], cols))
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
            out.append([fam, who, f"{float(r['avg_passes']):.1f}", o,
                        f"{float(r['pair_corr_pearson']):.3f} +- {float(r['pair_corr_sd']):.3f}",
                        f"{float(r['single_freq_pearson']):.3f}", d])  # fmt: skip
    return md_table(cols, out)


def family_models_table() -> str:
    """The shipped family backbones: size, data, budget, held-out fit beside the column profile."""
    cols = ["checkpoint", "parameters (float16)", "rows: train / held out (Neff)", "budget",
            "held-out pseudo-ppl (15 %) vs the column profile"]  # fmt: skip
    out = []
    for fam in FAMILIES:
        j = ROOT / "checkpoints" / f"family_{fam}.json"
        if not j.exists():
            continue
        meta = json.loads(j.read_text())
        sp, m, ex = meta["extra"]["split"], meta["metrics"], meta["extra"]
        params, size = family_weights(fam)
        out.append([
            f"`family_{fam}` ({size})",
            f"~{params / 1e6:.2f} M: ESM-C blocks, d {meta['config']['d_model']}, "
            f"{meta['config']['n_layers']} blocks, column embedding",
            f"{sp['train_rows']:,} / {sp['heldout_rows']:,} ({sp['neff_train']:,.0f} / {sp['neff_heldout']:,.0f})",
            f"kept step {meta['step']:,}, {ex.get('wall_seconds', 0) / 60:.0f} min on 2 CPU cores",
            f"{m['heldout_pseudo_ppl_15']:.2f} vs {m['profile_pseudo_ppl_15']:.2f}",
        ])  # fmt: skip
    return md_table(cols, out)


MI_GUIDED = ("mi", "mi-tc", "mi-cap", "mi-pairs")  # the rules that read the head (mi-gt: the oracle, apart)
EXTRACTION_NAMES = {"truth": "conditional MI", "jacobian_rows": "Jacobian"}


def family_targets_table() -> str:
    """The family targets (docs/results-family.md) per family, each cell read from the committed files: the backbone's
    extraction chosen without the structure (contact_classes.json "extraction") against MIp and
    plmDCA at all-pairs top-L/5; sequential's pair statistics against arDCA's interval; the best
    MI-guided test-sweep row at <= 1/3 of sequential's passes against sequential's interval."""
    cols = ["family", "extraction chosen (held-out covariation: MI / Jacobian)", "its top-L/5", "MIp", "plmDCA",
            ">= MIp", ">= plmDCA", "sequential vs arDCA (its interval)",
            "best MI rule at <= 1/3 passes (sequential's interval)"]  # fmt: skip
    out = []
    for fam in FAMILIES:
        r = _family_json(fam, "contact_classes.json")
        if r is None or "extraction" not in r:
            out.append(_pad([fam, "(no extraction choice yet: `python -m benchmarks.family_contact_classes`)"], cols))
            continue
        ch, p = r["extraction"], r["predictors"]
        best = p[ch["chosen"]]["precision_all_L5"]
        mipv = p["mip"]["precision_all_L5"]
        plm = p.get("plmdca", {}).get("precision_all_L5")
        yes = lambda ok: "yes" if ok else "**no**"  # noqa: E731
        cells = [
            f"{EXTRACTION_NAMES[ch['chosen']]} ({ch['scores']['truth']:.3f} / {ch['scores']['jacobian_rows']:.3f})",
            f"{best:.2f}",
            f"{mipv:.2f}",
            "" if plm is None else f"{plm:.2f}",
            yes(best >= mipv),
            "" if plm is None else yes(best >= plm),
        ]
        sweep = R / "family" / fam / "sweep.csv"
        rows = rows_of(sweep) if sweep.exists() else []
        seq = next((x for x in rows if x["sampler"] == "sequential"), None)
        if seq is None:
            out.append([fam, *cells, "(no test sweep yet)", ""])
            continue
        s, (slo, shi) = float(seq["pair_corr_pearson"]), json.loads(seq["pair_corr_ci90"])
        gen = ""
        if "ardca" in r:
            a, (alo, ahi) = r["ardca"]["pair_corr_pearson"], r["ardca"]["pair_corr_ci90"]
            gen = f"{s:.3f} vs {a:.3f} ({alo:.3f} .. {ahi:.3f}): {yes(s >= alo)}"
        cap = float(seq["avg_passes"]) / 3
        cand = [x for x in rows if x["sampler"] in MI_GUIDED and float(x["avg_passes"]) <= cap]
        top = max(cand, key=lambda x: float(x["pair_corr_pearson"]), default=None)
        mi = (
            ""
            if top is None
            else f"{label(top)}: {float(top['pair_corr_pearson']):.3f} at {float(top['avg_passes']):.1f} passes "
            f"({slo:.3f} .. {shi:.3f}): {yes(float(top['pair_corr_pearson']) >= slo)}"
        )
        out.append([fam, *cells, gen, mi])
    return md_table(cols, out)


# the generated blocks this module writes (`<!-- tables:NAME -->`), gathered by benchmarks/tables/__init__.py
BLOCKS = {
    "family_figure3": lambda: figure3_table(
        R / "family" / "PF00072" / "figure3.json.gz", "python -m benchmarks.family_figure3 --families PF00072"
    ),
    "family_contacts": family_contacts_table,
    "family_contacts_full": family_contacts_full_table,
    "family_contact_classes": family_contact_classes_table,
    "family_anchors": family_anchors_table,
    "family_ceiling": family_ceiling_table,
    "family_head": family_head_table,
    "family_matched": family_matched_table,
    "family_matched_val": lambda: family_matched_table(sweep="val_sweep/sweep.csv"),
    "family_models": family_models_table,
    "family_targets": family_targets_table,
    "family_oracle": family_oracle_table,
    **{f"family_pairs_{f}": functools.partial(family_pairs_table, f) for f in FAMILIES},
}
