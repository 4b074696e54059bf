"""What a pass that also returns every block's attention maps costs, against the plain pass.

    python benchmarks/attention_maps.py [--out results/attention_maps.txt]

The MI heads that read attention maps (HeadConfig.attn_layers) need the weights the fused
attention kernel keeps to itself. Two ways to get them, timed side by side with the plain
(fused) pass in interleaved rounds, at batch 1 and at the decoding batch:
- "recomputed" (what sudoku_mdm.Block does when asked for maps): the fused kernel runs as
  usual and the maps are computed once more beside it, so the logits stay bit-identical;
- "written out" (the alternative, kept here only to be timed): the block computes
  softmax(q k^T / sqrt(d)) itself, multiplies it with v, and returns the pass's own maps.
Each round times the plain pass, then both variants, which goes first alternating from
round to round (with a fixed order, the order decided the batch-64 comparison).
The shipped head reads no maps, so the block keeps the bit-identical way; a head that
reads them should switch to the written-out one when it ships (every MI row is re-run
then anyway).
Last stdout line: JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from latency import mid_decode_states, timeit  # noqa: E402

from mi_viz.bench import DECODE_BATCH, load_models  # noqa: E402
from mi_viz.models import sudoku_mdm  # noqa: E402


def written_out_forward(self, x, return_attn: bool = False):
    """The alternative Block.forward: asked for maps, run the attention written out and use them."""
    if not return_attn:
        return recomputed(self, x)
    B, L, D = x.shape
    q, k, v = self.qkv(self.ln1(x)).split(D, dim=2)
    q, k, v = (t.view(B, L, self.n_head, D // self.n_head).transpose(1, 2) for t in (q, k, v))  # (B, H, L, Dh)
    att = torch.softmax((q @ k.transpose(-1, -2)) * (D // self.n_head) ** -0.5, -1)  # (B, H, L, L)
    x = x + self.proj((att @ v).transpose(1, 2).reshape(B, L, D))
    x = x + self.fc_out(F.gelu(self.fc(self.ln2(x))))
    return x, att


recomputed = sudoku_mdm.Block.forward


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    model, _, _ = load_models()
    blocks = tuple(range(len(model.blocks)))
    mid = mid_decode_states(model, str(ROOT / "data" / "sudoku" / "test_hard.txt"), 10)  # (10, 81)
    res, lines = {"threads": a.threads, "blocks": len(blocks)}, []
    try:
        for x, n in ((mid[:1], 30), (mid.repeat(DECODE_BATCH // 10 + 1, 1)[:DECODE_BATCH], 4)):
            t = {"plain": [], "recomputed": [], "written_out": []}
            with torch.no_grad():
                for r in range(a.rounds):
                    t["plain"].append(timeit(lambda: model.forward_tokens(x), n))
                    # alternate which variant goes first: the order alone moved the batch-64 result
                    for variant in (("recomputed", "written_out") if r % 2 == 0 else ("written_out", "recomputed")):
                        sudoku_mdm.Block.forward = written_out_forward if variant == "written_out" else recomputed
                        t[variant].append(timeit(lambda: model.forward_tokens(x, (), blocks), n))
                    sudoku_mdm.Block.forward = recomputed
            med = {k: statistics.median(v) for k, v in t.items()}
            b = len(x)
            wins = sum(w < r for w, r in zip(t["written_out"], t["recomputed"]))  # paired: adjacent timings
            res[f"batch_{b}"] = {"plain_ms": round(1000 * med["plain"], 2),
                                 "written_out_over_plain": round(med["written_out"] / med["plain"] - 1, 4),
                                 "recomputed_over_plain": round(med["recomputed"] / med["plain"] - 1, 4),
                                 "rounds_written_out_faster": wins, "rounds": a.rounds}
            lines.append(f"batch {b:>3}: plain pass {1000 * med['plain']:.2f} ms; with all {len(blocks)} blocks' maps: "
                         f"written out {100 * res[f'batch_{b}']['written_out_over_plain']:+.1f} %, "
                         f"recomputed beside the kernel {100 * res[f'batch_{b}']['recomputed_over_plain']:+.1f} % "
                         f"(written out faster in {wins} of {a.rounds} rounds)")
    finally:
        sudoku_mdm.Block.forward = recomputed
    text = "\n".join(lines + [json.dumps(res)])
    if a.out:
        Path(a.out).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
