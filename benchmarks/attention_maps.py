"""What a pass that also returns every block's attention maps costs, against the plain pass.

    python benchmarks/attention_maps.py [--out results/attention_maps.txt]

The MI heads that read attention maps (HeadConfig.attn_layers) need the weights the fused
attention kernel keeps to itself. Two ways to get them, timed side by side with the plain
(fused) pass in interleaved rounds, at batch 1 and at the decoding batch:
- "written out" (what sudoku_mdm.Block does when asked for maps): the block computes
  softmax(q k^T / sqrt(d)) itself, multiplies it with v, and returns the pass's own maps;
  its logits differ from the plain pass by rounding;
- "recomputed" (the alternative, kept here only to be timed; the block's way until this
  benchmark showed it slower): the fused kernel runs as usual and the maps are computed
  once more beside it, so the logits stay bit-identical.
Each round times the plain pass, then both variants, which goes first alternating from
round to round (with a fixed order, the order decided the batch-64 comparison).
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


def recomputed_forward(self, x, return_attn: bool = False):
    """The alternative Block.forward: the fused kernel as in the plain pass, the maps computed again beside it."""
    if not return_attn:
        return written_out(self, x)
    B, L, D = x.shape
    q, k, v = self.qkv(self.ln1(x)).split(D, dim=2)
    q, k, v = (t.view(B, L, self.n_head, D // self.n_head).transpose(1, 2) for t in (q, k, v))  # (B, H, L, Dh)
    a = F.scaled_dot_product_attention(q, k, v)  # (B, H, L, Dh)
    x = x + self.proj(a.transpose(1, 2).reshape(B, L, D))
    x = x + self.fc_out(F.gelu(self.fc(self.ln2(x))))
    att = torch.softmax((q @ k.transpose(-1, -2)) * (D // self.n_head) ** -0.5, -1)  # (B, H, L, L)
    return x, att


written_out = sudoku_mdm.Block.forward


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
            with torch.inference_mode():  # as decode runs the pass
                for r in range(a.rounds):
                    t["plain"].append(timeit(lambda: model.forward_tokens(x), n))
                    # alternate which variant goes first: the order alone moved the batch-64 result
                    for variant in (("recomputed", "written_out") if r % 2 == 0 else ("written_out", "recomputed")):
                        sudoku_mdm.Block.forward = written_out if variant == "written_out" else recomputed_forward
                        t[variant].append(timeit(lambda: model.forward_tokens(x, (), blocks), n))
                    sudoku_mdm.Block.forward = written_out
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
        sudoku_mdm.Block.forward = written_out
    text = "\n".join(lines + [json.dumps(res)])
    if a.out:
        Path(a.out).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
