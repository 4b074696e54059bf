import numpy as np
import pytest
import torch

from mi_viz.core.samplers import (
    SAMPLERS,
    Batching,
    SamplerConfig,
    Trace,
    decode,
    mi_rule_reach,
    select_dilated,
    select_eb,
    select_klass,
    select_margin,
    select_mi,
    select_mi_pairs,
    select_threshold,
    select_topk,
)
from mi_viz.domains.sudoku.mdm import boards_to_tokens
from mi_viz.domains.sudoku.oracle import ExactSudokuOracle


def test_topk_takes_k_most_confident():
    H = np.array([0.5, 0.1, 0.9, 0.0, 0.3])
    assert select_topk(H, 1) == [3]
    assert select_topk(H, 3) == [3, 1, 4]
    assert select_topk(H, 10) == [3, 1, 4, 0, 2]


def test_eb_prefix_rule_exactly():
    H = np.array([0.4, 0.1, 0.2, 0.05, 1.0])
    # order 3,1,2,0,4 ; prefix sums minus max: 0, .05, .15, .35, .75
    assert select_eb(H, 0.0) == [3]
    assert select_eb(H, 0.05) == [3, 1]
    assert select_eb(H, 0.15) == [3, 1, 2]
    assert select_eb(H, 0.34) == [3, 1, 2]
    assert select_eb(H, 0.35) == [3, 1, 2, 0]
    assert select_eb(H, 100) == [3, 1, 2, 0, 4]
    assert select_eb(np.array([2.0]), 0.0) == [0]  # always at least one


def test_mi_rule_as_the_paper_parameterises_it():
    """spent + H_c + lam * sum_{j in S} I_cj < gamma, the first position charged its entropy."""
    H = np.array([0.1, 0.2, 0.3, 0.5])
    MI = np.zeros((4, 4))
    MI[1, 2] = MI[2, 1] = 0.5  # 1 and 2 depend on each other
    # spent: 0.1 (first) -> + 0.2 = 0.3 -> 2 costs 0.3 + lam * 0.5 -> 3 costs 0.5
    assert select_mi(H, MI, 0.0, 1.0) == [0]  # gamma = 0: sequential
    assert select_mi(H, MI, 0.31, 1.0) == [0, 1]  # 0.3 < 0.31
    assert select_mi(H, MI, 0.3, 1.0) == [0]  # strict: 0.3 is not inside 0.3
    assert select_mi(H, MI, 0.61, 0.0) == [0, 1, 2]  # lam = 0: entropy alone, 0.6 < 0.61
    assert select_mi(H, MI, 0.61, 1.0) == [0, 1]  # 2 would cost 0.3 + 0.5: stop there
    assert select_mi(H, MI, 0.81, 1.0, scan="skip") == [0, 1, 3]  # skip 2, then 3: 0.3 + 0.5 < 0.81
    assert select_mi(H, MI, 1.11, 1.0) == [0, 1, 2]  # 0.3 + 0.8 = 1.1 < 1.11; then 3 (0.5) is over
    assert select_mi(H, MI, 1.11, 0.2) == [0, 1, 2]  # 0.3 + 0.3 + 0.1 = 0.7; 3: 1.2 > 1.11
    assert select_mi(np.array([2.0, 3.0]), None, 1.0, 1.0) == [0]  # the first always, even over budget
    # mi-tc charges the largest MI to the batch, not the sum: with 3 tied to 1 and 2
    MI3 = MI.copy()
    MI3[3, 1] = MI3[1, 3] = MI3[3, 2] = MI3[2, 3] = 0.4
    # spent 1.1 after {0, 1, 2}; 3 costs 0.5 + (0.4 + 0.4) with the sum, 0.5 + 0.4 with the max
    assert select_mi(H, MI3, 2.01, 1.0) == [0, 1, 2]  # 1.1 + 1.3 = 2.4
    assert select_mi(H, MI3, 2.01, 1.0, charge="max") == [0, 1, 2, 3]  # 1.1 + 0.9 = 2.0 < 2.01
    assert select_mi(H, MI3, 1.99, 1.0, charge="max") == [0, 1, 2]


def test_mi_cap_is_the_mi_rule_cut_at_k():
    """mi-cap: the mi rule's batch, at most k of it (top-k that stops at a dependent candidate)."""
    from mi_viz.core.samplers import Candidates

    H = np.array([0.1, 0.2, 0.3, 0.5, 0.05])
    MI = np.zeros((5, 5))
    MI[1, 2] = MI[2, 1] = 0.5
    c = Candidates(H=H, MI=MI)
    cap = SAMPLERS["mi-cap"].select
    # budget 10: the mi rule admits all five (0.05, 0.1, 0.2, 0.3 + 0.5, 0.5 ...): the cap keeps the first k
    assert select_mi(H, MI, 10.0, 1.0) == [4, 0, 1, 2, 3]
    assert cap(c, SamplerConfig("mi-cap", k=2, gamma=10.0, lam=1.0)) == [4, 0]
    assert cap(c, SamplerConfig("mi-cap", k=5, gamma=10.0, lam=1.0)) == [4, 0, 1, 2, 3]
    # where the MI stops the rule first, the cap does not matter: 2 is tied to 1 (0.35 + 0.3 + 10 x 0.5)
    assert cap(c, SamplerConfig("mi-cap", k=4, gamma=1.0, lam=10.0)) == [4, 0, 1]
    assert SamplerConfig("mi-cap").label() == "mi-cap k=8 gamma=32 lam=300"


def test_new_samplers_on_hand_worked_cases():
    P = np.array(
        [
            [0.95, 0.05, 0.0],  # p1 .95, margin .90
            [0.6, 0.4, 0.0],  # p1 .6, margin .2
            [0.5, 0.1, 0.4],  # p1 .5, margin .1
            [0.92, 0.04, 0.04],  # p1 .92, margin .88
        ]
    )
    assert select_threshold(P, 0.9) == [0, 3]  # Fast-dLLM: p1 >= tau, most confident first
    assert select_threshold(P, 0.99) == [0]  # at least one
    assert select_margin(P, 2) == [0, 3] and select_margin(P, 1) == [0]
    assert select_margin(P, 1, tau=0.15) == [0, 3, 1]  # with tau: every margin >= tau
    prev = P.copy()
    prev[3] = [0.3, 0.4, 0.3]  # position 3 just changed its mind: not stable
    assert select_klass(P, None, 0.9, 0.01) == [0, 3]  # first pass: confidence alone
    assert select_klass(P, prev, 0.9, 0.01) == [0]
    assert select_klass(P, prev, 0.99, 0.01) == [0]  # nothing qualifies: the most confident
    H = np.array([0.1, 0.2, 0.3, 0.05, 0.4])
    pos = np.array([10, 11, 12, 30, 20])
    assert select_dilated(H, pos, 4, 3) == [3, 0, 4]  # 11 and 12 are within 3 of 10
    assert select_dilated(H, pos, 2, 3) == [3, 0] and select_dilated(H, pos, 5, 1) == [3, 0, 1, 2, 4]


def test_mi_pairs_rule():
    select_mi = select_mi_pairs  # the rule of release 0.3, kept as mi-pairs
    H = np.array([0.0, 0.2, 0.3, 0.5])
    MI = np.zeros((4, 4))
    MI[1, 2] = MI[2, 1] = 0.5  # 1 and 2 depend on each other
    # gamma = 0 is sequential whatever lam
    assert select_mi(H, MI, 0.0, 0.0) == [0] and select_mi(H, MI, 0.0, 1.0) == [0]
    # lam = 0: a pure dependence budget; 2 is rejected (MI with 1 too high): the default
    # scan stops there (a prefix of the confidence order), scan="skip" lets 3 join
    assert select_mi(H, MI, 0.3, 0.0) == [0, 1]
    assert select_mi(H, MI, 0.3, 0.0, scan="skip") == [0, 1, 3]
    # lam weighs the candidates' entropy: every member but the first (0.2 + 0.5 for {1, 3})
    assert select_mi(H, MI, 0.71, 1.0, scan="skip") == [0, 1, 3]  # 0.7 < 0.71: inside
    assert select_mi(H, MI, 0.69, 1.0, scan="skip") == [0, 1]  # 0.7: outside
    assert select_mi(H, MI, 0.71, 2.0, scan="skip") == [0, 1]  # 3 would cost 2 * (0.2 + 0.5) > 0.71
    assert select_mi(H, MI, 0.6, 0.0) == [0, 1, 2, 3]
    # the least confident member is charged too (EB lets it in free): with MI = 0, lam = 1,
    # stop, the batch is the longest prefix whose candidates' entropies sum below gamma
    rng = np.random.default_rng(3)
    for _ in range(100):
        h = rng.random(12) * 0.1
        g = float(rng.random() * 0.3)
        order = np.argsort(h, kind="stable")
        cand = np.cumsum(h[order][1:])  # cost after admitting the 2nd, 3rd, ... member
        n = 1 + int(np.sum(np.cumsum(cand < g) == np.arange(1, len(cand) + 1)))
        assert select_mi(h, np.zeros((12, 12)), g, 1.0) == [int(i) for i in order[:n]]
        assert select_mi(h, None, g, 1.0) == select_mi(h, np.zeros((12, 12)), g, 1.0)  # mi-zero
        assert len(select_mi(h, None, g, 1.0)) <= len(select_eb(h, g))  # never more than EB's prefix


def test_mi_rule_never_pairs_above_budget():
    rng = np.random.default_rng(0)
    for _ in range(200):
        m = rng.integers(2, 30)
        H = rng.random(m)
        A = rng.random((m, m)) * rng.random() * 0.5
        MI = (A + A.T) / 2
        np.fill_diagonal(MI, 0)
        gamma, lam = rng.random() * 0.6, rng.random()
        for scan in ("stop", "skip"):
            S = select_mi_pairs(H, MI, gamma, lam, scan)
            assert S[0] == int(np.argmin(H)) and len(set(S)) == len(S)
            if scan == "stop":  # a prefix of the confidence order
                assert S == [int(i) for i in np.argsort(H, kind="stable")[: len(S)]]
            if len(S) < 2:
                continue
            sub = MI[np.ix_(S, S)]
            assert sub.max() < gamma  # no pair above the budget ...
            assert np.triu(sub, 1).sum() + lam * (H[S].sum() - H[S[0]]) < gamma  # ... nor the whole batch


@pytest.mark.parametrize("rule", ["mi", "mi-pairs"])
def test_mi_rule_reads_only_pairs_inside_its_reach(rule):
    """mi_rule_reach bounds what the rule can admit for any MI >= 0, so zeroing every MI
    outside reach x reach never changes the batch: the ground-truth oracle may skip them."""
    sel = select_mi if rule == "mi" else select_mi_pairs
    rng = np.random.default_rng(1)
    for t in range(300):
        m = int(rng.integers(2, 40))
        H = rng.random(m) * 10.0 ** rng.uniform(-4, 0, m)  # many near-certain cells, as mid-decode
        A = rng.random((m, m)) * 10.0 ** rng.uniform(-5, -1)
        MI = (A + A.T) / 2
        np.fill_diagonal(MI, 0)
        gamma = [0.0, 1e-3, 0.01, 0.1, 0.6][t % 5]
        lam = [0.0, 0.25, 1.0][t % 3]
        for scan in ("stop", "skip"):
            reach = mi_rule_reach(H, gamma, lam, scan, rule)
            inside = np.zeros((m, m), dtype=bool)
            inside[np.ix_(reach, reach)] = True
            assert sel(H, MI, gamma, lam, scan) == sel(H, np.where(inside, MI, 0.0), gamma, lam, scan)
            assert set(sel(H, None, gamma, lam, scan)) <= set(reach)  # MI = 0 admits the most
            if rule == "mi-pairs" and lam == 0 and gamma > 0:
                assert sorted(reach) == list(range(m))  # a pure dependence budget reads every pair


def test_mi_gt_expands_only_the_reach(monkeypatch):
    """The oracle decode with the reach-restricted map equals the decode with the full map
    (tokens, passes, batches), and spends fewer oracle passes."""
    from dataclasses import replace

    o, x = _oracle_states(n=4, masked=12, seed=2)
    cfg = SamplerConfig("mi-gt", gamma=0.2, lam=4.0)
    lean = decode(o, x, cfg)
    monkeypatch.setitem(
        SAMPLERS, "mi-gt", replace(SAMPLERS["mi-gt"], reach=lambda H, cfg, probs=None: list(range(len(H))))
    )
    full = decode(o, x, cfg)
    assert torch.equal(lean.tokens, full.tokens) and torch.equal(lean.passes, full.passes)
    assert lean.batch_sizes == full.batch_sizes
    assert (lean.oracle_passes <= full.oracle_passes).all() and lean.oracle_passes.sum() < full.oracle_passes.sum()


def test_config_validation():
    with pytest.raises(ValueError, match="unknown sampler"):
        SamplerConfig("nope")
    with pytest.raises(ValueError, match="k must be"):
        SamplerConfig("topk", k=0)
    with pytest.raises(ValueError, match="eb takes gamma, not k"):  # never silently dropped
        SamplerConfig("eb", k=3)
    with pytest.raises(ValueError, match="scan must be one of"):
        SamplerConfig("mi", scan="sideways")
    assert SamplerConfig("eb").gamma == 0.2 and SamplerConfig("eb").get("k") is None


def _oracle_states(n=5, masked=10, seed=0):
    o = ExactSudokuOracle()
    g = torch.Generator().manual_seed(seed)
    x = o.grids[torch.randint(0, 288, (n,), generator=g)].clone()
    for b in range(n):
        x[b, torch.randperm(16, generator=g)[:masked]] = o.mask_id
    return o, x


@pytest.mark.parametrize(
    "cfg",
    [
        SamplerConfig("sequential"),
        SamplerConfig("topk", k=3),
        SamplerConfig("eb", gamma=0.5),
        SamplerConfig("mi-gt", gamma=0.3, lam=0.5),
        SamplerConfig("mi-zero", gamma=0.5),
        SamplerConfig("topk", k=2, temperature=1.0, seed=3),
        SamplerConfig("eb", gamma=0.5, temperature=1.0, seed=1),
        SamplerConfig("threshold", tau=0.8),
        SamplerConfig("margin", k=3),
        SamplerConfig("klass", tau=0.7, kl=0.05),
        SamplerConfig("dilated", k=3, d=2),
    ],
)
def test_batched_decode_equals_one_by_one(cfg):
    """Sampled values too: each sequence draws from its own stream (seed, stream id)."""
    o, x = _oracle_states()
    together = decode(o, x, cfg, run=Batching(batch_size=2))
    for b in range(len(x)):
        alone = decode(o, x[b : b + 1], cfg, run=Batching(streams=[b]))
        assert torch.equal(alone.tokens[0], together.tokens[b])
        assert alone.batch_sizes[0] == together.batch_sizes[b]
    assert (together.tokens != o.mask_id).all()
    if cfg.name == "sequential":
        assert all(set(s) == {1} for s in together.batch_sizes)
        assert together.passes.tolist() == [10] * len(x)
    if cfg.name == "mi-gt":
        assert (together.oracle_passes > 0).all()
    # the exact oracle never makes a mistake one cell at a time
    if cfg.name == "sequential":
        for row in together.tokens.tolist():
            assert tuple(row) in {tuple(g) for g in o.grids.tolist()}


def test_gamma_zero_is_sequential():
    o, x = _oracle_states()
    for cfg in (SamplerConfig("mi-gt", gamma=0.0, lam=0.0), SamplerConfig("topk", k=1)):
        res = decode(o, x, cfg)
        assert all(set(s) == {1} for s in res.batch_sizes)


def test_trace_round_trips_through_json(tiny_mdm):
    x = boards_to_tokens([[0] * 81])
    res = decode(tiny_mdm, x, SamplerConfig("eb", gamma=1.0), record=True)
    tr = res.traces[0]
    assert len(tr.steps) == res.passes[0].item()
    back = Trace.from_json(tr.to_json())
    assert back == tr
    assert back.tokens_at(0) == tr.initial and back.tokens_at(len(tr.steps)) == tr.final
    assert sum(len(s.selected) for s in back.steps) == 81


def test_domain_defaults_fill_what_the_user_leaves_out():
    from mi_viz.core.samplers import config_for, defaults_for
    from mi_viz.core.sweep import parse_grid
    from mi_viz.domains import get_domain

    protein = get_domain("protein").sampler_defaults
    assert defaults_for("eb", protein)["gamma"] == protein["eb"]["gamma"]
    assert defaults_for("eb", {}) == SAMPLERS["eb"].params  # Sudoku: the registry's
    c = config_for("mi", protein, gamma=2.0)
    assert c.gamma == 2.0 and c.lam == protein["mi"]["lam"] and c.scan == "stop"
    assert config_for("mi", {}, gamma=None).gamma == SAMPLERS["mi"].params["gamma"]
    g = parse_grid("eb; mi:gamma=1", protein)
    assert g[0].gamma == protein["eb"]["gamma"] and (g[1].gamma, g[1].lam) == (1.0, protein["mi"]["lam"])
    assert parse_grid("eb")[0].gamma == SAMPLERS["eb"].params["gamma"]


def _dawn_graph():
    """Seven positions: 0 and 6 are context (committed with certainty), 1..5 masked. Every row
    leans on 0 (an attention sink, 0.6 a row); 1 leans on the anchor 6; 3 and 4 on each other;
    5 on 2. Top probabilities of 1..5: 0.75, 0.95, 0.8, 0.78, 0.85."""
    A = np.full((7, 7), 0.02)
    A[:, 0] = 0.6
    A[1, 6] = 0.5
    A[3, 4] = A[4, 3] = 0.4
    A[5, 2] = 0.4
    committed = np.array([1.0, np.nan, np.nan, np.nan, np.nan, np.nan, 1.0])
    return np.array([0.75, 0.95, 0.8, 0.78, 0.85]), np.arange(1, 6), A, committed


def test_dawn_on_a_made_up_graph():
    """DAWN by hand. With the sink filtered (sink 2: column 0's mean 0.6 > 2 / 7): 2 is confident,
    1 is induced by the anchor 6 (0.75 >= induce 0.7); of the rest, 5 conflicts with 2 (taken) and
    3 with 4, so the independent set adds 3 (more confident than 4). Candidates 1..5 are indices
    0..4, most confident first: [1 (pos 2), 2 (pos 3), 0 (pos 1)]."""
    from mi_viz.core.samplers.dawn_rule import Thresholds, select_dawn

    p1, pos, A, committed = _dawn_graph()
    assert select_dawn(p1, pos, A, committed, Thresholds(tau=0.9, induce=0.7, low=0.7, edge=0.3, sink=2.0)) == [1, 2, 0]
    # the sink left in (sink 10: the bar is 10 / 7): every masked position leans on the anchor 0,
    # so all five are "induced": the failure DAWN's filter exists for
    assert select_dawn(p1, pos, A, committed, Thresholds(tau=0.9, induce=0.7, low=0.7, edge=0.3, sink=10.0)) == [
        1,
        4,
        2,
        3,
        0,
    ]
    # 6 committed at 0.5 is no anchor: 1 is not induced, and below low = 0.76 it is not free either
    weak = committed.copy()
    weak[6] = 0.5
    assert select_dawn(p1, pos, A, weak, Thresholds(tau=0.9, induce=0.7, low=0.76, edge=0.3, sink=2.0)) == [1, 2]
    # nothing clears any bar: the most confident position alone
    assert select_dawn(p1 * 0.5, pos, A, committed, Thresholds(tau=0.9, induce=0.7, low=0.7, edge=0.3, sink=2.0)) == [1]


def test_dawn_reads_the_attention_of_the_same_pass():
    """decode hands dawn the backbone's own attention (core.attention; tests/test_attention.py checks
    it against an explicit softmax) and the commit probabilities: a tiny model decodes to the end,
    one pass a step, in parallel."""
    from mi_viz.core.attention import recording
    from mi_viz.core.samplers import SamplerConfig, decode
    from mi_viz.domains.sudoku.mdm import MDMConfig, SudokuMDM

    torch.manual_seed(0)
    model = SudokuMDM(MDMConfig(n_layers=1, n_heads=2, d_model=16)).eval()
    x = torch.full((2, 81), model.mask_id)
    x[:, :10] = torch.randint(0, 9, (2, 10))
    cfg = SamplerConfig("dawn", tau=0.12, induce=0.11, low=0.115, edge=0.013, sink=3.0)
    res = decode(model, x, cfg, record=True)
    assert (res.tokens != model.mask_id).all() and res.passes.tolist() == [len(t.steps) for t in res.traces]
    assert max(max(s) for s in res.batch_sizes) > 1  # it does decode in parallel here
    with torch.inference_mode(), recording(model) as box:
        model.forward_tokens(x[:1])
    assert box[-1].shape == (1, 81, 81) and torch.allclose(box[-1].sum(-1), torch.ones(1, 81), atol=1e-5)


def test_demask_rule_on_a_hand_worked_case():
    """DEMASK as implemented (docs/samplers.md): entropy order, the first always in; a candidate joins
    while its top probability clears conf and the batch's summed TV dependence stays <= tau."""
    from mi_viz.core.samplers.demask_rule import select_demask

    H = np.array([0.1, 0.2, 0.3, 0.4])  # entropy order 0, 1, 2, 3
    D = np.array([[0, 0.05, 0.02, 0.0], [0.05, 0, 0.04, 0.3], [0.02, 0.04, 0, 0.0], [0.0, 0.3, 0.0, 0]])
    top = np.array([0.9, 0.8, 0.7, 0.95])
    # 1 costs 0.05 (spent 0.05); 2 costs 0.02 + 0.04 = 0.06 (0.11 > 0.1): stop there
    assert select_demask(H, D, top, tau=0.1, conf=0.0) == [0, 1]
    # skip passes over 2 and reaches 3, which costs 0.3 with 1 in the batch: refused too
    assert select_demask(H, D, top, tau=0.1, conf=0.0, scan="skip") == [0, 1]
    assert select_demask(H, D, top, tau=0.11, conf=0.0) == [0, 1, 2]  # <= tau admits
    assert select_demask(H, D, top, tau=1.0, conf=0.75) == [0, 1]  # 2's 0.7 is below conf: the batch ends
    assert select_demask(H, D, top, tau=1.0, conf=0.75, scan="skip") == [0, 1, 3]
    assert select_demask(H, D, top, tau=0.0, conf=0.0) == [0]  # tau 0: sequential where anything depends
    assert select_demask(H, None, top, tau=0.0, conf=0.0) == [0, 1, 2, 3]  # D = 0: the budget never binds


@pytest.mark.parametrize("conf, scan", [(0.3, "stop"), (0.0, "stop"), (0.0, "skip")])
def test_demask_gt_expands_lazily_and_reads_the_tv(monkeypatch, conf, scan):
    """The TV oracle expanding a position only when its rule first reads it (LazyMap) decodes as with
    the full map, in fewer exact passes under scan=stop (conf 0: the full map is every masked cell);
    it reads the exact TV map (with tau at 0 every dependent pair splits, as the exact zeros allow)."""
    from dataclasses import replace

    o, x = _oracle_states(n=4, masked=12, seed=4)
    cfg = SamplerConfig("demask-gt", tau=0.05, conf=conf, scan=scan)
    lean = decode(o, x, cfg, record=True)
    monkeypatch.setitem(SAMPLERS, "demask-gt", replace(SAMPLERS["demask-gt"], lazy=False))
    full = decode(o, x, cfg)
    assert torch.equal(lean.tokens, full.tokens) and lean.batch_sizes == full.batch_sizes
    assert torch.equal(lean.passes, full.passes)
    assert (lean.oracle_passes <= full.oracle_passes).all()
    if scan == "stop":
        assert lean.oracle_passes.sum() < full.oracle_passes.sum()
    assert max(max(s) for s in lean.batch_sizes) > 1  # it did decode in parallel
    from mi_viz.core.mi import ground_truth_mi

    step = next(s for s in lean.traces[0].steps if len(s.selected) > 1)
    used = np.array(step.mi)  # (L, L) the map the rule read at that step
    S = step.selected
    exact = ground_truth_mi(o, torch.tensor([step.tokens]), eps=cfg.gt_eps).tv[0].numpy()
    assert np.allclose(used[np.ix_(S, S)], exact[np.ix_(S, S)], atol=1e-5)  # the exact TV map, not the MI
    assert used[np.ix_(S, S)].sum() / 2 <= cfg.tau + 1e-9  # the batch's pairs within the budget


def test_a_rule_refuses_a_head_of_the_other_map(tiny_mdm):
    from mi_viz.core.mi_head import HeadConfig, MIHead

    x = torch.full((1, 81), 9)
    mi_head = MIHead(HeadConfig(d_in=tiny_mdm.d_model, n_values=9))
    with pytest.raises(ValueError, match="reads a head trained on TV maps, not this MI head"):
        decode(tiny_mdm, x, SamplerConfig("demask", tau=0.1), head=mi_head)
    tv_head = MIHead(HeadConfig(d_in=tiny_mdm.d_model, n_values=9, target="tv"))
    res = decode(tiny_mdm, x, SamplerConfig("demask", tau=0.1), head={"mi": mi_head, "tv": tv_head}, max_steps=2)
    assert res.passes.item() == 2
    with torch.no_grad():
        d = tv_head.read(tiny_mdm.forward_tokens(x), x == 9)
    assert 0 <= float(d.min()) and float(d.max()) <= 1


def test_sampler_config_types_every_declared_parameter_as_its_kind():
    """cfg.gamma is typed for mypy (annotations on SamplerConfig, one per PARAMS entry, as its kind),
    still served by __getattr__: a rule that does not take a parameter refuses it by name."""
    from mi_viz.core.samplers import PARAMS

    kinds = {"int": int, "float": float, "choice": str}
    assert SamplerConfig.__annotations__.keys() >= PARAMS.keys()
    assert {p: SamplerConfig.__annotations__[p] for p in PARAMS} == {
        p: kinds[v.kind].__name__ for p, v in PARAMS.items()
    }
    cfg = SamplerConfig("mi", gamma=0.5, lam=2)
    assert cfg.gamma == 0.5 and isinstance(cfg.gamma, float)
    with pytest.raises(AttributeError, match="takes no parameter 'k'"):
        getattr(cfg, "k")  # noqa: B009 - the attribute read is what is tested
