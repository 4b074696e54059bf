import pytest
import torch

from mi_viz.core.mi import marginals
from mi_viz.core.mi_head import HeadConfig, MIHead, frobenius_loss, load_head, save_head


def _inputs(B=3, L=81, D=32, V=9, seed=0):
    g = torch.Generator().manual_seed(seed)
    hidden = torch.randn(B, L, D, generator=g)
    logits = torch.randn(B, L, V, generator=g)
    masked = torch.rand(B, L, generator=g) < 0.6
    return hidden, logits, masked


@pytest.mark.parametrize("mix_layers", [0, 2])
def test_head_invariants(mix_layers):
    torch.manual_seed(0)
    head = MIHead(HeadConfig(d_in=32, d_hidden=16, rank=8, d_pair=8, mix_layers=mix_layers, mix_heads=2))
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
    head = MIHead(
        HeadConfig(
            d_in=32, d_hidden=16, rank=8, d_pair=8, hidden_layers=[0], excess=excess, mix_layers=mix_layers, mix_heads=2
        )
    ).eval()
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
            alone = head(
                hidden[b : b + 1],
                logits[b : b + 1],
                masked[b : b + 1],
                {0: layers[0][b : b + 1]},
                logp=logp[b : b + 1],
                entropy=H[b : b + 1],
            )  # (1, L, L), unpadded path
            assert torch.allclose(alone[0], batch[b], atol=1e-6), b
            assert (alone[0] > 0).sum() == masked[b].sum() * (masked[b].sum() - 1)  # every masked pair, only those
        twice = head(
            hidden[:1].expand(2, -1, -1),
            logits[:1].expand(2, -1, -1),
            masked[:1].expand(2, -1),
            {0: layers[0][:1].expand(2, -1, -1)},
        )  # equal masked counts: unpadded, gathered
        assert torch.allclose(twice[1], batch[0], atol=1e-6)


def _pair_logit_term_by_term(head, hidden, logits, masked):
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
    return head.out(F.gelu(pair))  # (B, L, L, 1), or (B, L, L, 2) with excess


@pytest.mark.parametrize("mix_layers", [0, 1])
@pytest.mark.parametrize("all_masked", [True, False])
def test_fused_pair_layer_equals_the_written_out_formula(mix_layers, all_masked):
    """The fused, masked-positions-only pair computation is the docs/mi.md formula."""
    torch.manual_seed(1)
    head = MIHead(HeadConfig(d_in=32, d_hidden=16, rank=8, d_pair=8, mix_layers=mix_layers, mix_heads=2))
    for prm in (head.pair_overlap, head.pair_prod.bias):  # zeros at init: make every term count
        torch.nn.init.normal_(prm)
    hidden, logits, masked = _inputs(B=3, L=20)
    if all_masked:
        masked[:] = True
    masked[2] = False  # a state with nothing masked
    masked[2, 5] = True  # ... but one cell: no pairs at all
    with torch.no_grad():
        g = _pair_logit_term_by_term(head, hidden, logits, masked).squeeze(-1)
        mi = head(hidden, logits, masked)
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
        masked[:, :, None] & masked[:, None, :] & ~torch.eye(81, dtype=torch.bool)
    )
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
    from mi_viz.core.checkpoints import CheckpointError
    from mi_viz.core.mi_head import check_head_fits

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
    with pytest.raises(CheckpointError, match="the MI head reads .* wide"):
        check_head_fits(wide, tiny_mdm)
    tv = MIHead(HeadConfig(d_in=d + 1, d_hidden=16, rank=8, d_pair=8, target="tv"))  # named as what it is
    with pytest.raises(CheckpointError, match=r"the TV \(DEMASK\) head reads .* wide"):
        check_head_fits(tv, tiny_mdm)


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


@pytest.mark.parametrize("options", [dict(mix_layers=2, excess=True, hidden_layers=[0]), dict(), dict(excess=True)])
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

    def both(sl, m):
        args = (hidden[sl], logits[sl], m, {k: v[sl] for k, v in layers.items()} if layers else None)
        head.trace = False
        with torch.no_grad():
            eager = head(*args)
        head.trace = True
        with torch.inference_mode():  # as decode runs it
            traced = head(*args)
        return eager, traced

    cases = [
        (slice(0, 1), masked[0:1]),
        (slice(2, 3), masked[2:3]),  # batch 1 at two masked counts
        (slice(1, 2), masked[1:2]),  # batch 1, nothing masked
        (slice(0, 4), masked),
        (slice(2, 4), masked[2:4]),  # padded batches of two sizes
        (slice(0, 2), masked[0:1].expand(2, -1)),
    ]  # equal masked counts: unpadded, gathered
    for sl, m in cases:
        eager, traced = both(sl, m)
        assert torch.equal(eager, traced), (sl, m.sum(1))
    assert set(head._traces) == {(True, True, "cpu"), (True, False, "cpu"), (False, False, "cpu"), (False, True, "cpu")}
    with torch.no_grad():  # new weights after the traces were built: the traces read them
        for prm in head.parameters():
            prm.add_(0.1 * torch.randn(prm.shape, generator=g))
    eager, traced = both(slice(0, 4), masked)
    assert torch.equal(eager, traced) and eager.abs().sum() > 0


def test_the_shipped_heads_traced_read_equals_the_eager_one_on_real_states():
    """The same check on the shipped checkpoints and real hard-puzzle states: a state alone and a padded batch."""
    from pathlib import Path

    from mi_viz.core.models import load_models
    from mi_viz.domains import get_domain
    from mi_viz.domains.sudoku import board as S
    from mi_viz.domains.sudoku.mdm import MASK_TOKEN, boards_to_tokens

    root = Path(__file__).resolve().parents[1]
    model, head = load_models(get_domain("sudoku"), need_head=True)
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
