"""The cost of several MI heads against one MDM pass, each measured side by side with the pass.

    python benchmarks/head_cost.py --head checkpoints/sudoku_mi_head \
        --head runs/head_probes/attention_maps_of_all_6_blocks/sudoku_mi_head [--out FILE]

What it would cost to ship a probe head (results/sudoku/head_probes.csv) instead of the
shipped one: for each head, at batch 1 and at the decoding batch, the plain pass and the
head's cost as latency.py defines it (its read, given the sampler's marginals, plus what
the pass does only for it: attention maps). Target: <= 10 % of a pass. Each head's ratio
comes from interleaved rounds with its own pass timings (this machine drifts 20-40 %
within minutes); compare ratios, not milliseconds across rows. Last stdout line: JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from latency import head_cost, mid_decode_states  # noqa: E402

from mi_viz.bench import DECODE_BATCH, load_models  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--head", action="append", required=True, help="a head checkpoint (repeat for several)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--batch", type=int, default=DECODE_BATCH)
    ap.add_argument("--puzzles", default=str(ROOT / "data" / "sudoku" / "test_hard.txt"))
    ap.add_argument("--out", default=None, help="also write the table and the JSON line here")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    model, _, _ = load_models()
    mid = mid_decode_states(model, a.puzzles, 10)  # (10, 81)
    big = mid.repeat(a.batch // len(mid) + 1, 1)[: a.batch]  # (batch, 81)
    rows = []
    for path in a.head:
        _, head, _ = load_models(head=path, need_head=True)
        f1, h1, e1 = head_cost(model, head, mid[:1], a.repeats)
        fb, hb, _ = head_cost(model, head, big, max(3, a.repeats // 4))
        rows.append({"head": path, "params": head.n_params(), "attn_blocks": len(head.attn_layers),
                     "mix_layers": head.config.mix_layers, "excess": head.config.excess,
                     "forward_ms": round(1000 * f1, 2), "head_ms": round(1000 * h1, 2),
                     "head_over_forward": round(h1 / f1, 4), "head_over_forward_eager": round(e1 / f1, 4),
                     "head_over_forward_batch": round(hb / fb, 4), "batch": a.batch})
    lines = [f"{'head':<70} {'params':>8} {'batch 1':>8} {'(eager)':>8} {f'batch {a.batch}':>9}"]
    for r in rows:
        lines.append(f"{r['head']:<70} {r['params']:>8,} {100 * r['head_over_forward']:>7.1f}% "
                     f"{100 * r['head_over_forward_eager']:>7.1f}% {100 * r['head_over_forward_batch']:>8.1f}%")
    text = "\n".join(lines + [json.dumps({"threads": a.threads, "heads": rows})])
    if a.out:
        Path(a.out).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
