import numpy as np

from mi_viz.core.mi_report import PairTable, directional_agreement


def _table(a, b):
    n = len(a)
    z = np.zeros(n, dtype=int)
    return PairTable(state=z, i=z, j=z + 1, gt=(a + b) / 2, est=(a + b) / 2, asym=np.abs(a - b), relation=z)


def test_directional_agreement_is_the_pearson_of_the_two_directions():
    """From the stored mean and |difference| alone, the same number as correlating the two
    directed estimates themselves over both orders of every pair."""
    g = np.random.default_rng(0)
    base = g.gamma(0.5, 0.2, 500)
    a, b = base + g.normal(0, 0.05, 500), base + g.normal(0, 0.05, 500)  # (500,) each
    want = np.corrcoef(np.concatenate([a, b]), np.concatenate([b, a]))[0, 1]
    assert abs(directional_agreement(_table(a, b)) - want) < 1e-9
    assert 0.5 < want < 0.99  # the example is neither trivial nor degenerate
    assert abs(directional_agreement(_table(base, base)) - 1.0) < 1e-9  # a consistent joint


def test_entropy_bounds_on_hand_made_pairs():
    """Pair 2 lies above min(H) = 0.1 but under the mean 0.55: it is the only pair above
    the min and holds all of the head's squared error."""
    import numpy as np

    from mi_viz.core.mi_report import entropy_bounds

    gt, est = np.array([0.1, 0.5, 0.0, 0.3]), np.array([0.1, 0.2, 0.0, 0.3])
    h_i, h_j = np.array([0.2, 0.1, 0.5, 0.3]), np.array([0.2, 1.0, 0.5, 0.4])
    r = entropy_bounds(gt, est, np.minimum(h_i, h_j), (h_i + h_j) / 2)
    assert r["share_above_min_entropy"] == 0.25 and r["share_above_mean_entropy"] == 0.0
    assert r["head_sq_error_share_above_min"] == 1.0 and r["head_above_min_entropy"] == 1  # est 0.2 > 0.1
    assert r["max_truth_over_mean_entropy"] == round(0.5 / 0.55, 4)
    assert r["pearson_pairs_within_min"] == 1.0
    assert "share_above_mean_entropy" not in entropy_bounds(
        gt, est, np.minimum(h_i, h_j)
    )  # the page knows the min only


def test_head_at_pairs_rescores_a_report_exactly(tiny_mdm, puzzles):
    """head_at_pairs re-reads a report's states: for the report's own head it returns the
    report's estimates bit for bit; for another head, that head's map at the same pairs."""
    import torch

    from mi_viz.core.mi_head import HeadConfig, MIHead
    from mi_viz.core.mi_report import ReportStates, head_at_pairs, mi_report

    torch.manual_seed(0)
    head = MIHead(HeadConfig(d_in=tiny_mdm.config.d_model, d_hidden=16, rank=8, d_pair=8)).eval()
    from mi_viz.domains import get_domain

    sudoku = get_domain("sudoku")
    seen = []
    rep = mi_report(
        tiny_mdm,
        head,
        ReportStates(sudoku.encode([p for p, _ in puzzles[:2]]), n=3),
        relations=sudoku.relations(81)[0],
        progress=lambda d, n: seen.append((d, n)),
    )
    pt, tokens = rep.pairs, rep.tokens
    assert seen == [(1, 3), (2, 3), (3, 3)]  # the app's progress bar
    assert np.array_equal(head_at_pairs(tiny_mdm, head, tokens.numpy(), pt), pt.est)
    other = MIHead(
        HeadConfig(d_in=tiny_mdm.config.d_model, d_hidden=16, rank=8, d_pair=8, mix_layers=1, mix_heads=2)
    ).eval()
    est = head_at_pairs(tiny_mdm, other, tokens, pt)
    with torch.inference_mode():
        s = int(pt.state[-1])
        x = tokens[s : s + 1]
        want = other.read(other.backbone_pass(tiny_mdm, x), x == 9)[0, pt.i[-1], pt.j[-1]]
    assert not np.array_equal(est, pt.est) and abs(est[-1] - float(want)) < 1e-6
