"""Head probes: which change to the MI head, or to its data, moves held-out Pearson?

    python training/head_probes.py --data runs/gpu_mi_data --out results/sudoku/head_probes.csv

Each probe is one short train_head.py run (same data, same held-out 5 %, same seed,
same step budget unless it says otherwise) that differs from the shipped head's
configuration in one thing. The CSV gets one row per probe: its arguments, the
parameter count, the held-out loss and Pearson of its best checkpoint, and the wall
time, and the Pearson on a dev set (decode states of the hard validation puzzles: see
dev_states). Rows already in the CSV (same name and arguments) are kept, so an interrupted
run resumes where it stopped. Equal budgets make the probes comparable with each
other, not with the shipped head (trained longer); `base` with two seeds says how
large a difference has to be before it means anything.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import train_head  # noqa: E402

import torch  # noqa: E402
from safetensors.torch import load_file, save_file  # noqa: E402

from mi_viz import sudoku as S  # noqa: E402  (train_head put the repository on the path)
from mi_viz.estimator import load_head  # noqa: E402
from mi_viz.fidelity import pearson, sample_states  # noqa: E402
from mi_viz.mi import ground_truth_mi  # noqa: E402
from mi_viz.models import load_mdm  # noqa: E402
from mi_viz.models.sudoku_mdm import MASK_TOKEN  # noqa: E402

SHIPPED = "--hidden-layers 2 --batch-size 32"  # the shipped head's configuration (train_head.py arguments)
PROBES = [  # (name, what differs from the shipped configuration)
    ("base", []),
    ("base seed 1", ["--seed", "1"]),
    ("half the training states", ["--train-states", "2000"]),
    ("a quarter of the training states", ["--train-states", "1000"]),
    ("2 mix blocks over the masked cells", ["--mix-layers", "2"]),
    ("attention maps of the last block", ["--attn-layers", "5"]),
    ("attention maps of all 6 blocks", ["--attn-layers", "0,1,2,3,4,5"]),
    ("wider pair layer (rank 128, d_pair 64)", ["--rank", "128", "--d-pair", "64"]),
]


def dev_states(mdm_path, cache: Path, puzzles_path: str, n_states: int = 100):
    """Decode states of the HARD validation puzzles with their ground truth: tokens (N, 81), mi (N, 81, 81).

    The held-out 5 % of the MI data set come from the training distribution (all kinds of
    training puzzles, random maskings); the report's states come from hard test puzzles.
    A probe that helps on the first and not on the second has learned the training mix,
    so every probe is also scored here: hard puzzles the head never trained on, and not
    the test set (cached: the ground truth is computed once).
    """
    if cache.exists():
        d = load_file(str(cache))
        return d["tokens"].long(), d["mi"]
    mdm, _ = load_mdm(mdm_path)
    hard = [p for p in S.read_puzzle_file(puzzles_path).puzzles if not S.rate(p).singles_solvable]
    if not hard:
        raise SystemExit(f"no hard (not singles-solvable) puzzles in {puzzles_path} for the dev set")
    tokens = sample_states(mdm, hard, n_states, seed=0)
    mi = torch.cat([ground_truth_mi(mdm, tokens[k : k + 1], eps=1e-3).mi for k in range(len(tokens))])
    cache.parent.mkdir(parents=True, exist_ok=True)
    save_file({"tokens": tokens.to(torch.uint8), "mi": mi.float()}, str(cache))
    return tokens, mi


@torch.no_grad()
def dev_pearson(mdm, head, tokens, mi) -> float:
    """Pearson between head and ground truth over the masked pairs i < j of the dev states."""
    masked = tokens == MASK_TOKEN  # (N, L)
    est = head.read(head.backbone_pass(mdm, tokens), masked)  # (N, L, L)
    pair = masked[:, :, None] & masked[:, None, :] & torch.ones(81, 81, dtype=torch.bool).triu(1)
    return pearson(est[pair].numpy(), mi[pair].numpy())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mdm", default="checkpoints/sudoku_mdm")
    ap.add_argument("--data", default="runs/gpu_mi_data")
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--runs", default="runs/head_probes", help="where the probes' checkpoints and logs go")
    ap.add_argument("--out", default="results/sudoku/head_probes.csv")
    ap.add_argument("--only", default="", help="comma-separated probe names to run (default: all)")
    ap.add_argument("--dev-puzzles", default="data/sudoku/generated/val_puzzles.txt",
                    help="the dev set's states come from decodes of the hard puzzles of this file")
    ap.add_argument("--dev-states", type=int, default=100)
    ap.add_argument("--base-args", default=SHIPPED, help="train_head.py arguments every probe starts from")
    a = ap.parse_args(argv)
    out = Path(a.out)
    fields = ["probe", "args", "steps", "n_params", "n_train_states", "best_step", "val_loss", "val_pearson",
              "dev_pearson", "seconds"]
    done = {}
    if out.exists():
        with open(out, newline="") as f:
            done = {(r["probe"], r["args"], r["steps"]): r for r in csv.DictReader(f)}
    only = {s.strip() for s in a.only.split(",") if s.strip()}
    dev_tok, dev_mi = dev_states(a.mdm, Path(a.runs) / "dev_states.safetensors", a.dev_puzzles, a.dev_states)
    mdm, _ = load_mdm(a.mdm)
    rows = []
    for name, extra in PROBES:
        args = " ".join(a.base_args.split() + extra)
        key = (name, args, str(a.steps))
        if key in done:
            rows.append(done[key])
            continue
        if only and name not in only:
            continue
        run = Path(a.runs) / name.replace(" ", "_").replace(",", "").replace("(", "").replace(")", "")
        ckpt = run / "sudoku_mi_head"
        print(f"== probe: {name} ({args})", flush=True)
        t0 = time.time()
        train_head.main(["--mdm", a.mdm, "--data", a.data, "--out", str(ckpt), "--steps", str(a.steps),
                         "--eval-every", str(max(1, a.steps // 4))] + args.split())
        meta = json.loads(ckpt.with_suffix(".json").read_text())
        head, _ = load_head(ckpt)
        rows.append({"probe": name, "args": args, "steps": a.steps, "n_params": head.n_params(),
                     "n_train_states": meta["extra"]["n_train_states"], "best_step": meta["step"],
                     "val_loss": round(meta["metrics"]["val_loss"], 4),
                     "val_pearson": round(meta["metrics"]["val_pearson"], 4),
                     "dev_pearson": round(dev_pearson(mdm, head, dev_tok, dev_mi), 4),
                     "seconds": round(time.time() - t0)})
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "w", newline="") as f:  # rewritten after every probe: an interruption loses one probe
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            w.writerows(rows)
    for r in rows:
        print(f"{r['probe']:<42} held-out {r['val_pearson']:>7}  dev {r['dev_pearson']:>7}  {r['n_params']:>9} params")


if __name__ == "__main__":
    main()
