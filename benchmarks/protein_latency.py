"""Protein latency, side by side in one run: a decode step with estimated MI against one pass.

    python -m benchmarks.protein_latency | tee results/protein/latency.txt

On a length-100 protein halfway through a decode (50 masked positions), at batch 1 (a step
in the app), medians of interleaved rounds: one backbone pass; the MI head's read of that
pass (given the sampler's marginals); one whole decode step of the `mi` sampler (pass, head,
selection, writes); and the ground truth of that state (passes and seconds). Target: a step
with estimated MI under a second on 2 CPU cores. Last line: one JSON object.

    python -m benchmarks.protein_latency --domain antibody | tee results/antibody/latency.txt

The same on AntiBERTy: the state is the first test chain with its CDR3 masked, and the whole
CDR3 infill the app's decode page runs (the `mi` sampler at the domain's default, every step
recorded and read by the head) is timed too. Issue 47's target: that decode <= 2 s.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from benchmarks.report import show
from benchmarks.timing import median_seconds
from mi_viz.core.mi import ground_truth_mi, marginals
from mi_viz.core.models import load_models
from mi_viz.core.samplers import SamplerConfig, decode
from mi_viz.domains import get_domain
from mi_viz.domains.antibody import DATA, chains_of
from mi_viz.domains.protein.alphabet import MASK


@torch.inference_mode()
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--domain", choices=("protein", "antibody"), default="protein")
    ap.add_argument("--backbone", default=None)
    ap.add_argument("--head", default=None)
    ap.add_argument("--length", type=int, default=100)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    dom = get_domain(a.domain)
    model, head = load_models(dom, a.backbone, a.head, need_head=True)
    whole = {}
    if a.domain == "antibody":  # the first test chain, its CDR3 masked: the decode page's first input
        state = dom.encode(chains_of(DATA / "test.tsv", "cdr3", 1))
        infill = SamplerConfig("mi", **dom.sampler_defaults.get("mi", {}), temperature=1.0)
        t0 = time.perf_counter()
        res = decode(model, state, infill, head=head, record=True)
        whole = {"infill_sampler": infill.label(), "infill_passes": int(res.passes[0]),
                 "infill_decode_s": round(time.perf_counter() - t0, 2)}  # fmt: skip
    else:  # halfway through an EB decode of an all-masked protein: a typical mid-decode state
        res = decode(
            model, dom.encode(["_" * a.length]), SamplerConfig("eb", gamma=1.0, temperature=1.0), keep_states=True
        )
        state = next(s for s in res.states if int((s == MASK).sum()) <= a.length // 2)
    masked = state == MASK
    out = head.backbone_pass(model, state)
    logp, H = marginals(out.logits, masked)
    cfg = SamplerConfig("mi", gamma=2.0, lam=1.0, temperature=1.0)
    fwd, read, step = [], [], []
    for _ in range(a.rounds):  # interleaved: this machine's speed drifts within minutes
        fwd.append(median_seconds(lambda: model.forward_tokens(state), a.repeats))
        read.append(median_seconds(lambda: head.read(out, masked, logp, H), a.repeats))
        step.append(median_seconds(lambda: decode(model, state, cfg, head=head, max_steps=1), a.repeats))
    t0 = time.perf_counter()
    gt = ground_truth_mi(model, state, eps=1e-3, chunk=256)
    row = {
        "threads": a.threads,
        "domain": a.domain,
        "length": a.length if a.domain == "protein" else int(state.shape[1]),
        "masked": int(masked.sum()),
        "backbone_parameters": model.n_params(),
        "head_parameters": head.n_params(),
        "forward_ms": round(1000 * statistics.median(fwd), 2),
        "head_ms": round(1000 * statistics.median(read), 2),
        "head_over_forward": round(statistics.median(read) / statistics.median(fwd), 4),
        "decode_step_mi_ms": round(1000 * statistics.median(step), 1),
        "ground_truth_passes": int(gt.passes[0]),
        "ground_truth_seconds": round(time.perf_counter() - t0, 2),
        **whole,
    }
    show(row)


if __name__ == "__main__":
    main()
