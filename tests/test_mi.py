"""Ground-truth MI against the exact 4x4 oracle (288 grids, everything enumerable)."""

import math

import pytest
import torch

from mi_viz.core.mi import MIRun, entropy, ground_truth_mi
from mi_viz.core.protocol import ModelOutput
from mi_viz.domains.sudoku.oracle import ExactSudokuOracle


@pytest.fixture(scope="module")
def oracle():
    return ExactSudokuOracle()


def _mi_from_joint(J):
    pi, pj = J.sum(1, keepdim=True), J.sum(0, keepdim=True)
    nz = J > 0
    return float((J[nz] * torch.log(J[nz] / (pi * pj)[nz])).sum())


def _contexts(oracle, n=6, n_masked=11, seed=0):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        grid = oracle.grids[torch.randint(0, 288, (1,), generator=g)].clone()[0]
        m = torch.randperm(16, generator=g)[:n_masked]
        grid[m] = oracle.mask_id
        out.append(grid)
    return torch.stack(out)  # (n, 16)


@pytest.mark.parametrize("marginal", ["joint", "model"])
def test_matches_enumerated_joint(oracle, marginal):
    ctx = _contexts(oracle)
    res = ground_truth_mi(oracle, ctx, eps=0.0, marginal=marginal, run=MIRun(chunk=37))  # odd chunk: exercises chunking
    checked, nonzero = 0, 0
    for b in range(len(ctx)):
        masked = (ctx[b] == oracle.mask_id).nonzero().squeeze(1).tolist()
        for i in masked:
            for j in masked:
                if i == j:
                    continue
                exact = _mi_from_joint(oracle.joint_pair(ctx[b], i, j))
                assert abs(res.extra["directed64"][b, i, j].item() - exact) < 1e-6
                assert abs(res.extra["mi64"][b, i, j].item() - exact) < 1e-6
                checked += 1
                nonzero += exact > 1e-3
    assert checked > 300 and nonzero > 20  # the contexts really have dependence
    # a consistent joint is perfectly symmetric
    assert res.asymmetry.max() < 1e-6
    # zero on the diagonal and off the masked set
    unmasked = ctx != oracle.mask_id
    assert (res.mi.diagonal(dim1=1, dim2=2) == 0).all()
    assert (res.mi[unmasked[:, :, None].expand(-1, -1, 16)] == 0).all()


def _tv_from_joint(J):
    """Expected TV influence of the row variable on the column one, written out: sum_v P(v) TV(P(. | v), P(.))."""
    pi, pj = J.sum(1), J.sum(0)
    cond = J / pi.clamp_min(1e-300)[:, None]
    return float((pi * 0.5 * (cond - pj[None]).abs().sum(1))[pi > 0].sum())


def test_tv_influence_matches_the_enumerated_joint(oracle):
    """DEMASK's D from the same passes as the MI map: against the 4x4 oracle's exact pair joints, both
    directions (row = the position conditioned on), the symmetrised map their mean, in [0, 1], zero
    where the MI is."""
    ctx = _contexts(oracle, seed=3)
    res = ground_truth_mi(oracle, ctx, eps=0.0, run=MIRun(chunk=29))
    checked = 0
    for b in range(len(ctx)):
        masked = (ctx[b] == oracle.mask_id).nonzero().squeeze(1).tolist()
        for i in masked:
            for j in masked:
                if i == j:
                    continue
                J = oracle.joint_pair(ctx[b], i, j)  # (V, V): rows x_i, columns x_j
                assert abs(res.extra["tv_directed64"][b, i, j].item() - _tv_from_joint(J)) < 1e-9
                assert abs(res.extra["tv_directed64"][b, j, i].item() - _tv_from_joint(J.T)) < 1e-9
                checked += 1
    assert checked > 300
    assert torch.allclose(res.tv, 0.5 * (res.tv_directed + res.tv_directed.transpose(1, 2)))
    assert res.tv.min() >= 0 and res.tv.max() <= 1 and res.tv.max() > 0.1
    assert ((res.mi < 1e-9) == (res.tv < 1e-9)).all()  # independent exactly where the MI says so


def test_positions_give_the_same_numbers_inside_the_scope(oracle):
    """positions: only the chosen cells are conditioned on, and every MI between two of
    them is the full map's number; pairs touching a cell outside are 0."""
    ctx = _contexts(oracle, n=4, seed=3)
    full = ground_truth_mi(oracle, ctx, eps=1e-3)
    g = torch.Generator().manual_seed(4)
    pos = torch.rand(ctx.shape, generator=g) < 0.5  # (B, L), unmasked picks are ignored
    part = ground_truth_mi(oracle, ctx, eps=1e-3, positions=pos)
    scope = pos & (ctx == oracle.mask_id)
    inside = scope[:, :, None] & scope[:, None, :]
    assert torch.equal(part.extra["mi64"][inside], full.extra["mi64"][inside])
    assert (part.mi[~inside] == 0).all()
    assert (part.passes < full.passes).all()
    kept = ((torch.softmax(oracle.forward_tokens(ctx).logits.double(), -1) >= 1e-3).sum(-1) * scope).sum(1)
    assert torch.equal(part.passes, kept + 1)  # one per kept value of each cell in scope, plus the base pass
    # rows=True: each cell in scope keeps its whole directed rows (the full map's), the symmetric maps as before
    rows = ground_truth_mi(oracle, ctx, eps=1e-3, positions=pos, rows=True)
    row = scope[:, :, None] & (ctx == oracle.mask_id)[:, None, :]
    for key in ("directed64", "tv_directed64"):
        assert torch.equal(rows.extra[key][row], full.extra[key][row]) and (rows.extra[key][~row] == 0).all()
    assert torch.equal(rows.extra["mi64"], part.extra["mi64"]) and torch.equal(rows.tv, part.tv)
    assert (rows.extra["directed64"][row] > 0).any() and not row.equal(inside)  # rows reach past the scope


def test_pruning_tolerance_behaves_as_documented(oracle):
    ctx = _contexts(oracle, n=3)
    exact = ground_truth_mi(oracle, ctx, eps=0.0)
    m = ctx == oracle.mask_id
    # eps = 0 expands every value of every masked position
    assert exact.passes.tolist() == (1 + 4 * m.sum(1)).tolist()
    assert exact.dropped_mass.abs().max() < 1e-12
    # a tiny eps prunes only impossible values: same MI, fewer passes, no dropped mass
    tiny = ground_truth_mi(oracle, ctx, eps=1e-9)
    assert (tiny.passes < exact.passes).all()
    assert torch.allclose(tiny.mi, exact.mi, atol=1e-7)
    assert tiny.dropped_mass.abs().max() < 1e-12
    # a large eps drops real mass: reported exactly, one pass per kept value
    out = oracle.forward_tokens(ctx)
    p = torch.softmax(out.logits.double(), -1)
    eps = 0.6  # above 1/2: a 50/50 position keeps only its argmax
    keep = (p >= eps) | torch.zeros_like(p, dtype=torch.bool).scatter(-1, p.argmax(-1, keepdim=True), True)
    keep &= m[..., None]
    big = ground_truth_mi(oracle, ctx, eps=eps)
    assert big.passes.tolist() == (1 + keep.sum((1, 2))).tolist()
    expected_drop = torch.where(m, 1 - (p * keep).sum(-1), torch.zeros_like(p[..., 0]))
    assert torch.allclose(big.dropped_mass.double(), expected_drop, atol=1e-6)
    assert big.dropped_mass.max() > 0.3


def test_determined_pair_gives_entropy(oracle):
    # r1 = 1 2 . . with the rest of a grid fixed so that r1c3 / r1c4 are {3,4} either way
    ctx = torch.full((16,), oracle.mask_id)
    ctx[0], ctx[1] = 0, 1  # digits 1, 2 in tokens
    res = ground_truth_mi(oracle, ctx[None], eps=0.0)
    J = oracle.joint_pair(ctx, 2, 3)
    assert abs(J[2, 3] - 0.5) < 1e-12 and abs(J[3, 2] - 0.5) < 1e-12  # a 50/50 permutation
    assert abs(res.mi[0, 2, 3].item() - math.log(2)) < 1e-6
    assert abs(res.entropy[0, 2].item() - math.log(2)) < 1e-6


class IndependentModel:
    """Marginals that ignore the context entirely: every pair is independent."""

    mask_id = 5
    value_tokens = torch.arange(5)

    def forward_tokens(self, tokens):
        B, L = tokens.shape
        logits = torch.arange(L * 5, dtype=torch.float).view(1, L, 5).sin().expand(B, L, 5) * 3
        return ModelOutput(logits=logits, hidden=None)


def test_independent_positions_give_zero():
    x = torch.full((2, 7), 5)
    x[1, 3] = 2
    res = ground_truth_mi(IndependentModel(), x, eps=0.0)
    assert res.mi.abs().max() < 1e-9 and res.asymmetry.abs().max() < 1e-9
    assert res.entropy[0].min() > 0.1


def test_entropy_in_nats():
    logits = torch.zeros(3, 4)
    assert torch.allclose(entropy(logits), torch.full((3,), math.log(4)))
    assert entropy(torch.tensor([[0.0, -1e9]])).item() < 1e-6


def test_progress_callback_and_chunked_memory(oracle):
    ctx = _contexts(oracle, n=2)
    calls = []
    ground_truth_mi(oracle, ctx, eps=0.0, run=MIRun(chunk=10, progress=lambda d, t: calls.append((d, t))))
    assert calls[-1][0] == calls[-1][1] and len(calls) == math.ceil(calls[-1][1] / 10)


class CopycatModel:
    """An inconsistent model: cell 0 alone looks certain (value 0 at 98 %), yet setting
    cell 1 to w makes the model copy w into cell 0. Conditioning on 1 then finds a
    dependence of H(x_1) = ln 3 that conditioning on 0 cannot see."""

    mask_id = 3
    value_tokens = torch.arange(3)

    def forward_tokens(self, tokens):
        B, L = tokens.shape  # L = 2
        logits = torch.zeros(B, L, 3)
        logits[:, 0, 0] = math.log(49 * 2)  # p(x_0 = 0) = 0.98 when x_1 is masked
        known = tokens[:, 1] != self.mask_id
        logits[known, 0] = -20.0
        logits[known, 0, tokens[known, 1]] = 20.0  # x_1 = w -> x_0 = w
        return ModelOutput(logits=logits, hidden=None)


def test_symmetrised_truth_is_bounded_by_the_mean_entropy_not_the_min():
    """The map is the mean of I(i->j) <= H_i and I(j->i) <= H_j, so it is bounded by
    (H_i + H_j)/2, and for an inconsistent model it can exceed min(H_i, H_j): the MI
    head's bound has to allow that (HeadConfig.excess, docs/mi.md)."""
    res = ground_truth_mi(CopycatModel(), torch.tensor([[3, 3]]), eps=0.0)
    H0, H1 = res.entropy[0].tolist()
    assert abs(H1 - math.log(3)) < 1e-6 and H0 < 0.12
    assert abs(res.directed[0, 1, 0].item() - math.log(3)) < 1e-6  # conditioning on 1 copies it into 0
    assert res.directed[0, 0, 1].item() < 1e-6  # conditioning on 0 changes nothing at 1
    mi = res.mi[0, 0, 1].item()
    assert mi > 2 * min(H0, H1)
    assert mi <= (H0 + H1) / 2 + 1e-9


def test_streamed_ground_truth_equals_the_dense_one(tiny_mdm):
    """Past max_dense_bytes each conditioned position is reduced to its row as soon as its
    passes are done (proteins): the same map, whatever the chunk size cuts through."""
    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, 9, (3, 81), generator=g)
    x[torch.rand(3, 81, generator=g) < 0.4] = 9
    x[2, :] = 9
    x[2, 5] = 3
    dense = ground_truth_mi(tiny_mdm, x, eps=1e-3, run=MIRun(chunk=64))
    for chunk in (7, 64, 5000):
        for marginal in ("joint", "model"):
            model_ref = marginal == "model"
            ref = ground_truth_mi(tiny_mdm, x, eps=1e-3, marginal=marginal, run=MIRun(chunk=64)) if model_ref else dense
            s = ground_truth_mi(tiny_mdm, x, eps=1e-3, marginal=marginal, run=MIRun(chunk=chunk, max_dense_bytes=0))
            assert torch.allclose(s.extra["directed64"], ref.extra["directed64"], atol=1e-12, rtol=0), (chunk, marginal)
            assert torch.allclose(s.extra["tv_directed64"], ref.extra["tv_directed64"], atol=1e-12, rtol=0)
            assert torch.equal(s.passes, ref.passes)


def test_cost_estimate_counts_the_passes(tiny_mdm):
    from mi_viz.core.mi import ground_truth_cost

    x = torch.full((2, 81), 9)
    x[1, :60] = torch.arange(60) % 9
    cost = ground_truth_cost(tiny_mdm, x, eps=1e-3, seconds_per_pass=0.01)
    gt = ground_truth_mi(tiny_mdm, x, eps=1e-3)
    assert cost["passes"] == gt.passes.tolist() and cost["masked"] == [81, 21]
    assert cost["seconds"] == round(0.01 * int(gt.passes.sum()), 3)
    assert ground_truth_cost(tiny_mdm, x, eps=1e-3)["seconds_per_pass"] > 0  # timed when not given


def test_protein_ground_truth_against_the_joint_written_out():
    """A tiny random ESM-C: for two masked positions, P(x_i = v, x_j = w) = p_i(v) q(w | i = v)
    from one pass per value of i, written out with loops; the ground truth's I_{i->j} is its MI."""
    from mi_viz.domains.protein.alphabet import MASK, VALUE_TOKENS, encode
    from mi_viz.domains.protein.backbone import ESMCBackbone, ProteinMDMConfig

    torch.manual_seed(0)
    model = ESMCBackbone(ProteinMDMConfig(d_model=32, n_heads=2, n_layers=2)).eval()
    with torch.no_grad():  # weights at 3x the usual scale: conditioning one residue moves the others
        for prm in model.esmc.parameters():
            if prm.dim() == 2:
                prm.normal_(0, 3 / prm.shape[1] ** 0.5)
    x = encode("MK__VL_A", allow_mask=True)[None]  # masked at 2, 3, 6
    gt = ground_truth_mi(model, x, eps=0.0, run=MIRun(max_dense_bytes=0))
    with torch.no_grad():
        p = torch.softmax(model.forward_tokens(x).logits.double(), -1)[0]  # (L, 20)
        for i, j in ((2, 3), (3, 6), (6, 2)):
            joint = torch.zeros(20, 20, dtype=torch.float64)
            for v in range(20):
                xv = x.clone()
                xv[0, i] = VALUE_TOKENS[v]
                q = torch.softmax(model.forward_tokens(xv).logits.double(), -1)[0, j]  # (20,)
                joint[v] = p[i, v] * q
            pj = joint.sum(0)  # the marginal of j implied by the joint
            want = sum(
                float(joint[v, w] * torch.log(joint[v, w] / (p[i, v] * pj[w])))
                for v in range(20)
                for w in range(20)
                if joint[v, w] > 0
            )
            assert abs(float(gt.extra["directed64"][0, i, j]) - want) < 1e-5, (i, j)  # float32 passes, batched or not
    assert int(gt.passes[0]) == 1 + 3 * 20 and (gt.mi[0][x[0] != MASK] == 0).all()
    assert gt.mi[0].max() > 0.1  # not trivially zero
