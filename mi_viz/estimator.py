"""The MI head: predicts the whole pairwise MI matrix from one backbone pass.

Input: the frozen backbone's hidden states and logits from the same forward
pass, and the mask. Output: a symmetric, non-negative (L, L) matrix, exactly
zero on the diagonal and on unmasked positions. Design (docs/mi.md):

    x_i  = [hidden_i, softmax(logits_i), H_i]                     per position
    z_i  = MLP(x_i)                                  (r)          per position
    g_ij = w2 . gelu(A (z_i * z_j) + c_i + c_j + u (p_i . p_j) [+ W (p_i * p_j)] + b)   c_i = C z_i
    MI_ij = sigmoid(g_ij) * min(H_i, H_j) * mask_ij

p_i . p_j is the overlap of the two marginals (the chance that independent draws
collide): in a constraint problem two positions can only be dependent where
their candidate values overlap, so it is a cheap, symmetric hint. The product
z_i * z_j, the sum c_i + c_j and the overlap make g symmetric by construction;
the sigmoid times min(H_i, H_j) builds in that MI is non-negative and bounded
by either marginal's entropy (so a confident position never looks dependent).
Splitting the first pair layer into a product term and a per-position term
keeps the L^2 work to one (r x d_pair) product per pair: a few percent of a
backbone pass.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from .checkpoints import load_module, save_module

HEAD_KIND = "mi-head"


@dataclass
class HeadConfig:
    d_in: int = 256  # backbone hidden width
    n_values: int = 9  # candidate values V (the logits' width)
    d_hidden: int = 256  # per-position MLP width
    rank: int = 64  # per-position embedding z_i
    d_pair: int = 32  # pair MLP width
    pair_values: bool = False  # also feed p_i * p_j (per value, V wide) to the pair MLP

    def to_dict(self):
        return asdict(self)


class MIHead(nn.Module):
    def __init__(self, config: HeadConfig):
        super().__init__()
        self.config = c = config
        self.ln = nn.LayerNorm(c.d_in)
        self.inp = nn.Linear(c.d_in + c.n_values + 1, c.d_hidden)
        self.emb = nn.Linear(c.d_hidden, c.rank)
        self.pair_prod = nn.Linear(c.rank, c.d_pair)
        self.pair_single = nn.Linear(c.rank, c.d_pair, bias=False)
        self.pair_overlap = nn.Parameter(torch.zeros(c.d_pair))
        # per-value overlap p_i(v) p_j(v): which shared candidates matter, not just how many
        self.pair_values = nn.Linear(c.n_values, c.d_pair, bias=False) if c.pair_values else None
        self.out = nn.Linear(c.d_pair, 1)

    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def forward(self, hidden, logits, masked):
        """hidden (B, L, D), logits (B, L, V), masked (B, L) bool -> MI (B, L, L)."""
        logp = torch.log_softmax(logits.float(), -1)  # (B, L, V)
        p = logp.exp()
        H = (-(p * logp).sum(-1)).clamp_min(0) * masked  # (B, L)
        x = torch.cat([self.ln(hidden.float()), p, H[..., None]], -1)  # (B, L, D+V+1)
        z = self.emb(F.gelu(self.inp(x)))  # (B, L, r)
        c = self.pair_single(z)  # (B, L, P)
        a = self.pair_prod.weight  # (P, r)
        pair = torch.einsum("bir,bjr,pr->bijp", z, z, a)  # (B, L, L, P)
        overlap = torch.einsum("biv,bjv->bij", p, p)  # (B, L, L)
        pair = pair + self.pair_prod.bias + c[:, :, None] + c[:, None, :] + overlap[..., None] * self.pair_overlap
        if self.pair_values is not None:
            pv = self.pair_values.weight  # (P, V)
            pair = pair + torch.einsum("biv,bjv,pv->bijp", p, p, pv)
        g = self.out(F.gelu(pair)).squeeze(-1)  # (B, L, L)
        bound = torch.minimum(H[:, :, None], H[:, None, :])  # (B, L, L)
        L = masked.shape[1]
        mask2 = masked[:, :, None] & masked[:, None, :] & ~torch.eye(L, dtype=torch.bool, device=masked.device)
        mi = torch.sigmoid(g) * bound * mask2
        return 0.5 * (mi + mi.transpose(1, 2))  # exact symmetry despite float rounding


def frobenius_loss(pred, target, masked):
    """Squared Frobenius distance over masked pairs, averaged over states."""
    L = masked.shape[1]
    mask2 = masked[:, :, None] & masked[:, None, :] & ~torch.eye(L, dtype=torch.bool, device=masked.device)
    return (((pred - target) ** 2) * mask2).sum() / masked.shape[0]


def save_head(path, head: MIHead, step: int = 0, metrics: dict | None = None, extra: dict | None = None):
    return save_module(path, head, HEAD_KIND, step, metrics, extra)


def load_head(path, device: str = "cpu") -> tuple[MIHead, dict]:
    return load_module(path, HEAD_KIND, HeadConfig, MIHead, device)
