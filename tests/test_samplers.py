import numpy as np
import pytest
import torch

from mi_viz.core.samplers import (
    SAMPLERS,
    SamplerConfig,
    Trace,
    decode,
    mi_rule_reach,
    select_eb,
    select_mi,
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


def test_mi_rule():
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
            S = select_mi(H, MI, gamma, lam, scan)
            assert S[0] == int(np.argmin(H)) and len(set(S)) == len(S)
            if scan == "stop":  # a prefix of the confidence order
                assert S == [int(i) for i in np.argsort(H, kind="stable")[: len(S)]]
            if len(S) < 2:
                continue
            sub = MI[np.ix_(S, S)]
            assert sub.max() < gamma  # no pair above the budget ...
            assert np.triu(sub, 1).sum() + lam * (H[S].sum() - H[S[0]]) < gamma  # ... nor the whole batch


def test_mi_rule_reads_only_pairs_inside_its_reach():
    """mi_rule_reach bounds what select_mi can admit for any MI >= 0, so zeroing every MI
    outside reach x reach never changes the batch: the ground-truth oracle may skip them."""
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
            reach = mi_rule_reach(H, gamma, lam, scan)
            inside = np.zeros((m, m), dtype=bool)
            inside[np.ix_(reach, reach)] = True
            assert select_mi(H, MI, gamma, lam, scan) == select_mi(H, np.where(inside, MI, 0.0), gamma, lam, scan)
            assert set(select_mi(H, None, gamma, lam, scan)) <= set(reach)  # MI = 0 admits the most
            if lam == 0 and gamma > 0:
                assert sorted(reach) == list(range(m))  # a pure dependence budget reads every pair


def test_mi_gt_expands_only_the_reach(monkeypatch):
    """The oracle decode with the reach-restricted map equals the decode with the full map
    (tokens, passes, batches), and spends fewer oracle passes."""
    import mi_viz.core.samplers as smp

    o, x = _oracle_states(n=4, masked=12, seed=2)
    cfg = SamplerConfig("mi-gt", gamma=0.05, lam=0.25)
    lean = decode(o, x, cfg)
    monkeypatch.setattr(smp, "mi_rule_reach", lambda H, g, lam, scan: list(range(len(H))))
    full = decode(o, x, cfg)
    assert torch.equal(lean.tokens, full.tokens) and torch.equal(lean.passes, full.passes)
    assert lean.batch_sizes == full.batch_sizes
    assert (lean.oracle_passes <= full.oracle_passes).all() and lean.oracle_passes.sum() < full.oracle_passes.sum()


def test_config_validation():
    with pytest.raises(ValueError, match="unknown sampler"):
        SamplerConfig("nope")
    with pytest.raises(ValueError, match="k must be"):
        SamplerConfig("topk", k=0)
    c = SamplerConfig("eb", k=3)
    assert c.k is None and c.gamma == 0.2  # irrelevant parameters are dropped


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
    ],
)
def test_batched_decode_equals_one_by_one(cfg):
    o, x = _oracle_states()
    together = decode(o, x, cfg, batch_size=2)
    for b in range(len(x)):
        alone = decode(o, x[b : b + 1], cfg)
        if cfg.temperature == 0:
            assert torch.equal(alone.tokens[0], together.tokens[b])
        assert alone.batch_sizes[0] == together.batch_sizes[b] or cfg.temperature > 0
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
    from mi_viz.core.bench import parse_grid
    from mi_viz.core.samplers import config_for, defaults_for
    from mi_viz.domains import get_domain

    protein = get_domain("protein").sampler_defaults
    assert defaults_for("eb", protein)["gamma"] == protein["eb"]["gamma"]
    assert defaults_for("eb", {}) == SAMPLERS["eb"].defaults  # Sudoku: the registry's
    c = config_for("mi", protein, gamma=2.0)
    assert c.gamma == 2.0 and c.lam == protein["mi"]["lam"] and c.scan == "stop"
    assert config_for("mi", {}, gamma=None).gamma == SAMPLERS["mi"].defaults["gamma"]
    g = parse_grid("eb; mi:gamma=1", protein)
    assert g[0].gamma == protein["eb"]["gamma"] and (g[1].gamma, g[1].lam) == (1.0, protein["mi"]["lam"])
    assert parse_grid("eb")[0].gamma == SAMPLERS["eb"].defaults["gamma"]
