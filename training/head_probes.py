"""Head probes: which change to the MI head, or to its data, moves held-out Pearson?

    python training/head_probes.py --data runs/gpu_mi_data --out results/sudoku/head_probes.csv
    python training/head_probes.py --score HEAD [--score HEAD ...] --out results/sudoku/head_candidates.csv

Each probe is one short train_head.py run (same data, same held-out 5 %, same seed,
same step budget unless it says otherwise) that differs from the probes' base (the
shipped head's configuration without symmetry augmentation) in one thing. The CSV gets
one row per probe: its arguments, the parameter count, the held-out loss and Pearson of
its best checkpoint, the Pearson on a dev set (decode states of the hard validation
puzzles), the structure AUROC on 90 %-masked solutions of those puzzles (see
truth_set), and the wall time. Rows
already in the CSV (same name and arguments) are kept, so an interrupted run resumes
where it stopped. Equal budgets make the probes comparable with each
other, not with the shipped head (trained longer); `base` with two seeds says how
large a difference has to be before it means anything.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import train_head  # noqa: E402

import torch  # noqa: E402
from safetensors.torch import load_file, save_file  # noqa: E402

from mi_viz import sudoku as S  # noqa: E402  (train_head put the repository on the path)
from mi_viz.estimator import load_head  # noqa: E402
from mi_viz.fidelity import auroc, pair_table, pearson, sample_states  # noqa: E402
from mi_viz.mi import ground_truth_mi  # noqa: E402
from mi_viz.models import load_mdm  # noqa: E402
from mi_viz.models.sudoku_mdm import MASK_TOKEN, boards_to_tokens  # noqa: E402

# The probes' base: the shipped head's configuration before symmetry augmentation (train_head.py
# arguments). It stays the base so that the committed rows keep their keys; the shipped
# recipe is the probe "symmetry augmentation" (at the probes' budget).
SHIPPED = "--hidden-layers 2 --batch-size 32"
PROBES = [  # (name, what differs from the base, SHIPPED)
    ("base", []),
    ("base seed 1", ["--seed", "1"]),
    ("half the training states", ["--train-states", "2000"]),
    ("a quarter of the training states", ["--train-states", "1000"]),
    ("2 mix blocks over the masked cells", ["--mix-layers", "2"]),
    ("attention maps of the last block", ["--attn-layers", "5"]),
    ("attention maps of all 6 blocks", ["--attn-layers", "0,1,2,3,4,5"]),
    ("wider pair layer (rank 128, d_pair 64)", ["--rank", "128", "--d-pair", "64"]),
    # the data set's random maskings stop at 80 %; the rules regime is 90 % (make head-probes makes this folder)
    ("+ 150 states masked 85-95 %", ["--extra-data", "runs/mi_data_high"]),
    ("MI of a mixture of 32 products instead of the pair MLP", ["--mixture", "32"]),
    ("bound (H_i + H_j)/2 (a second term above the min)", ["--excess"]),
    # do the two that helped most add up?
    ("attention maps of all 6 blocks + bound (H_i + H_j)/2", ["--attn-layers", "0,1,2,3,4,5", "--excess"]),
    ("attention maps of all 6 blocks + bound (H_i + H_j)/2 + 2 mix blocks",
     ["--attn-layers", "0,1,2,3,4,5", "--excess", "--mix-layers", "2"]),
    ("attention maps of all 6 blocks + two-hop paths through masked cells",
     ["--attn-layers", "0,1,2,3,4,5", "--attn-two-hop"]),
    # the truth is nearly equivariant under Sudoku's symmetries, the shipped head much less so
    ("symmetry augmentation", ["--augment"]),
    # the last block's maps cost little since the channels-last pair layer: do they add to augmentation?
    ("symmetry augmentation + attention maps of the last block", ["--augment", "--attn-layers", "5"]),
    # the shipped recipe since the bound held up at 6,000 steps
    ("symmetry augmentation + bound (H_i + H_j)/2", ["--augment", "--excess"]),
    # the MI a direct link would carry is a fixed non-linear function of the two marginals: give it exactly
    ("MI of a direct exclusion / agreement link as pair features", ["--link"]),
    ("symmetry augmentation + bound (H_i + H_j)/2 + direct-link MI", ["--augment", "--excess", "--link"]),
]


def run_dir_name(probe: str) -> str:
    """'wider pair layer (rank 128, d_pair 64)' -> 'wider_pair_layer_rank_128_d_pair_64': one folder, no '/'."""
    return re.sub(r"[^\w%+.-]+", "_", probe).strip("_")


def _hard(puzzles_path: str):
    hard = [p for p in S.read_puzzle_file(puzzles_path).puzzles if not S.rate(p).singles_solvable]
    if not hard:
        raise SystemExit(f"no hard (not singles-solvable) puzzles in {puzzles_path} for the probes' scoring sets")
    return hard


def truth_set(kind: str, mdm_path, cache: Path, puzzles_path: str, n_states: int, device="cpu"):
    """A scoring set with its ground truth, computed once and cached: tokens (N, 81), mi (N, 81, 81).

    "dev": decode states of the HARD validation puzzles. The held-out 5 % of the MI data
    set come from the training distribution (all kinds of training puzzles, random
    maskings) while the report's states come from hard test puzzles: a probe that helps on
    the first and not here has learned the training mix.
    "rules": the solutions of those puzzles with 90 % of the cells masked (seeded), where
    the rules are the model's only dependence: the regime of the structure AUROC's claim
    (docs/mi.md, Fidelity metrics). Neither set touches the test puzzles.
    """
    if cache.exists():
        d = load_file(str(cache))
        return d["tokens"].long(), d["mi"]
    mdm, _ = load_mdm(mdm_path, device=device)
    hard = _hard(puzzles_path)
    if kind == "dev":
        tokens = sample_states(mdm, hard, n_states, seed=0, device=device).cpu()
    else:
        g = torch.Generator().manual_seed(0)
        sols = boards_to_tokens([S.solve(hard[k % len(hard)]).solution for k in range(n_states)])  # (N, 81)
        m = torch.rand(sols.shape, generator=g) < 0.9
        m[:, :2] = True  # at least one pair
        tokens = torch.where(m, torch.full_like(sols, MASK_TOKEN), sols)
    mi = torch.cat([ground_truth_mi(mdm, tokens[k : k + 1].to(device), eps=1e-3).mi.cpu() for k in range(len(tokens))])
    cache.parent.mkdir(parents=True, exist_ok=True)
    save_file({"tokens": tokens.to(torch.uint8), "mi": mi.float()}, str(cache))
    return tokens, mi


@torch.no_grad()
def head_vs_truth(mdm, head, tokens, mi) -> tuple[float, float, float]:
    """(Pearson, structure AUROC of the head, of the truth) over the masked pairs i < j of the states."""
    x = tokens.to(next(mdm.parameters()).device)
    est = head.to(x.device).read(head.backbone_pass(mdm, x), x == MASK_TOKEN).cpu()  # (N, L, L)
    pt = pair_table(tokens, mi, est, torch.zeros_like(mi))  # the report's own pair extraction
    related = pt.relation > 0
    return pearson(pt.est, pt.gt), auroc(pt.est, related), auroc(pt.gt, related)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mdm", default="checkpoints/sudoku_mdm")
    ap.add_argument("--data", default="runs/gpu_mi_data")
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--runs", default="runs/head_probes", help="where the probes' checkpoints and logs go")
    ap.add_argument("--out", default="results/sudoku/head_probes.csv")
    ap.add_argument("--only", default="", help="comma-separated probe names to run (default: all)")
    ap.add_argument("--dev-puzzles", default="data/sudoku/generated/val_puzzles.txt",
                    help="the scoring sets come from the hard puzzles of this file")
    ap.add_argument("--dev-states", type=int, default=100)
    ap.add_argument("--rules-states", type=int, default=30)
    ap.add_argument("--base-args", default=SHIPPED, help="train_head.py arguments every probe starts from")
    ap.add_argument("--score", action="append", default=[], metavar="HEAD",
                    help="instead of training probes, score these head checkpoints (repeat) on the same "
                         "held-out / dev / rules sets; one CSV row each (candidates trained at other budgets)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu",
                    help="for the scoring sets' ground truth and the scoring (training: train_head's own default)")
    a = ap.parse_args(argv)
    out = Path(a.out)
    fields = ["probe", "args", "steps", "n_params", "n_train_states", "best_step", "val_loss", "val_pearson",
              "dev_pearson", "rules_auroc", "rules_auroc_truth", "seconds"]
    done = {}
    if out.exists() and not a.score:
        with open(out, newline="") as f:
            done = {(r["probe"], r["args"], r["steps"]): r for r in csv.DictReader(f)}
    only = {s.strip() for s in a.only.split(",") if s.strip()}
    unknown = only - {name for name, _ in PROBES}
    if unknown:  # a misspelt name would otherwise run nothing, silently (gpu_head_run.sh passes names)
        ap.error(f"unknown probe(s) {sorted(unknown)}; the probes are: {[name for name, _ in PROBES]}")
    sets = {kind: truth_set(kind, a.mdm, Path(a.runs) / f"{kind}_states.safetensors", a.dev_puzzles, n, a.device)
            for kind, n in (("dev", a.dev_states), ("rules", a.rules_states))}
    mdm, _ = load_mdm(a.mdm, device=a.device)

    def scores(ckpt) -> dict:
        head, _ = load_head(ckpt)
        dev_r, _, _ = head_vs_truth(mdm, head, *sets["dev"])
        _, rules_est, rules_gt = head_vs_truth(mdm, head, *sets["rules"])
        return {"n_params": head.n_params(), "dev_pearson": round(dev_r, 4), "rules_auroc": round(rules_est, 4),
                "rules_auroc_truth": round(rules_gt, 4)}

    def checkpoint_row(ckpt, meta) -> dict:
        """What a trained head's checkpoint says of itself (its best held-out step) plus its scores."""
        return {"best_step": meta["step"], "val_loss": round(meta["metrics"]["val_loss"], 4),
                "val_pearson": round(meta["metrics"]["val_pearson"], 4), **scores(ckpt)}

    if a.score:
        return score_heads(a.score, checkpoint_row, out)
    rows = []
    for name, extra in PROBES:
        args = " ".join(a.base_args.split() + extra)
        key = (name, args, str(a.steps))
        run = Path(a.runs) / run_dir_name(name)
        ckpt = run / "sudoku_mi_head"
        if key in done:
            row = done[key]
            if not row.get("rules_auroc") and ckpt.with_suffix(".json").exists():  # a row from before a column
                row.update(scores(ckpt))
            rows.append(row)
            continue
        if only and name not in only:
            continue
        print(f"== probe: {name} ({args})", flush=True)
        t0 = time.time()
        train_head.main(["--mdm", a.mdm, "--data", a.data, "--out", str(ckpt), "--steps", str(a.steps),
                         "--eval-every", str(max(1, a.steps // 4))] + args.split())
        meta = json.loads(ckpt.with_suffix(".json").read_text())
        rows.append({"probe": name, "args": args, "steps": a.steps,
                     "n_train_states": meta["extra"]["n_train_states"], **checkpoint_row(ckpt, meta),
                     "seconds": round(time.time() - t0)})
        write(out, fields, rows)  # after every probe: an interruption loses one probe
    write(out, fields, rows)
    for r in rows:
        print(f"{r['probe']:<42} held-out {r['val_pearson']:>7}  dev {r['dev_pearson']:>7}  "
              f"rules AUROC {r.get('rules_auroc', ''):>7}  {r['n_params']:>9} params")


def score_heads(paths, checkpoint_row, out: Path):
    """--score: one row per head checkpoint trained elsewhere (the candidates, at their own budget),
    with the recipe its checkpoint records and its scores on the probes' sets."""
    rows = []
    for ckpt in paths:
        meta = json.loads(Path(ckpt).with_suffix(".json").read_text())
        targs = meta["extra"].get("args", {})
        rows.append({"head": ckpt, "steps": targs.get("steps"), "augment": targs.get("augment"),
                     "attn_layers": targs.get("attn_layers"), "excess": targs.get("excess"),
                     **checkpoint_row(ckpt, meta)})
        print(rows[-1], flush=True)
    write(out, ["head", "n_params", "steps", "augment", "attn_layers", "excess", "best_step", "val_loss",
                "val_pearson", "dev_pearson", "rules_auroc", "rules_auroc_truth"], rows)


def write(out: Path, fields, rows):
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, restval="")
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
