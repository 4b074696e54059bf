"""The models table (every shipped checkpoint, from its own files) and the float16 storage table."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import torch

from mi_viz.core.checkpoints import checkpoint_paths, weights_header
from mi_viz.domains.family import BUILT_HERE
from mi_viz.domains.family import SHIPPED as FAMILIES
from mi_viz.domains.family.backbone import FamilyBackbone, FamilyMDMConfig

from .common import ROOT, R, markdown, need, rows_of

MODEL_DATA = {  # what each shipped checkpoint was trained on (words); every number comes from its files
    "sudoku_mdm": "100,000 random grids under random Sudoku symmetries",
    "sudoku_mi_head": "7,317 ground-truth states made on the CPU (`make mi-data`)",
    "sudoku_tv_head": "1,461 states' exact TV influence (DEMASK's measure; the first 2 shards of "
    "`make sudoku-tv-data`)",
    "protein_mdm": "Swiss-Prot training split (212,295 proteins)",
    "protein_mi_head": "675 ground-truth states made on the CPU (`data/protein/mi_states.safetensors`)",
    "antibody_mi_head": "527 ground-truth states of AntiBERTy (its PyPI wheel's weights) on OLGA chains "
    "(`make antibody-mi-data`)",
    "antibody_sapiens_vh_mi_head": "598 ground-truth states of Sapiens VH (its PyPI wheel's weights) on OLGA "
    "heavy chains (`make antibody-sapiens`)",
    "antibody_sapiens_vh_tv_head": "the same 598 states' exact TV influence (DEMASK's measure; "
    "`make antibody-sapiens-tv`)",
    "antibody_tv_head": "599 states' exact TV influence (DEMASK's measure), AntiBERTy on OLGA chains, the MI "
    "head's job list made again with TV stored (`make antibody-mi-data antibody-tv-head`)",
}


def n_params(weights: Path) -> int:
    """Parameters of a checkpoint, from its header (no tensor is read); optimizer state excluded."""
    header, _ = weights_header(weights)
    total = 0
    for k, v in header.items():
        if k != "__metadata__" and not k.startswith("opt."):
            size = 1
            for d in v["shape"]:
                size *= d
            total += size
    return total


def family_weights(fam: str) -> tuple[int, str]:
    """A family backbone's parameters and its size as loaded ("2.1 MiB"), or, for one whose weights
    stay out of the tree (family.BUILT_HERE; built here or not: the table is the tree's), the
    parameters its config's network has (the same count: checked against the shipped headers) and
    how to build it."""
    w = ROOT / "checkpoints" / f"family_{fam}"
    if fam not in BUILT_HERE:
        return n_params(w), f"{weights_header(w)[1] / 2**20:.1f} MiB"
    with torch.device("meta"):  # shapes only: no memory, no weights
        net = FamilyBackbone(FamilyMDMConfig(**json.loads(checkpoint_paths(w)[1].read_text())["config"]))
    return sum(v.numel() for v in net.state_dict().values()), f"built by `make family-{fam}`"


def _duration(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 5400 else f"{seconds / 60:.0f} min"


def _lineage_seconds(log: Path) -> float | None:
    """Wall seconds of a head trained in chained runs: the last time of each run in its lineage log."""
    if not log.exists():
        return None
    last: dict[str, float] = {}
    for r in rows_of(log):
        last[r.get("run", "")] = float(r["seconds"])
    return sum(last.values())


def models_table() -> str:
    """The README's Models table, from the checkpoints' own files: size, parameters, the kept step,
    training wall time and device, and the held-out figure each recorded."""
    out = []
    for name, data in MODEL_DATA.items():
        w, j = checkpoint_paths(ROOT / "checkpoints" / name)
        if not j.exists():
            continue
        meta = json.loads(j.read_text())
        ex, m = meta.get("extra", {}), meta.get("metrics", {})
        secs = ex.get("wall_seconds") or ex.get("seconds") or 0.0
        lineage = _lineage_seconds(R / f"{name}_log.csv") if name == "sudoku_mi_head" else None
        device = "one GPU" if ex.get("device") == "cuda" else "2 CPU cores"
        train = f"kept step {meta['step']:,}, after {_duration(lineage or secs)} on {device}"
        if lineage:
            train += " (four chained runs: `results/sudoku_mi_head_log.csv`)"
        if "tokens" in ex:
            train += f"; {ex['tokens'] / 1e6:.0f} M residues"
        if "val_pearson" in m:
            held = f"Pearson {m['val_pearson']:.3f} ({ex.get('n_val_states', '?')} held-out states)"
        elif "val_solved" in m:
            held = f"sequential solves {100 * m['val_solved']:.1f} % of the validation puzzles"
        else:
            held = f"pseudo-ppl {m['val_pseudo_ppl_15']:.1f} at 15 % masked"
        size = f"{weights_header(w)[1] / 2**20:.1f} MiB"  # as loaded (shipped xz-compressed)
        if ex.get("stored_dtype") == "float16":  # training/ship_float16.py: the figure is the float32 run's
            size += ", float16"
            held += " (training run, float32)"
        out.append([f"`{name}` ({size})", f"{n_params(w):,}", data, train, held])
    fams = [f for f in FAMILIES if (ROOT / "checkpoints" / f"family_{f}.json").exists()]
    shipped = [f for f in fams if f not in BUILT_HERE]
    if shipped:
        sizes = [weights_header(ROOT / "checkpoints" / f"family_{f}")[1] / 2**20 for f in shipped]
        built = [f for f in fams if f in BUILT_HERE]
        out.append([
            f"`family_{'`, `family_'.join(shipped)}` ({min(sizes):.1f} MiB each, float16) and their `_mi_head`s"
            + "".join(f"; `family_{f}` built here (`make family-{f}`)" for f in built),
            f"{n_params(ROOT / 'checkpoints' / f'family_{shipped[0]}'):,} ({shipped[0]})",
            "each family's alignment, 10 % held out by identity groups",
            "about 80 passes over the training rows",
            "[docs/results-family.md](docs/results-family.md)",
        ])  # fmt: skip
    return markdown(pd.DataFrame(out, columns=["checkpoint", "parameters", "data", "training", "held-out"]))


def float16_table(path=None) -> str:
    """What storing the two backbones in float16 changed (experiments/runs/float16_storage.py)."""
    path = need(path or R / "float16_storage.json", "python -m experiments.runs.float16_storage --out {rel}")
    f = json.loads(path.read_text())
    cells = {  # column: its cell, a template over the backbone's record
        "backbone": "{name}",
        "states (masked positions)": "{states} ({masked_positions:,})",
        "max / mean abs logit change": "{max_abs_logit_diff:.4f} / {mean_abs_logit_diff:.5f}",
        "max abs probability change": "{max_abs_prob_diff:.4f}",
        "argmax flips": "{argmax_flips}",
    }
    table = [{c: t.format(name=name, **o) for c, t in cells.items()} for name, o in f["outputs"].items()]
    out = [markdown(pd.DataFrame(table))]
    d = f.get("table1_decodes")
    out.append("")
    if d:
        out.append(
            f"Table 1's {len(d['settings'])} settings, {d['decodes']:,} puzzle decodes: {d['changed']:,} changed their "
            f"outcome (solved or passes) against the float32 rows at {f['float32_rev']}; the largest change of a "
            f"solve rate is {d['max_abs_solve_rate_change']:.1f} points."
        )
    t = f.get("table2_resample")
    if t:
        k, u = t["jsd"], t["jsd_unirep"]
        out.append(
            f"Table 2's {k['rows']} rows, every protein in effect sampled again (one flipped draw changes the rest "
            f"of a sequence): the k-means JSD moved by {k['mean_abs_change']:.3f} on average (at most "
            f"{k['max_abs_change']:.3f}), UniRep's by {u['mean_abs_change']:.3f} (at most {u['max_abs_change']:.3f})."
        )
    return "\n".join(out)


# the generated blocks this module writes (`<!-- tables:NAME -->`), gathered by benchmarks/tables/__init__.py
BLOCKS = {"models": models_table, "float16": float16_table}
