"""Revision in the sampler protocol: a rule may remask what it wrote. Checked on the exact 4x4 oracle
and on hand-worked Candidates: a rule that never remasks decodes as before, every remask costs the
passes it uses and is recorded, mi-revise marks the less confident member of a dependent pair and
its controls mark as many."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

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
from mi_viz.domains.sudoku.oracle import ExactSudokuOracle


def _states(n=4, masked=10, seed=0):
    o = ExactSudokuOracle()
    g = torch.Generator().manual_seed(seed)
    x = o.grids[torch.randint(0, 288, (n,), generator=g)].clone()
    for b in range(n):
        x[b, torch.randperm(16, generator=g)[:masked]] = o.mask_id
    return o, x


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
                     reads=frozenset({"written"})))  # fmt: skip
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
