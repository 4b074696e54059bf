"""Figures quoted in prose, written from their files like the tables: `<!-- v:NAME -->text<!-- /v -->`
in README.md or docs/*.md holds FIGURES[NAME]() (`--write` fills it, `--check` fails when the
sentence's figure differs from its file). A figure a reader sees in a sentence is then as
checked as one in a table; a sentence without such a mark is a reading, written by hand."""

from __future__ import annotations

import csv
import gzip
import json

import numpy as np

from mi_viz.core.paths import read_text

from .common import ROOT, Z_POWER, R, rows_of


def _json(path):
    return json.loads(read_text(ROOT / path))


def training_minutes(family: str) -> str:
    """A family backbone's training time from its checkpoint (wall_seconds), in minutes."""
    s = _json(f"checkpoints/family_{family}.json")["extra"]["wall_seconds"]
    return f"{round(s / 60)} minutes ({s:,} s)"


def oracle_passes() -> str:
    """The range of the oracle's ground-truth passes per generated member over the families (mi-gt rows)."""
    per = []
    for fam in ("PF00595", "PF00076", "PF00072", "PF00018", "PF00085"):
        per += [float(r["avg_oracle_passes"]) for r in rows_of(R / "family" / fam / "sweep.csv")
                if r["sampler"] == "mi-gt" and r.get("avg_oracle_passes")]  # fmt: skip
    return f"{min(per):,.0f}-{max(per):,.0f}"


def centroid_shifts() -> str:
    """Figure 3 (response regulator): each rule's members' centroid shift, in natural spreads."""
    sets = _json("results/family/PF00072/figure3.json.gz")["sets"]
    get = lambda prefix: next(v["centroid_shift"] for k, v in sets.items() if k.startswith(prefix))  # noqa: E731
    mi = [get(p) for p in ("mi-zero ", "mi ", "mi-cap ")]
    return (
        f"sequential's {get('sequential'):.2f}, the MI rules' {min(mi):.2f}-{max(mi):.2f}, "
        f"EB's {get('eb '):.2f}, top-k's {get('topk '):.2f}"
    )


def dawn_matched() -> str:
    """Where DAWN meets the MI rules at a matched pass count (results/family/fronts.json), and where not."""
    fams = _json("results/family/fronts.json")["families"]
    met = [f for f, v in fams.items() if any("vs dawn" in k for a in v["sweep.csv"]["at"].values() for k in a["leads"])]
    none = [f for f in fams if f not in met]
    below = all(
        d["diff"] > 0
        for f in met
        for a in fams[f]["sweep.csv"]["at"].values()
        for k, d in a["leads"].items()
        if "vs dawn" in k
    )
    text = (
        f"{'below' if below else 'not always below'} both MI rules at every matched pass count on {len(met)} families"
    )
    at = ", ".join(str(x) for x in _json("results/family/fronts.json")["at"])
    return text + (f" (on {', '.join(none)} its front meets theirs at none of {at} passes)" if none else "")


def mi_lead_over_rivals(family: str = "PF00072", at: str = "24") -> str:
    """mi-cap's lead over its best rival at one pass count of a family's test front."""
    d = _json("results/family/fronts.json")["families"][family]["sweep.csv"]["at"][at]["leads"]["mi-cap k=8"]
    return f"{d['diff']:+.3f}"


def antibody_cdr3(what: str) -> str:
    """The antibody CDR3 sweep's figures (results/antibody/olga/cdr3/sweep.csv): sequential's PLL, or the
    k-means JSD of every row (one value when the judge cannot tell the rows apart)."""
    rows = rows_of(R / "antibody" / "olga" / "cdr3" / "sweep.csv")
    if what == "sequential":
        return f"{float(next(r for r in rows if r['sampler'] == 'sequential')['pll']):.2f}"
    if what == "dawn_share":  # DAWN's passes as a share of sequential's
        seq, dawn = (next(r for r in rows if r["sampler"] == s) for s in ("sequential", "dawn"))
        return f"{100 * float(dawn['avg_passes']) / float(seq['avg_passes']):.0f} %"
    if what == "third":  # every curve's PLL at a third of sequential's passes (fronts.json)
        fr = _json("results/antibody/olga/fronts.json")["masks"]["cdr3"]
        third = min(fr["at"], key=lambda k: abs(float(k) - fr["sequential"]["avg_passes"] / 3))
        v = fr["at"][third]["curves"].values()
        return f"{max(v):.1f} to {min(v):.1f}"
    vals = sorted({f"{float(r['jsd']):.3f}" for r in rows if r.get("jsd")})
    return vals[0] if len(vals) == 1 else f"{vals[0]}-{vals[-1]}"


def jacobian_rows(family: str = "PF00595", rows: int = 134) -> str:
    """The Jacobian on more held-out rows (experiments/runs/family_jacobian_rows.py) against the committed 50."""
    r = _json(f"results/family/{family}/jacobian_rows_{rows}.json")
    more, base = r["scores"][f"jacobian_rows_{rows}"], r["scores"]["jacobian_rows_50 (committed)"]
    return (
        f"top-L/5 {more['precision_all_L5']:.2f} against {base['precision_all_L5']:.2f} with 50, long-range top-L "
        f"{more['precision_long_L']:.2f} against {base['precision_long_L']:.2f}, "
        f"MIp {r['scores']['mip']['precision_all_L5']:.2f}; "
        f"{r['cost']['rows']['passes']:,} passes, {r['wall_seconds'] / 60:.0f} minutes of one core"
    )


def antibody_paired(at: str = "5.38") -> str:
    """A lead of results/antibody/olga/fronts_paired.json with its paired 90 % interval."""
    v = _json("results/antibody/olga/fronts_paired.json")["at"][at]
    return f"{v['diff']:+.3f}, {v['paired_lo']:+.3f} .. {v['paired_hi']:+.3f}"


def jacobian_blend(family: str = "PF00595") -> str:
    """The consensus row's share in the Jacobian (experiments/runs/family_jacobian_blend.py): a family's
    top-L/5 at each share, and the share the structure-free criterion picks on each family."""
    r = _json("results/family/jacobian_blend.json")["families"]
    b = r[family]["blends"]
    at = ", ".join(f"{k.split()[1]}: {v['precision_all_L5']:.2f}" for k, v in b.items())
    picks = ", ".join(f"{f} {v['criterion_pick'].split()[1]}" for f, v in r.items())
    return f"top-L/5 by share {at} (MIp {r[family]['mip']['precision_all_L5']:.2f}); the criterion picks {picks}"


def small_backbone(family: str = "PF00595") -> str:
    """A backbone a fifth the size against the shipped one (experiments/runs/family_small_backbone.py)."""
    r = _json(f"results/family/{family}/small_backbone.json")
    small, shipped = (r["backbones"][w]["heldout"] for w in ("small", "shipped"))
    jac = {w: r["scores"][f"{w} jacobian_rows"]["precision_all_L5"] for w in ("small", "shipped")}
    return (
        f"held-out cross-entropy at 15 % masked {small['heldout_ce_15']:.3f} against {shipped['heldout_ce_15']:.3f} "
        f"(the whole MDM loss {small['heldout_mdm_loss']:.3f} against {shipped['heldout_mdm_loss']:.3f}), "
        f"Jacobian top-L/5 {jac['small']:.2f} against {jac['shipped']:.2f}"
    )


def antibody_cdr3_pairs() -> str:
    """The infilled CDR3s' pair-correlation Pearson range against the test chains' own
    (benchmarks/antibody_cdr3_pairs.py)."""
    sets = _json("results/antibody/olga/cdr3_pairs.json")["sets"]
    nat = next(v for k, v in sets.items() if k.startswith("natural"))
    gen = [v["pair_corr_pearson"] for k, v in sets.items() if not k.startswith("natural")]
    natural = f"{nat['pair_corr_pearson']:.3f} for the natural CDR3s, {nat['n']} each"
    return f"{min(gen):.3f}-{max(gen):.3f} for every infill, {natural}"


def oracle_power() -> str:
    """What the MI vs TV oracles on Sapiens VH can detect: the per-chain spread of exact MI minus exact TV
    at their validated settings (mi-gt gamma 8 lambda 10, demask-gt tau 0.2: the heads' choices), the
    smallest difference their chains detect at 80 % power, and the chains 0.05 nats would need."""

    def pll(label: str) -> np.ndarray:
        with gzip.open(R / "antibody" / "sapiens" / "oracles" / "rows" / f"{label}.csv.gz", "rt") as f:
            return np.array([float(r["pll"]) for r in sorted(csv.DictReader(f), key=lambda r: int(r["i"]))])

    d = pll("mi-gt_gamma=8_lam=10") - pll("demask-gt_tau=0.2_conf=0")
    z = Z_POWER
    sd = float(d.std(ddof=1))
    return (
        f"{len(d)} chains of per-chain spread {sd:.2f} detect about {z * sd / np.sqrt(len(d)):.2f} nats at 80 % power; "
        f"0.05 needs about {round((z * sd / 0.05) ** 2, -1):.0f}"
    )


FIGURES = {
    "antibody_cdr3_pairs": antibody_cdr3_pairs,
    "pdz_small_backbone": small_backbone,
    "pdz_jacobian_blend": jacobian_blend,
    "antibody_paired_third": antibody_paired,
    "pdz_jacobian_134": jacobian_rows,
    "pdz_training": lambda: training_minutes("PF00595"),
    "family_oracle_passes": oracle_passes,
    "family_centroid_shifts": centroid_shifts,
    "family_dawn_matched": dawn_matched,
    "family_micap_pf00072_24": mi_lead_over_rivals,
    "antibody_sequential_pll": lambda: antibody_cdr3("sequential"),
    "antibody_jsd": lambda: antibody_cdr3("jsd"),
    "antibody_third": lambda: antibody_cdr3("third"),
    "antibody_dawn_share": lambda: antibody_cdr3("dawn_share"),
    "oracle_power": oracle_power,
}
