"""The family counterpart of the paper's Figure 3: generated members beside natural ones, in a
PCA of the alignment's own one-hot columns.

    python -m benchmarks.family_figure3 [--families PF00072] [--n 200]

Each setting's members are those of the family's test sweep (results/family/NAME/sweep.csv: 200
members from an all-masked row, temperature 1, sample seed 0), decoded again exactly as the
sweep decodes them (run_bench: the sweep keeps no members). A member is embedded as its aligned
columns one-hot (the alignment's own coordinates: no model in the judge); the PCA is fitted on
the held-out natural rows alone, so every set is seen in the natural rows' main axes; each set's
centroid shift is in units of the natural spread, as for proteins (benchmarks/protein_figure3.py,
whose drawing this reuses). The alignment is the user's (../shared/data/protein_families here).

Writes results/family/NAME/figure3.json.gz (gzip: the points' coordinates) and figure3.png beside it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch

from benchmarks.protein_figure3 import draw, pca_result
from benchmarks.report import save
from mi_viz.core.bench import run_bench
from mi_viz.core.models import load_models
from mi_viz.core.sweep import parse_grid
from mi_viz.domains.family import family_domain
from mi_viz.domains.family.alignment import read_alignment
from mi_viz.domains.family.backbone import to_values
from mi_viz.domains.family.train import data_for

ROOT = Path(__file__).resolve().parents[1]
# the test sweep's rows a reader compares (docs/results-family.md: family_matched), and DAWN
GRID = (
    "sequential; topk:k=8; eb:gamma=4; mi-zero:gamma=4; mi:gamma=4:lam=10; mi-cap:k=8:gamma=32:lam=300; "
    "dawn:induce=0.5:low=0.5"
)


def one_hot(values: np.ndarray, V: int) -> np.ndarray:
    """(N, L) value indices -> (N, L * V) one-hot columns."""
    return np.eye(V, dtype=np.float32)[values].reshape(len(values), -1)


def figure3(name: str, data_dir: Path, n: int, grid: str) -> dict:
    from sklearn.decomposition import PCA  # an optional heavy import, as in protein_figure3

    dom = family_domain(name)
    model, head = load_models(dom, need_head=dom.default_head() is not None)
    data = data_for(dom.meta, read_alignment(data_dir / name / f"{name}.align.80.fasta"))
    V = int(model.value_tokens.numel())
    natural = np.asarray(data.heldout_rows)
    pca = PCA(n_components=2, random_state=0).fit(one_hot(natural, V))
    z_nat = pca.transform(one_hot(natural, V))
    sets = {"natural (held-out rows)": {"n": len(natural), "source": "the alignment's held-out rows", "pc": z_nat}}
    for cfg in parse_grid(grid, dom.sampler_defaults):
        cfg = cfg.replace(temperature=1.0, seed=0)
        res = run_bench(dom, model, ["_" * dom.width] * n, cfg, head if cfg.needs_head else None)
        values = to_values(dom.encode([r["sequence"] for r in res.rows])).numpy()  # (n, L)
        pc = pca.transform(one_hot(values, V))
        sets[cfg.label()] = {"n": n, "source": "decoded as the test sweep decodes", "pc": pc}
        print(name, cfg.label(), flush=True)
    return {"family": name, **pca_result("the aligned columns one-hot", pca, sets)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--families", nargs="+", default=["PF00072"])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "protein_families"))
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--grid", default=GRID)
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    for name in a.families:
        res = figure3(name, Path(a.data), a.n, a.grid)
        out = ROOT / "results" / "family" / name / "figure3.json.gz"
        save(res, out, {k: v["centroid_shift"] for k, v in res["sets"].items()})
        draw(res, out.parent / "figure3.png")


if __name__ == "__main__":
    main()
