"""The shared masking of the MDM objective (mi_viz.core.objective)."""

import torch

from mi_viz.core.objective import random_mask


def test_fixed_ratio_masks_only_real_positions_and_at_least_one():
    real = torch.tensor([[True] * 6 + [False] * 4, [True] * 10, [False] * 10])  # (3, 10)
    masked, t = random_mask(real, torch.Generator().manual_seed(0), mask_ratio=0.0)
    assert t.shape == (3, 1) and float(t.max()) == 0.0
    assert not (masked & ~real).any()  # padding never masked
    assert masked.sum(1).tolist() == [1, 1, 0]  # ratio 0: the one forced position (none on an empty row)


def test_ratio_one_masks_every_real_position():
    real = torch.tensor([[True] * 7 + [False] * 3])
    masked, _ = random_mask(real, torch.Generator().manual_seed(0), mask_ratio=1.0)
    assert torch.equal(masked, real)


def test_drawn_ratio_is_clamped_and_seeded():
    real = torch.ones(64, 81, dtype=torch.bool)
    a, ta = random_mask(real, torch.Generator().manual_seed(3), min_t=0.2)
    b, tb = random_mask(real, torch.Generator().manual_seed(3), min_t=0.2)
    assert torch.equal(a, b) and torch.equal(ta, tb)
    assert float(ta.min()) >= 0.2
    # each row's masked share follows its own t (81 Bernoulli draws: within 0.25 of t)
    share = a.float().mean(1, keepdim=True)
    assert float((share - ta).abs().max()) < 0.25
