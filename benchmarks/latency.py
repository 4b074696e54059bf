"""Latency of the pieces the app and the decoders pay for, measured side by side in one run.

    python -m benchmarks.latency [--threads 2] [--repeats 20]

Prints one table and, last, a JSON line. With the shipped checkpoints on the CPU:
- one MDM forward pass for one puzzle state, and the MI head on that pass's hidden
  states (the head's cost as a fraction of the pass: target <= 10 %); the same at the
  decoding batch (DECODE_BATCH states, what the benchmarks pay per pass);
- ground-truth MI for a mid-decode state of a hard test puzzle (passes and seconds;
  target <= 1 s on 2 cores, with pruning eps 1e-3);
- one decode step with estimated MI (forward + head + selection);
- the app: the Sudoku decode page rerun with its decode cached, rendered by AppTest (the
  server's share of any widget change there; stepping itself never asks the server:
  benchmarks/app_latency.py times it in Chromium).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import torch

from benchmarks.report import show
from benchmarks.timing import median_seconds
from mi_viz.core.bench import DECODE_BATCH
from mi_viz.core.mi import ground_truth_mi, marginals
from mi_viz.core.models import load_models
from mi_viz.core.samplers import SamplerConfig, decode
from mi_viz.domains import get_domain
from mi_viz.domains.sudoku import board as S
from mi_viz.domains.sudoku.mdm import MASK_TOKEN, boards_to_tokens

ROOT = Path(__file__).resolve().parents[1]


@torch.inference_mode()  # as decode runs the pass and the head
def head_cost(model, head, x, repeats, rounds=5):
    """(plain pass, head, head run eager) seconds, medians over `rounds` interleaved rounds (this
    machine's speed drifts 20-40 % within minutes: timing them far apart would measure the drift).
    The head's cost is its read, given the log-marginals and entropies every sampler
    computes anyway (the hidden states of a middle block it reads are a reference the pass
    keeps anyway). The read runs as decode runs it (traced, see MIHead._traced); the eager
    read, the same maps op by op from Python, is timed beside it."""
    out = head.backbone_pass(model, x)
    masked = x == MASK_TOKEN
    logp, H = marginals(out.logits, masked)  # (B, L, V), (B, L) as the sampler has them
    fwd, read, eager = [], [], []
    for _ in range(rounds):
        fwd.append(median_seconds(lambda: model.forward_tokens(x), repeats))
        read.append(median_seconds(lambda: head.read(out, masked, logp, H), repeats))
        head.trace = False
        try:
            eager.append(median_seconds(lambda: head.read(out, masked, logp, H), repeats))
        finally:
            head.trace = True
    return statistics.median(fwd), statistics.median(read), statistics.median(eager)


def mid_decode_states(model, puzzles_path, n):
    """(n, 81) states halfway through sequential decodes of the first n puzzles: typical states."""
    x = boards_to_tokens(S.read_puzzle_file(puzzles_path).puzzles[:n])
    res = decode(model, x, SamplerConfig("sequential"), keep_states=True)
    return torch.stack([res.states[len(sizes) // 2][b] for b, sizes in enumerate(res.batch_sizes)])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--puzzles", default=str(ROOT / "data" / "sudoku" / "test_hard.txt"))
    ap.add_argument("--n-gt", type=int, default=10, help="mid-decode states for the ground-truth timing")
    ap.add_argument("--batch", type=int, default=DECODE_BATCH, help="decoding batch for the batched head/forward ratio")
    ap.add_argument("--skip-app", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    model, head = load_models(get_domain("sudoku"), need_head=True)
    mid = mid_decode_states(model, a.puzzles, a.n_gt)  # (n_gt, 81)
    state = mid[0][None]
    t_fwd, t_head, t_eager = head_cost(model, head, state, a.repeats)
    # the same at a decoding batch (what `bench` / `sweep` pay per pass)
    big = torch.stack([m for m in mid for _ in range(a.batch // len(mid) + 1)])[: a.batch]  # (batch, 81)
    t_fwd_b, t_head_b, _ = head_cost(model, head, big, max(3, a.repeats // 4))
    t_step = median_seconds(lambda: decode(model, state, SamplerConfig("mi"), head=head, max_steps=1), a.repeats)
    gts = []
    for s in mid:
        gt = ground_truth_mi(model, s[None], eps=1e-3)
        gts.append((gt.seconds, int(gt.passes[0]), int((s == MASK_TOKEN).sum())))
    row = {
        "threads": a.threads,
        "forward_ms": round(1000 * t_fwd, 2),
        "head_ms": round(1000 * t_head, 2),
        "head_over_forward": round(t_head / t_fwd, 4),
        "head_over_forward_eager": round(t_eager / t_fwd, 4),
        "batch": a.batch,
        "forward_ms_batch": round(1000 * t_fwd_b, 1),
        "head_ms_batch": round(1000 * t_head_b, 1),
        "head_over_forward_batch": round(t_head_b / t_fwd_b, 4),
        "decode_step_mi_ms": round(1000 * t_step, 1),
        "gt_mid_decode_seconds_median": round(statistics.median(g[0] for g in gts), 3),
        "gt_mid_decode_passes_median": statistics.median(g[1] for g in gts),
        "gt_mid_decode_masked_median": statistics.median(g[2] for g in gts),
    }
    if not a.skip_app:
        from streamlit.testing.v1 import AppTest

        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
        at.switch_page("pages/sudoku_decode.py")
        at.run()
        at.run()  # warm: the decode and its viewer payload are cached now
        ts = []
        for _ in range(5):
            t0 = time.perf_counter()
            at.run()
            ts.append(time.perf_counter() - t0)
        row["app_decode_page_rerun_seconds_median"] = round(statistics.median(ts), 3)
    show(row)


if __name__ == "__main__":
    main()
