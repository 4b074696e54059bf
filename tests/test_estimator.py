import pytest
import torch

from mi_viz.estimator import HeadConfig, MIHead, frobenius_loss, load_head, save_head


def _inputs(B=3, L=81, D=32, V=9, seed=0):
    g = torch.Generator().manual_seed(seed)
    hidden = torch.randn(B, L, D, generator=g)
    logits = torch.randn(B, L, V, generator=g)
    masked = torch.rand(B, L, generator=g) < 0.6
    return hidden, logits, masked


@pytest.mark.parametrize("pair_values", [False, True])
def test_head_invariants(pair_values):
    torch.manual_seed(0)
    head = MIHead(HeadConfig(d_in=32, d_hidden=16, rank=8, d_pair=8, pair_values=pair_values))
    hidden, logits, masked = _inputs()
    mi = head(hidden, logits, masked)
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
