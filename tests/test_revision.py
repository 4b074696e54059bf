"""Revision in the sampler protocol: a rule may remask what it wrote. Checked on the exact 4x4 oracle
and on hand-worked Candidates: a rule that never remasks decodes as before, every remask costs the
passes it uses and is recorded, mi-revise marks the less confident member of a dependent pair and
its controls mark as many."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from test_samplers import _oracle_states

from mi_viz.core.errors import InputError
from mi_viz.core.samplers import (
    Candidates,
    Revision,
    Sampler,
    SamplerConfig,
    Trace,
    Written,
    decode,
    register,
    unregister,
)
from mi_viz.core.samplers.revise_rules import dependent_marks, select_revise


def _states(n=4, masked=10, seed=0):
    return _oracle_states(n, masked, seed)  # the 4x4 oracle and n of its grids with `masked` cells masked


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_a_revising_rule_that_never_remasks_decodes_as_its_unmasking_rule(temperature):
    """rho = 0: no budget, so mi-revise-gt is mi-gt bit for bit (tokens, passes, batches): the
    protocol's new path changes nothing for a rule that does not use it."""
    o, x = _states()
    kw = dict(gamma=0.6, lam=1.0, temperature=temperature, seed=2)
    plain = decode(o, x, SamplerConfig("mi-gt", **kw), record=True)
    revise = decode(o, x, SamplerConfig("mi-revise-gt", **kw, theta=0.0, rho=0.0), record=True)
    assert torch.equal(plain.tokens, revise.tokens) and torch.equal(plain.passes, revise.passes)
    assert plain.batch_sizes == revise.batch_sizes and revise.revised.tolist() == [0] * len(x)
    assert all(s.remasked == [] and s.cleared == [] for t in plain.traces for s in t.steps)


def _remask_first_rule(c: Candidates, cfg: SamplerConfig):
    """A toy reviser: one position a pass; at its third step, remask the position its first step wrote."""
    w = c.written
    first = [int(p) for p in w.pos if w.step[p] == 1]
    order = [int(np.argmin(c.H))]
    if w.now == 3 and first and w.times[first[0]] == 1:
        return Revision(order, remask=first)
    return order


def test_a_remask_is_recorded_counted_and_round_trips():
    o, x = _states(n=2, masked=6)
    register(Sampler("toy-reviser", "one a pass; remask step 1's write at step 3", {}, _remask_first_rule,
                     reads=frozenset({"written"}), revises=True))  # fmt: skip
    try:
        res = decode(o, x, SamplerConfig("toy-reviser"), record=True)
    finally:
        unregister("toy-reviser")
    assert res.passes.tolist() == [7, 7]  # six masked cells, one of them written twice
    assert res.revised.tolist() == [1, 1] and (res.tokens != o.mask_id).all()
    for b, tr in enumerate(res.traces):
        s1, s3 = tr.steps[0], tr.steps[2]
        assert s3.remasked == s1.selected and s3.cleared == s1.values  # what it held, from step 1
        assert tr.steps[3].masked[s1.selected[0]]  # masked again at the next pass
        assert sum(len(s.selected) for s in tr.steps) == 7 and tr.revised == 1
        assert tr.tokens_at(len(tr.steps)) == res.tokens[b].tolist()
        back = Trace.from_json(tr.to_json())
        assert back == tr and back.format == 2


def test_a_trace_written_before_formats_were_numbered_still_loads():
    o, x = _states(n=1)
    tr = decode(o, x, SamplerConfig("topk", k=3), record=True).traces[0]
    d = json.loads(tr.to_json())
    del d["format"]
    for s in d["steps"]:
        del s["remasked"], s["cleared"]
    old = Trace.from_json(json.dumps(d))
    assert old.format == 1 and old.steps == tr.steps and old.revised == 0
    d["format"] = 99
    with pytest.raises(ValueError, match="trace format 99 is newer"):
        Trace.from_json(json.dumps(d))


def _cands(L=6):
    """Four masked candidates (places 2..5), two decoded places (0, 1) written at step 1: the candidates'
    entropies put 2, 3, 4 in the batch (gamma 1.0, lam 0); MI(2,3) = 0.5 and MI(3,4) = 0.3 exceed theta
    0.2, MI(2,4) = 0.1 does not."""
    H = np.array([0.1, 0.2, 0.3, 2.0])
    MI = np.zeros((4, 4))
    MI[0, 1] = MI[1, 0] = 0.5
    MI[1, 2] = MI[2, 1] = 0.3
    MI[0, 2] = MI[2, 0] = 0.1
    probs = np.array([[0.95, 0.05], [0.6, 0.4], [0.8, 0.2], [0.5, 0.5]])  # top: 0.95, 0.6, 0.8, 0.5
    step, conf, times, mark = np.zeros(L, int), np.full(L, np.nan), np.zeros(L, int), np.zeros(L, int)
    step[:2], times[:2], conf[:2] = 1, 1, 0.9
    w = Written(np.array([0, 1]), step, conf, times, mark, revised=0, now=2)
    return Candidates(H=H, MI=MI, probs=probs, pos=np.array([2, 3, 4, 5]), written=w)


def test_mi_revise_marks_the_less_confident_member_of_each_dependent_pair():
    c = _cands()
    assert dependent_marks([0, 1, 2], c.MI, c.probs.max(-1), 0.2, np.ones(4, bool)) == [1]  # 1 < 0 and 1 < 2
    cfg = SamplerConfig("mi-revise", gamma=1.0, lam=0.0, theta=0.2, rho=0.5)
    rev = select_revise(c, cfg)
    assert rev.unmask == [0, 1, 2] and rev.mark == [1] and rev.remask == []
    # the next step remasks it; a budget of floor(0.2 x 6) = 1 is then spent
    c.written.mark[3], c.written.now = 2, 3
    c2 = Candidates(H=c.H[3:], MI=c.MI[3:, 3:], probs=c.probs[3:], pos=c.pos[3:], written=c.written)
    c2.written.pos = np.array([0, 1, 2, 3, 4])
    c2.written.times[2:5] = 1
    got = select_revise(c2, cfg)
    assert got.unmask == [0] and got.remask == [3]
    assert select_revise(c, cfg.replace(rho=0.0)).mark == []  # no budget, no marks


def test_controls_mark_as_many_and_defer_never_writes_the_mark():
    c = _cands()
    base = SamplerConfig("mi-revise", gamma=1.0, lam=0.0, theta=0.05, rho=1.0)
    mi = select_revise(c, base)
    assert mi.mark == [1, 2]  # (0,1) -> 1; (1,2) -> 1; (0,2) -> 2
    conf = select_revise(c, base.replace(pick="conf"))
    assert conf.mark == [1, 2]  # the two least confident of the batch (0.6, 0.8)
    rnd = select_revise(c, base.replace(pick="random"))
    assert len(rnd.mark) == 2 and set(rnd.mark) <= {0, 1, 2}
    assert select_revise(c, base.replace(pick="random")).mark == rnd.mark  # a pure function of the state
    defer = select_revise(c, base.replace(act="defer"))
    assert defer.unmask == [0] and defer.remask == [] and defer.mark == []


def test_the_last_step_revises_its_marks_at_once():
    """When a step writes every masked candidate, its marks are remasked in that step (a deferral), so
    no mark is left unrevised when the decode would end."""
    c = _cands()
    cfg = SamplerConfig("mi-revise", gamma=10.0, lam=0.0, theta=0.2, rho=1.0)
    rev = select_revise(c, cfg)
    assert rev.unmask == [0, 1, 2, 3] and rev.remask == [3] and rev.mark == []  # candidate 1 is place 3


def test_mi_revise_on_the_exact_oracle_revises_and_finishes():
    o, x = _states(n=4, masked=12, seed=1)
    res = decode(o, x, SamplerConfig("mi-revise-gt", gamma=2.0, lam=1.0, theta=0.01, rho=0.5, temperature=1.0),
                 record=True)  # fmt: skip
    assert (res.tokens != o.mask_id).all() and res.revised.sum() > 0
    assert (res.revised <= 6).all()  # floor(0.5 x 12)
    for tr, n in zip(res.traces, res.passes.tolist()):
        assert len(tr.steps) == n and tr.revised == sum(len(s.remasked) for s in tr.steps)
        once = [p for s in tr.steps for p in s.remasked]
        assert len(once) == len(set(once))  # each position revised at most once


@pytest.mark.parametrize(
    "kw,msg",
    [({"rho": 1.5}, "rho must be <= 1"), ({"rho": -0.1}, "rho must be >= 0"), ({"theta": -1}, "theta must be >= 0"),
     ({"pick": "best"}, "pick must be one of")],
)  # fmt: skip
def test_bad_revision_settings_are_named(kw, msg):
    with pytest.raises(InputError, match=msg):
        SamplerConfig("mi-revise", **kw)


def test_a_reviser_without_its_head_is_refused(tiny_mdm):
    from mi_viz.domains.sudoku.mdm import boards_to_tokens

    with pytest.raises(ValueError, match="reads a MI head"):
        decode(tiny_mdm, boards_to_tokens([[0] * 81]), SamplerConfig("mi-revise"))


def _authors_remdm_loop(model, x: torch.Tensor, block: int, nr: int) -> list[tuple[list[int], list[int]]]:
    """ReMDM-LLaDA's llada_remdm_sample (guanghanwang/ReMDM-LLaDA, eval_llada.py), transcribed for one
    sequence with every position generated, one token a step (its scripts' setting: steps = length), and
    the argmax in place of its Gumbel draw (then its confidence is the top probability, as ours at
    temperature 0). Returns, for each forward pass, (positions masked again just before it, positions
    written by it)."""
    x = x.clone()
    L, mask = x.shape[1], model.mask_id
    steps = block  # sampling_steps // num_blocks with sampling_steps = mask_length
    out = []
    for nb in range(L // block):
        conf_cache = torch.full((L,), float("inf"), dtype=torch.float64)
        thres = int(block / 8 * 7)
        for i in range(2 * steps):
            remasked = []
            if thres <= i < thres + steps:
                idx = torch.topk(conf_cache, k=nr, largest=False).indices
                conf_cache[idx] = float("inf")
                x[0, idx] = mask
                remasked = sorted(idx.tolist())
            masked = x[0] == mask
            with torch.no_grad():
                p = torch.softmax(model.forward_tokens(x).logits[0].double(), -1)  # (L, V)
            x0_p, x0 = p.max(-1)
            x0_p[(nb + 1) * block :] = -float("inf")
            conf = torch.where(masked, x0_p, torch.tensor(-float("inf"), dtype=torch.float64))
            n = nr if thres <= i < thres + steps else 1
            pick = torch.topk(conf, k=n).indices
            x[0, pick] = model.value_tokens[x0[pick]]
            conf_cache[pick] = conf[pick]
            out.append((remasked, sorted(pick.tolist())))
    return out


def test_remdm_follows_the_authors_llada_loop(tiny_mdm):
    """Their loop, pass by pass: the same positions written and masked again (theirs just before a
    forward, ours after the previous one's writes: the state each forward reads is the same)."""
    from mi_viz.domains.sudoku.mdm import boards_to_tokens

    x = boards_to_tokens([[0] * 81])
    theirs = _authors_remdm_loop(tiny_mdm, x, block=9, nr=2)
    cfg = SamplerConfig("remdm", k=1, block=9, nr=2, loop=0, t_on=0.875, schedule="conf", strategy="loop")
    tr = decode(tiny_mdm, x, cfg, record=True).traces[0]
    assert len(tr.steps) == len(theirs) == 9 * 18
    ours = [(s.remasked, sorted(s.selected)) for s in tr.steps]
    before = [([], w) for _, w in ours]  # ours remasks after a pass: shift to "before the next pass"
    for t in range(1, len(ours)):
        before[t] = (ours[t - 1][0], ours[t][1])
    assert before == theirs
    assert tr.final == x.new_tensor(tr.final).tolist() and all(v != tiny_mdm.mask_id for v in tr.final)


def test_llada_writes_its_blocks_left_to_right_and_never_remasks(tiny_mdm):
    from mi_viz.domains.sudoku.mdm import boards_to_tokens

    res = decode(tiny_mdm, boards_to_tokens([[0] * 81]), SamplerConfig("llada", k=3, block=27), record=True)
    steps = res.traces[0].steps
    assert len(steps) == 27 and res.revised.tolist() == [0]
    for t, s in enumerate(steps):
        assert len(s.selected) == 3 and all(27 * (t // 9) <= p < 27 * (t // 9 + 1) for p in s.selected)
    with pytest.raises(InputError, match="block 100 is longer than the 81 positions"):
        decode(tiny_mdm, boards_to_tokens([[0] * 81]), SamplerConfig("llada", block=100))


@pytest.mark.parametrize("schedule", ["cap", "rescale"])
def test_remdm_schedules_and_switch_finish(tiny_mdm, schedule):
    from mi_viz.domains.sudoku.mdm import boards_to_tokens

    x = boards_to_tokens([[0] * 81])
    for strategy in ("loop", "switch"):
        cfg = SamplerConfig("remdm", k=3, nr=1, eta=0.5, loop=4, t_on=0.5, schedule=schedule, strategy=strategy,
                            temperature=1.0)  # fmt: skip
        res = decode(tiny_mdm, x, cfg)
        assert (res.tokens != tiny_mdm.mask_id).all() and res.revised.item() > 0
    with pytest.raises(InputError, match="it needs nr < k"):
        decode(tiny_mdm, x, SamplerConfig("remdm", k=2, nr=2, strategy="switch", t_on=0.0))


def test_navira_masks_the_least_probable_written_tokens_within_its_budget(tiny_mdm):
    """tr = 0: each pass past half the span masks the written token its output gives the lowest
    probability (decode scores them from the same pass); rho caps the remasks."""
    from mi_viz.domains.sudoku.mdm import boards_to_tokens

    res = decode(tiny_mdm, boards_to_tokens([[0] * 81]), SamplerConfig("navira", k=4, nr=1, tr=0.0, rho=0.1),
                 record=True)  # fmt: skip
    tr = res.traces[0]
    assert res.revised.item() == 8  # floor(0.1 x 81)
    with torch.no_grad():
        for s in tr.steps:
            if s.remasked:
                x = torch.tensor([s.tokens])
                p = torch.softmax(tiny_mdm.forward_tokens(x).logits[0].double(), -1)
                written = [i for i, m in enumerate(s.masked) if not m]
                score = {i: float(p[i, s.tokens[i] - int(tiny_mdm.value_tokens[0])]) for i in written}
                assert s.remasked == [min(score, key=score.get)]
                assert sum(not m for m in s.masked) >= 0.5 * 81
