"""How each sampler spreads its parallelism over a family decode: the mean batch size of the
first steps, from all-masked (docs/results-family.md: why top-k keeps pair statistics here).

    python -m experiments.runs.family_batches [--family PF00076] [--n 40] \
        [--out results/family/PF00076/batch_sizes.json]

Budget samplers (EB, mi-zero, mi) take their largest batches first, when nothing is observed;
top-k takes the same number every step. Temperature 1, sample seed 1 (the validation sweep's).
"""

from __future__ import annotations

import argparse
from dataclasses import replace

import numpy as np

from benchmarks.report import save
from mi_viz.core.models import load_models
from mi_viz.core.samplers import config_for, decode
from mi_viz.domains.family import family_domain

SETTINGS = {
    "topk k=4": ("topk", {"k": 4}),
    "eb gamma=8": ("eb", {"gamma": 8.0}),
    "mi-zero gamma=8": ("mi-zero", {"gamma": 8.0}),
    "mi gamma=8 lam=10": ("mi", {"gamma": 8.0, "lam": 10.0}),
}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--family", default="PF00076")
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    dom = family_domain(a.family)
    model, head = load_models(dom, dom.checkpoint, None, "cpu", need_head=True)
    x = dom.encode(["_" * dom.width] * a.n)  # (n, width) all masked
    res = {"family": dom.family, "width": dom.width, "n": a.n, "seed": 1, "samplers": {}}
    for label, (name, kw) in SETTINGS.items():
        cfg = replace(config_for(name, dom.sampler_defaults, **kw), temperature=1.0, seed=1)
        out = decode(model, x, cfg, head=head if cfg.needs_head else None, record=True)
        first = [[len(s.selected) for s in tr.steps[: a.steps]] for tr in out.traces if len(tr.steps) >= a.steps]
        res["samplers"][label] = {
            "passes": round(float(np.mean([len(tr.steps) for tr in out.traces])), 2),
            "first_batches": [round(float(v), 2) for v in np.mean(first, axis=0)],
        }
        print(f"{label:18s} {res['samplers'][label]}")
    save(res, a.out)


if __name__ == "__main__":
    main()
