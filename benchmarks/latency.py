"""Latency, measured side by side in one run; the domain its argument.

    python -m benchmarks.latency sudoku   | tee results/latency.txt
    python -m benchmarks.latency protein  | tee results/protein/latency.txt
    python -m benchmarks.latency antibody | tee results/antibody/latency.txt

On a typical state at batch 1 (a step in the app), medians of interleaved rounds: one backbone
pass; the MI head's read of that pass, given the marginals every sampler computes anyway (the
head's cost: target <= 10 % of the pass); one whole decode step of the `mi` sampler (pass, head,
selection, writes); then the ground truth of the state (passes and seconds). Prints one table
and, last, a JSON line.

- sudoku: states halfway through sequential decodes of hard test puzzles; also the head's read
  run eager (op by op from Python, beside the traced read decode runs), the same ratio at the
  decoding batch (what `bench` / `sweep` pay a pass), the ground truth of 10 states at eps 1e-3
  (target <= 1 s on 2 cores), and the decode page rerun by AppTest with its decode cached (the
  server's share of a widget change; stepping runs in the browser: benchmarks/app_latency.py).
- protein: a length-100 protein halfway through an EB decode (50 masked). Target: a step under
  a second on 2 CPU cores.
- antibody: the first test chain with its CDR3 masked; also the whole CDR3 infill the decode
  page runs (`mi` at the domain's default, every step recorded). Target: that decode <= 2 s.
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
from mi_viz.core.mi import MIRun, ground_truth_mi, marginals
from mi_viz.core.models import load_models
from mi_viz.core.samplers import SamplerConfig, decode
from mi_viz.domains import DOMAINS, get_domain

ROOT = Path(__file__).resolve().parents[1]


@torch.inference_mode()  # as decode runs the pass and the head
def side_by_side(model, head, x, step: SamplerConfig | None, repeats: int, rounds: int, eager=False) -> dict:
    """{piece: seconds} for state x (B, L): medians over `rounds` interleaved rounds (this
    machine's speed drifts 20-40 % within minutes: timing the pieces far apart would measure the
    drift). The head's read is timed given the log-marginals and entropies every sampler has (the
    hidden states it reads are ones the pass keeps anyway), traced as decode runs it (see
    MIHead._traced); with eager, the same maps op by op from Python beside it."""
    out = head.backbone_pass(model, x)
    masked = x == model.mask_id  # (B, L)
    logp, H = marginals(out.logits, masked)  # (B, L, V), (B, L) as the sampler has them

    def read_eager():
        head.trace = False
        try:
            head.read(out, masked, logp, H)
        finally:
            head.trace = True

    pieces = {"forward": lambda: model.forward_tokens(x), "head": lambda: head.read(out, masked, logp, H)}
    if eager:
        pieces["eager"] = read_eager
    if step is not None:
        pieces["step"] = lambda: decode(model, x, step, head=head, max_steps=1)
    times: dict[str, list[float]] = {k: [] for k in pieces}
    for _ in range(rounds):
        for k, fn in pieces.items():
            times[k].append(median_seconds(fn, repeats))
    return {k: statistics.median(v) for k, v in times.items()}


def board(a, model, head, dom) -> dict:
    """Many short states (Sudoku): its typical states; a read eager and at the decoding batch beside
    one; the ground truth of each; the decode page rerun."""
    mid = dom.typical_states(model, a.n_gt)  # (n_gt, L): halfway through sequential decodes
    one = side_by_side(model, head, mid[:1], SamplerConfig("mi"), a.repeats, a.rounds, eager=True)
    big = torch.stack([m for m in mid for _ in range(a.batch // len(mid) + 1)])[: a.batch]  # (batch, 81)
    batch = side_by_side(model, head, big, None, max(3, a.repeats // 4), a.rounds)
    gts = [ground_truth_mi(model, s[None], eps=1e-3) for s in mid]
    row = {
        "threads": a.threads,
        "forward_ms": round(1000 * one["forward"], 2),
        "head_ms": round(1000 * one["head"], 2),
        "head_over_forward": round(one["head"] / one["forward"], 4),
        "head_over_forward_eager": round(one["eager"] / one["forward"], 4),
        "batch": a.batch,
        "forward_ms_batch": round(1000 * batch["forward"], 1),
        "head_ms_batch": round(1000 * batch["head"], 1),
        "head_over_forward_batch": round(batch["head"] / batch["forward"], 4),
        "decode_step_mi_ms": round(1000 * one["step"], 1),
        "gt_mid_decode_seconds_median": round(statistics.median(g.seconds for g in gts), 3),
        "gt_mid_decode_passes_median": statistics.median(int(g.passes[0]) for g in gts),
        "gt_mid_decode_masked_median": statistics.median(int((s == model.mask_id).sum()) for s in mid),
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
    return row


def sequence(a, model, head, dom) -> dict:
    """One long state (the protein domains): its step and its ground truth; and, where the state is an
    input (an antibody's masked CDR3), the whole infill the decode page runs from it (`mi` at the
    domain's default, every step recorded)."""
    state = dom.typical_states(model, length=a.length)  # (1, L)
    whole = {}
    if dom.name == "antibody":
        infill = SamplerConfig("mi", **dom.sampler_defaults.get("mi", {}), temperature=1.0)
        t0 = time.perf_counter()
        res = decode(model, state, infill, head=head, record=True)
        whole = {"infill_sampler": infill.label(), "infill_passes": int(res.passes[0]),
                 "infill_decode_s": round(time.perf_counter() - t0, 2)}  # fmt: skip
    step = SamplerConfig("mi", gamma=2.0, lam=1.0, temperature=1.0)
    t = side_by_side(model, head, state, step, a.repeats, a.rounds)
    t0 = time.perf_counter()
    gt = ground_truth_mi(model, state, eps=1e-3, run=MIRun(chunk=256))
    return {
        "threads": a.threads,
        "domain": a.domain,
        "length": int(state.shape[1]),
        "masked": int((state == model.mask_id).sum()),
        "backbone_parameters": model.n_params(),
        "head_parameters": head.n_params(),
        "forward_ms": round(1000 * t["forward"], 2),
        "head_ms": round(1000 * t["head"], 2),
        "head_over_forward": round(t["head"] / t["forward"], 4),
        "decode_step_mi_ms": round(1000 * t["step"], 1),
        "ground_truth_passes": int(gt.passes[0]),
        "ground_truth_seconds": round(time.perf_counter() - t0, 2),
        **whole,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("domain", choices=[d for d in DOMAINS if d != "family"], help="a domain with typical_states")
    ap.add_argument("--backbone", default=None)
    ap.add_argument("--head", default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=None, help="timings a round (default: sudoku 20, else 10)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--length", type=int, default=100, help="protein: the decoded length")
    ap.add_argument("--n-gt", type=int, default=10, help="sudoku: mid-decode states for the ground truth")
    ap.add_argument("--batch", type=int, default=DECODE_BATCH, help="sudoku: the decoding batch")
    ap.add_argument("--skip-app", action="store_true", help="sudoku: without the AppTest rerun")
    a = ap.parse_args(argv)
    a.repeats = a.repeats or (20 if a.domain == "sudoku" else 10)
    torch.set_num_threads(a.threads)
    dom = get_domain(a.domain)
    model, head = load_models(dom, a.backbone, a.head, need_head=True)
    show((board if a.domain == "sudoku" else sequence)(a, model, head, dom))


if __name__ == "__main__":
    main()
