"""Where does a parallel sampler lose the puzzles that sequential decoding solves?

For every puzzle that sequential solves and the sampler does not, find the first
pass in which the sampler writes a wrong digit (against the puzzle's unique
solution) and describe it: the wrong cell's rank in its batch (0 = the most
confident, always-taken cell; last = the least confident member), its entropy,
the entropies of its batch-mates, and whether a batch-mate in the same row,
column or box got the same digit (a direct rule clash inside the batch).

This is the probe behind MI rule version 3 (docs/mi.md): with EB's
sum(H) - max(H) budget every such first error was the free, least confident
member of its batch.

    python benchmarks/first_error.py --puzzles data/sudoku/generated/val_puzzles.txt \\
        --sampler eb:gamma=1e-4 --sampler mi:gamma=0.01:lam=0.5 --out results/sudoku/first_error_val.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mi_viz import sudoku as S  # noqa: E402
from mi_viz.bench import load_models, parse_grid  # noqa: E402
from mi_viz.models.sudoku_mdm import boards_to_tokens  # noqa: E402
from mi_viz.samplers import SamplerConfig, decode  # noqa: E402


def first_errors(trace_steps, solution) -> dict | None:
    """The first step that writes a wrong token, described; None if none does."""
    for st in trace_steps:
        wrong = [r for r, (c, v) in enumerate(zip(st.selected, st.values)) if v != int(solution[c])]
        if not wrong:
            continue
        r = wrong[0]
        c = st.selected[r]
        H = np.asarray(st.entropy)
        mates = [o for o in st.selected if o != c]
        clash = [o for o, v in zip(st.selected, st.values)
                 if o != c and v == st.values[r] and S.relation(o, c) != "other"]
        return {
            "step": st.step, "masked": int(np.sum(st.masked)), "batch": len(st.selected),
            "wrong_in_batch": len(wrong), "rank": r, "is_last": r == len(st.selected) - 1,
            "h_wrong": float(H[c]), "h_mates_max": float(max((H[o] for o in mates), default=0.0)),
            "clash_in_batch": len(clash) > 0,
        }
    return None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--puzzles", default="data/sudoku/generated/val_puzzles.txt")
    p.add_argument("--limit", type=int, default=200)
    p.add_argument("--sampler", action="append", required=True, help="grid syntax, e.g. eb:gamma=1e-4")
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    torch.set_num_threads(min(2, torch.get_num_threads()))

    puzzles = S.read_puzzle_file(a.puzzles).puzzles[: a.limit]
    solutions = boards_to_tokens([S.solve(q).solution for q in puzzles])  # (N, 81)
    x = boards_to_tokens(puzzles)  # (N, 81)
    cfgs = [c for spec in a.sampler for c in parse_grid(spec)]
    model, head, _ = load_models(need_head=any(c.needs == "mi" for c in cfgs))
    seq_ok = (decode(model, x, SamplerConfig("sequential")).tokens == solutions).all(1)  # (N,)
    report = {"puzzles": a.puzzles, "n": len(puzzles), "sequential_solved": int(seq_ok.sum()), "samplers": []}
    for cfg in cfgs:
        res = decode(model, x, cfg, head=head, record=True)
        ok = (res.tokens == solutions).all(1)
        lost = np.nonzero((seq_ok & ~ok).numpy())[0]
        errs = [first_errors(res.traces[b].steps, solutions[b]) for b in lost]
        row = {
            "sampler": cfg.label(), "solved": int(ok.sum()), "avg_passes": round(float(res.passes.float().mean()), 3),
            "lost_vs_sequential": len(lost), "gained_vs_sequential": int((ok & ~seq_ok).sum()),
            "first_error_is_last_member": sum(e["is_last"] and e["batch"] > 1 for e in errs),
            "first_error_is_first_member": sum(e["rank"] == 0 for e in errs),
            "first_error_clashes_in_batch": sum(e["clash_in_batch"] for e in errs),
            "errors": [{"puzzle": int(b), **e} for b, e in zip(lost, errs)],
        }
        report["samplers"].append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "errors"}), flush=True)
    if a.out:
        Path(a.out).write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
