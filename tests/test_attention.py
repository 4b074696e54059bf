"""The attention a backbone exposes (core.attention) is the attention its pass computed: the hooks
recompute the last block's weights from that block's own inputs, which must equal an explicit
softmax(QK^T / sqrt(d)) taken inside the fused call (patched here to form the weights)."""

from __future__ import annotations

import esm.layers.attention as esm_attention
import pytest
import torch
import torch.nn.functional as F

from mi_viz.core.attention import NoAttention, Site, attention_shape, dependency_map, recording, sinks
from mi_viz.core.errors import InputError
from mi_viz.domains.family.backbone import FamilyBackbone, FamilyMDMConfig
from mi_viz.domains.protein.backbone import ESMCBackbone, ProteinMDMConfig
from mi_viz.domains.sudoku.mdm import MDMConfig, SudokuMDM


def explicit_last_attention(model, tokens, monkeypatch) -> torch.Tensor:
    """The last fused attention call's weights, (B, T, T) averaged over heads."""
    return explicit_attentions(model, tokens, monkeypatch)[-1].mean(1)


@pytest.mark.parametrize("kind", ["sudoku", "protein", "family"])
def test_recorded_attention_is_the_pass_attention(kind, monkeypatch):
    torch.manual_seed(0)
    if kind == "sudoku":
        model = SudokuMDM(MDMConfig(n_layers=2, n_heads=2, d_model=16)).eval()
        x = torch.randint(0, 9, (2, 81))
    elif kind == "protein":
        model = ESMCBackbone(ProteinMDMConfig(d_model=32, n_heads=2, n_layers=2)).eval()
        x = model.value_tokens[torch.randint(0, 20, (2, 30))]
    else:
        model = FamilyBackbone(FamilyMDMConfig(d_model=32, n_heads=2, n_layers=2, width=30)).eval()
        x = model.value_tokens[torch.randint(0, 21, (2, 30))]
    x[:, ::4] = model.mask_id
    with torch.inference_mode(), recording(model) as box:
        model.forward_tokens(x)
    want = explicit_last_attention(model, x, monkeypatch)
    if kind != "sudoku":
        want = want[:, 1:-1, 1:-1]  # BOS and EOS are not residues
    assert len(box) == 1 and box[0].shape == (2, x.shape[1], x.shape[1])
    assert torch.allclose(box[0], want, atol=1e-6)


def test_sinks_and_the_symmetric_map():
    A = torch.full((1, 5, 5), 0.05)
    A[0, :, 2] = 0.8  # every query leans on 2
    A[0, 1, 3] = 0.3
    assert sinks(A, 2.0).tolist() == [[False, False, True, False, False]]  # 0.8 > 2 / 5; 0.1 is not
    D = dependency_map(A, 2.0)[0]
    # the sink's incoming 0.8 are gone; what 2 itself attends to (0.05) still links it, either way
    assert torch.allclose(D[2], torch.tensor([0.05, 0.05, 0.0, 0.05, 0.05])) and torch.equal(D[:, 2], D[2])
    assert D[1, 3] == D[3, 1] == 0.3 and torch.diagonal(D).abs().sum() == 0


def test_a_model_without_attention_is_named():
    with pytest.raises(NoAttention, match="Linear does not expose its attention"):
        with recording(torch.nn.Linear(2, 2)):
            pass


def explicit_attentions(model, tokens, monkeypatch) -> list[torch.Tensor]:
    """Every fused attention call's weights in block order, (B, H, T, T) each (one head apiece)."""
    seen = []
    fused = F.scaled_dot_product_attention

    def sdpa(q, k, v, attn_mask=None, **kw):
        s = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
        if attn_mask is not None:
            s = s.masked_fill(~attn_mask, float("-inf"))
        seen.append(torch.softmax(s, -1))
        return fused(q, k, v, attn_mask, **kw)

    monkeypatch.setattr(F, "scaled_dot_product_attention", sdpa)
    monkeypatch.setattr(esm_attention.F, "scaled_dot_product_attention", sdpa)
    with torch.inference_mode():
        model.forward_tokens(tokens)
    return seen


@pytest.mark.parametrize("kind", ["sudoku", "protein"])
@pytest.mark.parametrize("site", [Site(0, None), Site(0, 1), Site(-1, 0), Site(1, None)])
def test_any_block_and_head_is_the_pass_attention(kind, site, monkeypatch):
    """Issue 59: the viewer's choice of block and head reads that block's that head (or its heads'
    mean), equal to the fused call's own weights; a block or head the model lacks is named."""
    torch.manual_seed(1)
    if kind == "sudoku":
        model = SudokuMDM(MDMConfig(n_layers=2, n_heads=2, d_model=16)).eval()
        x = torch.randint(0, 9, (2, 81))
    else:
        model = ESMCBackbone(ProteinMDMConfig(d_model=32, n_heads=2, n_layers=2)).eval()
        x = model.value_tokens[torch.randint(0, 20, (2, 30))]
    x[:, ::3] = model.mask_id
    assert attention_shape(model) == (2, 2)
    with torch.inference_mode(), recording(model, site) as box:
        model.forward_tokens(x)
    per_head = explicit_attentions(model, x, monkeypatch)[site.layer]  # (B, H, T, T)
    want = per_head.mean(1) if site.head is None else per_head[:, site.head]
    if kind != "sudoku":
        want = want[:, 1:-1, 1:-1]
    assert torch.allclose(box[0], want, atol=1e-6)
    for bad, match in ((Site(2, None), "block 3 does not exist"), (Site(0, 2), "head 3 does not exist")):
        with pytest.raises(InputError, match=match):
            with recording(model, bad):
                pass
