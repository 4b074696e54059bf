import math

import pytest
import torch

from mi_viz.estimator import HeadConfig, MIHead, frobenius_loss, load_head, save_head
from mi_viz.samplers import marginals


def _inputs(B=3, L=81, D=32, V=9, seed=0):
    g = torch.Generator().manual_seed(seed)
    hidden = torch.randn(B, L, D, generator=g)
    logits = torch.randn(B, L, V, generator=g)
    masked = torch.rand(B, L, generator=g) < 0.6
    return hidden, logits, masked


@pytest.mark.parametrize("pair_values,global_context,mix_layers", [(False, 0, 0), (True, 0, 0), (True, 4, 0),
                                                                    (False, 0, 2)])
def test_head_invariants(pair_values, global_context, mix_layers):
    torch.manual_seed(0)
    head = MIHead(HeadConfig(d_in=32, d_hidden=16, rank=8, d_pair=8, pair_values=pair_values,
                             global_context=global_context, mix_layers=mix_layers, mix_heads=2))
    hidden, logits, masked = _inputs()
    masked[1] = False  # a state with nothing masked: all zeros, no NaN from an empty attention row
    mi = head(hidden, logits, masked)
    assert not mi.isnan().any()
    # the sampler hands over its log-marginals of the same pass: bit-identical, not just close
    logp, H = marginals(logits, masked)  # as samplers.decode computes them
    assert torch.equal(head(hidden, logits, masked, logp=logp), mi)
    assert torch.equal(head(hidden, logits, masked, logp=logp, entropy=H), mi)
    assert mi.shape == (3, 81, 81)
    assert torch.equal(mi, mi.transpose(1, 2))  # exactly symmetric
    assert (mi >= 0).all()
    assert (mi.diagonal(dim1=1, dim2=2) == 0).all()
    off = ~(masked[:, :, None] & masked[:, None, :])
    assert (mi[off] == 0).all()  # zero on every pair touching an unmasked position
    pairs = masked[:, :, None] & masked[:, None, :] & ~torch.eye(81, dtype=torch.bool)
    assert (mi[pairs] > 0).all()  # and not trivially zero where it matters
    # bounded by the smaller marginal entropy
    logp = torch.log_softmax(logits, -1)
    H = -(logp.exp() * logp).sum(-1)
    assert (mi <= torch.minimum(H[:, :, None], H[:, None, :]) + 1e-6).all()


@pytest.mark.parametrize("mix_layers,excess", [(0, False), (0, True), (2, True)])
def test_a_state_alone_equals_its_row_of_a_padded_batch(mix_layers, excess):
    """A batch pads every state to the most masked one and masks the padding out; a state
    read alone (batch 1) or in a batch of equal masked counts has no padding, and the head
    skips those masks and gathers by index_select. Both paths give the same map."""
    torch.manual_seed(3)
    head = MIHead(HeadConfig(d_in=32, d_hidden=16, rank=8, d_pair=8, hidden_layers=[0], excess=excess,
                             mix_layers=mix_layers, mix_heads=2)).eval()
    for prm in (head.pair_overlap, head.pair_prod.bias, head.out.bias):
        torch.nn.init.normal_(prm)
    hidden, logits, masked = _inputs(B=3, L=30)
    masked[0, :] = True  # 30 masked cells, and the others fewer: both of them padded
    masked[2, :] = False
    masked[2, 4:9] = True
    layers = {0: torch.randn(3, 30, 32, generator=torch.Generator().manual_seed(4))}
    logp, H = marginals(logits, masked)
    with torch.no_grad():
        batch = head(hidden, logits, masked, layers, logp=logp, entropy=H)  # (3, L, L), padded path
        for b in range(3):
            alone = head(hidden[b:b + 1], logits[b:b + 1], masked[b:b + 1], {0: layers[0][b:b + 1]},
                         logp=logp[b:b + 1], entropy=H[b:b + 1])  # (1, L, L), unpadded path
            assert torch.allclose(alone[0], batch[b], atol=1e-6), b
            assert (alone[0] > 0).sum() == masked[b].sum() * (masked[b].sum() - 1)  # every masked pair, only those
        twice = head(hidden[:1].expand(2, -1, -1), logits[:1].expand(2, -1, -1), masked[:1].expand(2, -1),
                     {0: layers[0][:1].expand(2, -1, -1)})  # equal masked counts: unpadded, gathered
        assert torch.allclose(twice[1], batch[0], atol=1e-6)


def _pair_logit_term_by_term(head, hidden, logits, masked, attn=None):
    """The head's pair logit g_ij written out as in docs/mi.md, one term at a time: the
    oracle for the fused single-matmul implementation."""
    import torch.nn.functional as F
    p = torch.softmax(logits, -1)
    H = -(p * torch.log_softmax(logits, -1)).sum(-1)
    z = head.emb(F.gelu(head.inp(torch.cat([head.ln(hidden), p, H[..., None]], -1))))
    for blk in head.mix:  # attention over the masked positions only, in place (no gathering)
        z = blk(z, masked)
    c = head.pair_single(z)
    pair = torch.einsum("bir,bjr,pr->bijp", z, z, head.pair_prod.weight) + head.pair_prod.bias
    pair = pair + c[:, :, None] + c[:, None, :] + torch.einsum("biv,bjv->bij", p, p)[..., None] * head.pair_overlap
    if head.pair_values is not None:
        pair = pair + torch.einsum("biv,bjv,pv->bijp", p, p, head.pair_values.weight)
    if attn is not None:  # (B, K, L, L): i reads j plus j reads i, uniform attention -> 1
        S = (attn + attn.transpose(-1, -2)) * attn.shape[-1] / 2
        if head.config.attn_two_hop:  # paths i -> k -> j through masked k, per masked cell
            two = torch.einsum("bkil,bkl,bklj->bkij", S, masked[:, None].float().expand_as(S[..., 0]), S)
            S = torch.cat([S, two / masked.sum(1).clamp_min(1)[:, None, None, None]], 1)
        pair = pair + torch.einsum("bkij,pk->bijp", S, head.pair_attn.weight)
    return head.out(F.gelu(pair))  # (B, L, L, 1), or (B, L, L, 2) with excess


@pytest.mark.parametrize("pair_values,with_attn,mix_layers", [(False, False, 0), (True, False, 0), (False, True, 0),
                                                              (False, False, 1), (False, "two-hop", 0)])
@pytest.mark.parametrize("all_masked", [True, False])
def test_fused_pair_layer_equals_the_written_out_formula(pair_values, with_attn, mix_layers, all_masked):
    """The fused, masked-positions-only pair computation is the docs/mi.md formula."""
    torch.manual_seed(1)
    head = MIHead(HeadConfig(d_in=32, d_hidden=16, rank=8, d_pair=8, pair_values=pair_values,
                             attn_layers=[1, 3] if with_attn else [], n_heads=2 if with_attn else 0,
                             attn_two_hop=with_attn == "two-hop",
                             mix_layers=mix_layers, mix_heads=2))
    for prm in (head.pair_overlap, head.pair_prod.bias):  # zeros at init: make every term count
        torch.nn.init.normal_(prm)
    hidden, logits, masked = _inputs(B=3, L=20)
    attn = torch.softmax(torch.randn(3, 4, 20, 20), -1) if with_attn else None  # blocks 1 and 3, 2 heads each
    if all_masked:
        masked[:] = True
    masked[2] = False  # a state with nothing masked
    masked[2, 5] = True  # ... but one cell: no pairs at all
    with torch.no_grad():
        g = _pair_logit_term_by_term(head, hidden, logits, masked, attn).squeeze(-1)
        mi = head(hidden, logits, masked, None, {1: attn[:, :2], 3: attn[:, 2:]} if with_attn else None)
    H = -(torch.softmax(logits, -1) * torch.log_softmax(logits, -1)).sum(-1) * masked
    mask2 = masked[:, :, None] & masked[:, None, :] & ~torch.eye(20, dtype=torch.bool)
    want = torch.sigmoid(g) * torch.minimum(H[:, :, None], H[:, None, :]) * mask2
    assert torch.allclose(mi, 0.5 * (want + want.transpose(1, 2)), atol=1e-6)
    assert (mi[2] == 0).all()


def test_head_learns_a_target_and_round_trips(tmp_path):
    torch.manual_seed(0)
    head = MIHead(HeadConfig(d_in=32, d_hidden=32, rank=8, d_pair=8))
    hidden, logits, masked = _inputs(B=4)
    target = 0.3 * head(hidden, logits, masked).detach().clamp_max(0) + 0.2 * (
        masked[:, :, None] & masked[:, None, :] & ~torch.eye(81, dtype=torch.bool))
    opt = torch.optim.Adam(head.parameters(), lr=1e-2)
    first = frobenius_loss(head(hidden, logits, masked), target, masked).item()
    for _ in range(60):
        loss = frobenius_loss(head(hidden, logits, masked), target, masked)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < 0.5 * first
    save_head(tmp_path / "h", head, step=60, metrics={"val_pearson": 0.5})
    h2, meta = load_head(tmp_path / "h")
    assert meta["metrics"]["val_pearson"] == 0.5
    assert torch.allclose(h2(hidden, logits, masked), head(hidden, logits, masked))


def test_head_reading_a_middle_block(tiny_mdm):
    """hidden_layers: the head reads a block's output from the same pass; asking for a
    block the backbone lacks, or forgetting to pass it, is a clear error."""
    from mi_viz.checkpoints import CheckpointError
    from mi_viz.estimator import check_head_fits

    torch.manual_seed(0)
    d = tiny_mdm.config.d_model
    head = MIHead(HeadConfig(d_in=d, d_hidden=16, rank=8, d_pair=8, hidden_layers=[0]))
    assert head.hidden_layers == (0,)
    check_head_fits(head, tiny_mdm)
    x = torch.full((2, 81), 9)
    x[:, :40] = torch.randint(0, 9, (2, 40))
    out = tiny_mdm.forward_tokens(x, head.hidden_layers)
    assert set(out.layers) == {0} and out.layers[0].shape == (2, 81, d)
    mi = head.read(out, x == 9)
    assert mi.shape == (2, 81, 81) and (mi >= 0).all() and (mi[:, :40] == 0).all()
    # the middle block matters: another block's states give another map
    other = dict(out.layers)
    other[0] = other[0] + torch.randn_like(other[0])  # (a constant shift would vanish in the LayerNorm)
    assert not torch.allclose(head(out.hidden, out.logits, x == 9, other), mi)
    with pytest.raises(ValueError, match="reads the backbone.s block 0"):
        head(out.hidden, out.logits, x == 9)
    with pytest.raises(ValueError, match="does not exist"):
        tiny_mdm.forward_tokens(x, (99,))
    bad = MIHead(HeadConfig(d_in=d, d_hidden=16, rank=8, d_pair=8, hidden_layers=[99]))
    with pytest.raises(CheckpointError, match="blocks 0.."):
        check_head_fits(bad, tiny_mdm)
    wide = MIHead(HeadConfig(d_in=d + 1, d_hidden=16, rank=8, d_pair=8))
    with pytest.raises(CheckpointError, match="wide"):
        check_head_fits(wide, tiny_mdm)


def test_attention_maps_of_the_same_pass(tiny_mdm):
    """attn_layers: the backbone returns softmax(q k^T / sqrt(d)) of the blocks asked for,
    computed in the pass itself (written out instead of the fused kernel: the logits equal
    the plain pass's up to float rounding, and the block's output is what these maps give
    when they weight v), and
    a head reading them keeps every invariant; a head
    whose maps are missing, or that expects another head count, is refused by name."""
    from mi_viz.checkpoints import CheckpointError
    from mi_viz.estimator import check_head_fits

    torch.manual_seed(0)
    c = tiny_mdm.config
    x = torch.full((3, 81), 9)
    x[:, :30] = torch.randint(0, 9, (3, 30))
    plain = tiny_mdm.forward_tokens(x)
    out = tiny_mdm.forward_tokens(x, (), (0, c.n_layer - 1))
    assert torch.allclose(out.logits, plain.logits, atol=1e-5) and torch.allclose(out.hidden, plain.hidden, atol=1e-5)
    assert torch.equal(tiny_mdm.forward_tokens(x, (), (0,)).attn[0], out.attn[0])  # deterministic
    assert set(out.attn) == {0, c.n_layer - 1} and out.attn[0].shape == (3, c.n_head, 81, 81)
    assert torch.allclose(out.attn[0].sum(-1), torch.ones(3, c.n_head, 81))
    # block 0's map by hand from its weights
    blk = tiny_mdm.blocks[0]
    h0 = tiny_mdm.tok_emb(x) + tiny_mdm.pos_emb(torch.arange(81))[None]
    q, k, _ = blk.qkv(blk.ln1(h0)).split(c.d_model, 2)
    dh = c.d_model // c.n_head
    q, k = (t.view(3, 81, c.n_head, dh).transpose(1, 2) for t in (q, k))
    assert torch.allclose(out.attn[0], torch.softmax(q @ k.transpose(-1, -2) / dh**0.5, -1), atol=1e-6)
    v = blk.qkv(blk.ln1(h0)).split(c.d_model, 2)[2].view(3, 81, c.n_head, dh).transpose(1, 2)
    y = h0 + blk.proj((out.attn[0] @ v).transpose(1, 2).reshape(3, 81, c.d_model))
    y = y + blk.fc_out(torch.nn.functional.gelu(blk.fc(blk.ln2(y))))
    x1, _ = blk(h0, return_attn=True)
    assert torch.allclose(x1, y, atol=1e-6)

    head = MIHead(HeadConfig(d_in=c.d_model, d_hidden=16, rank=8, d_pair=8, attn_layers=[c.n_layer - 1],
                             n_heads=c.n_head))
    check_head_fits(head, tiny_mdm)
    with torch.no_grad():
        head.pair_attn.weight.normal_()
    got = head.backbone_pass(tiny_mdm, x)
    mi = head.read(got, x == 9)
    assert torch.equal(mi, mi.transpose(1, 2)) and (mi >= 0).all()
    assert (mi[:, :30] == 0).all() and (mi[:, :, :30] == 0).all() and (torch.diagonal(mi, 0, 1, 2) == 0).all()
    other = {i: a.flip(-1) for i, a in got.attn.items()}
    assert not torch.allclose(head(got.hidden, got.logits, x == 9, got.layers, other), mi)
    with pytest.raises(ValueError, match="attention map of block"):
        head(got.hidden, got.logits, x == 9)
    with pytest.raises(ValueError, match="n_heads"):
        HeadConfig(attn_layers=[0])
    odd = MIHead(HeadConfig(d_in=c.d_model, d_hidden=16, rank=8, d_pair=8, attn_layers=[0], n_heads=c.n_head + 1))
    with pytest.raises(CheckpointError, match="heads per block"):
        check_head_fits(odd, tiny_mdm)


@pytest.mark.parametrize("all_masked", [True, False])
def test_excess_term_equals_the_written_out_formula(all_masked):
    """excess: MI = sigmoid(g0) min(H_i, H_j) + sigmoid(g1) (max - min)/2, so it stays
    within (H_i + H_j)/2 (the truth's bound, tests/test_mi.py) and can pass the min."""
    torch.manual_seed(2)
    head = MIHead(HeadConfig(d_in=32, d_hidden=16, rank=8, d_pair=8, excess=True))
    hidden, logits, masked = _inputs(B=3, L=20)
    logits = logits * torch.linspace(0.1, 4, 20)[:, None]  # confident and uncertain cells: min != max
    if all_masked:
        masked[:] = True
    masked[2] = False
    with torch.no_grad():
        head.out.bias.fill_(6.0)  # both terms near their ceilings: the min is passed
        g = _pair_logit_term_by_term(head, hidden, logits, masked)  # (B, L, L, 2)
        mi = head(hidden, logits, masked)
    H = -(torch.softmax(logits, -1) * torch.log_softmax(logits, -1)).sum(-1) * masked
    lo, hi = torch.minimum(H[:, :, None], H[:, None, :]), torch.maximum(H[:, :, None], H[:, None, :])
    mask2 = masked[:, :, None] & masked[:, None, :] & ~torch.eye(20, dtype=torch.bool)
    want = (torch.sigmoid(g[..., 0]) * lo + torch.sigmoid(g[..., 1]) * (hi - lo) / 2) * mask2
    assert torch.allclose(mi, 0.5 * (want + want.transpose(1, 2)), atol=1e-6)
    assert torch.equal(mi, mi.transpose(1, 2)) and (mi >= 0).all() and (mi[2] == 0).all()
    assert (mi <= (H[:, :, None] + H[:, None, :]) / 2 + 1e-6).all()
    assert (mi > lo + 1e-3).any()


def test_mixture_mi_equals_the_mi_of_its_joint():
    """mixture: every pair's MI is the MI of J_ij = (1/K) sum_k q_ik q_jk^T, written
    out pair by pair; symmetric, non-negative, zero off the masked pairs, within both
    of the mixture marginals' entropies."""
    import torch.nn.functional as F
    torch.manual_seed(3)
    K, V = 4, 9
    head = MIHead(HeadConfig(d_in=32, d_hidden=16, rank=8, d_pair=8, mixture=K))
    torch.nn.init.normal_(head.tilt.weight, std=10.0)  # components far apart: large MIs
    hidden, logits, masked = _inputs(B=2, L=12)
    masked[1, :6] = False
    with torch.no_grad():
        mi = head(hidden, logits, masked)
        p = torch.softmax(logits, -1)
        H = -(p * torch.log_softmax(logits, -1)).sum(-1)
        z = head.emb(F.gelu(head.inp(torch.cat([head.ln(hidden), p, H[..., None]], -1))))  # (B, L, r)
        q = torch.softmax(torch.log_softmax(logits, -1)[:, :, None] + head.tilt(z).view(2, 12, K, V), -1)
    for b in range(2):
        for i in range(12):
            for j in range(12):
                if i == j or not (masked[b, i] and masked[b, j]):
                    assert mi[b, i, j] == 0
                    continue
                J = torch.einsum("ka,kb->ab", q[b, i], q[b, j]) / K  # (V, V)
                pi, pj = J.sum(1, keepdim=True), J.sum(0, keepdim=True)
                want = (J * torch.log(J / (pi * pj))).sum()
                assert abs(mi[b, i, j].item() - want.item()) < 1e-5
                Hm = lambda m: -(m * m.log()).sum()  # noqa: E731
                assert mi[b, i, j] <= min(Hm(pi), Hm(pj)) + 1e-5
    assert torch.equal(mi, mi.transpose(1, 2)) and (mi >= 0).all() and mi.max() > 0.05
    with pytest.raises(ValueError, match="mixture replaces the pair MLP, so excess"):
        HeadConfig(mixture=4, excess=True)


def test_link_mi_equals_the_mi_of_its_joint():
    """link_mi's closed form is the MI of the joint p_i(v) q_s(w | v), q_s ∝ p_j(w) e^{s [w = v]},
    written out pair by pair; and the values its comment quotes (two 50/50 cells over the
    same values under exclusion: ln 2; sharing one value: 0.22; disjoint: 0)."""
    from mi_viz.estimator import link_mi
    g = torch.Generator().manual_seed(4)
    p = torch.softmax(torch.randn(2, 5, 9, generator=g, dtype=torch.float64) * 3, -1)  # (B, M, V)
    tilts = (-8.0, -1.0, 4.0)
    got = link_mi(p, tilts)  # (B, M, M, S)
    assert got.shape == (2, 5, 5, 3)
    for b in range(2):
        for i in range(5):
            for j in range(5):
                for k, s in enumerate(tilts):
                    q = p[b, j][None, :] * torch.exp(s * torch.eye(9, dtype=torch.float64))  # (V, V) rows v
                    J = p[b, i][:, None] * q / q.sum(1, keepdim=True)  # (V, V) joint
                    want = (J * torch.log(J / (J.sum(1, keepdim=True) * J.sum(0, keepdim=True)))).sum()
                    assert abs(got[b, i, j, k].item() - want.item()) < 1e-9
    half = lambda *vals: torch.zeros(9, dtype=torch.float64).index_fill_(0, torch.tensor(vals), 0.5)  # noqa: E731
    cells = torch.stack([half(0, 1), half(0, 1), half(0, 2), half(5, 6)])[None]  # (1, 4, V)
    I = link_mi(cells, (-40.0,))[0, :, :, 0]  # (4, 4)
    assert abs(I[0, 1].item() - math.log(2)) < 1e-9
    assert abs(I[0, 2].item() - 0.2158) < 1e-3 and I[0, 3].item() < 1e-12


def test_link_head_invariants():
    """link: the pair MLP also reads W [I_excl + I_excl^T, I_agree + I_agree^T]; the map keeps
    every invariant, and the feature term is what changes it."""
    torch.manual_seed(5)
    head = MIHead(HeadConfig(d_in=32, d_hidden=16, rank=8, d_pair=8, link=True))
    hidden, logits, masked = _inputs(B=2, L=30)
    masked[1] = False
    with torch.no_grad():
        mi = head(hidden, logits, masked)
        head.pair_link.weight.zero_()
        mi0 = head(hidden, logits, masked)
    assert torch.equal(mi, mi.transpose(1, 2)) and (mi >= 0).all() and (mi[1] == 0).all()
    assert (mi.diagonal(dim1=1, dim2=2) == 0).all()
    assert not torch.allclose(mi, mi0)
    with pytest.raises(ValueError, match="so link would be ignored"):
        HeadConfig(mixture=4, link=True)


@pytest.mark.parametrize("options", [dict(mix_layers=2, excess=True, hidden_layers=[0]),
                                     dict(pair_values=True, global_context=4),
                                     dict(attn_layers=[0], n_heads=2, attn_two_hop=True, excess=True),
                                     dict(link=True), dict(mixture=3)])
def test_the_traced_read_equals_the_eager_one_bit_for_bit(options):
    """Without autograd the head runs its read traced (TorchScript), once per (batch 1, unpadded)
    flag pair: each trace must give the eager maps exactly, at masked counts and batch sizes
    other than the ones it was traced at, and must see weights loaded after it was built."""
    torch.manual_seed(5)
    head = MIHead(HeadConfig(d_in=32, d_hidden=16, rank=8, d_pair=8, mix_heads=2, **options)).eval()
    hidden, logits, masked = _inputs(B=4, L=30, seed=6)
    masked[1] = False  # nothing masked in one state: a padded batch
    g = torch.Generator().manual_seed(7)
    layers = {0: torch.randn(4, 30, 32, generator=g)} if head.hidden_layers else None
    attn = {0: torch.softmax(torch.randn(4, 2, 30, 30, generator=g), -1)} if head.attn_layers else None

    def both(sl, m):
        args = (hidden[sl], logits[sl], m, {k: v[sl] for k, v in layers.items()} if layers else None,
                {k: v[sl] for k, v in attn.items()} if attn else None)
        head.trace = False
        with torch.no_grad():
            eager = head(*args)
        head.trace = True
        with torch.inference_mode():  # as decode runs it
            traced = head(*args)
        return eager, traced

    cases = [(slice(0, 1), masked[0:1]), (slice(2, 3), masked[2:3]),  # batch 1 at two masked counts
             (slice(1, 2), masked[1:2]),  # batch 1, nothing masked
             (slice(0, 4), masked), (slice(2, 4), masked[2:4]),  # padded batches of two sizes
             (slice(0, 2), masked[0:1].expand(2, -1))]  # equal masked counts: unpadded, gathered
    for sl, m in cases:
        eager, traced = both(sl, m)
        assert torch.equal(eager, traced), (sl, m.sum(1))
    assert set(head._traces) == {(True, True, "cpu"), (True, False, "cpu"), (False, False, "cpu"),
                                 (False, True, "cpu")}
    with torch.no_grad():  # new weights after the traces were built: the traces read them
        for prm in head.parameters():
            prm.add_(0.1 * torch.randn(prm.shape, generator=g))
    eager, traced = both(slice(0, 4), masked)
    assert torch.equal(eager, traced) and eager.abs().sum() > 0


def test_the_shipped_heads_traced_read_equals_the_eager_one_on_real_states():
    """The same check on the shipped checkpoints and real hard-puzzle states: a state alone and a padded batch."""
    from pathlib import Path

    from mi_viz import sudoku as S
    from mi_viz.bench import load_models
    from mi_viz.models.sudoku_mdm import MASK_TOKEN, boards_to_tokens

    root = Path(__file__).resolve().parents[1]
    model, head, _ = load_models(need_head=True)
    x = boards_to_tokens(S.read_puzzle_file(root / "data" / "sudoku" / "test_hard.txt").puzzles[:3])
    x[1, :30] = torch.where(x[1, :30] == MASK_TOKEN, 5, x[1, :30])  # fewer masked cells: a padded batch
    for xx in (x[:1], x):
        with torch.inference_mode():
            out = head.backbone_pass(model, xx)
            logp, H = marginals(out.logits, xx == MASK_TOKEN)
            traced = head.read(out, xx == MASK_TOKEN, logp, H)
            head.trace = False
            eager = head.read(out, xx == MASK_TOKEN, logp, H)
            head.trace = True
        assert torch.equal(traced, eager) and traced.sum() > 0
