"""The MI head: predicts the whole pairwise MI matrix from one backbone pass.

Input: the frozen backbone's hidden states and logits from the same forward
pass, and the mask. Output: a symmetric, non-negative (L, L) matrix, exactly
zero on the diagonal and on unmasked positions. Design (docs/mi.md):

    x_i  = [hidden_i, (hidden of the hidden_layers)_i, softmax(logits_i), H_i]   per position
    z_i  = MLP(x_i)                                  (r)          per position
    z    = mix blocks(z)   transformer blocks over the masked positions (mix_layers)
    g_ij = w2 . gelu(A (z_i * z_j) + c_i + c_j + u (p_i . p_j) + b)        c_i = C z_i
    MI_ij = sigmoid(g_ij) * min(H_i, H_j) * mask_ij
    [MI_ij += sigmoid(g'_ij) * (max(H_i, H_j) - min(H_i, H_j)) / 2   the truth's own bound (excess)]

p_i . p_j is the overlap of the two marginals (the chance that independent draws
collide): in a constraint problem two positions can only be dependent where
their candidate values overlap, so it is a cheap, symmetric hint. The product
z_i * z_j, the sum c_i + c_j and the overlap make g symmetric by construction;
the sigmoid times min(H_i, H_j) builds in that MI is non-negative and bounded
by either marginal's entropy (so a confident position never looks dependent): the
bound of a consistent joint; the ground truth of an inconsistent model can pass it
(excess). Splitting the first pair layer into a product term and a per-position term
keeps the L^2 work to one (r+V x d_pair) product per pair.

The probe options that never shipped (attention maps, two-hop paths, direct-link MI,
a mixture of products, per-value overlaps, a global context) were removed from this
class; they live at git revision 3082bdc, with their scores in experiments/ (README there).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

from .checkpoints import CheckpointError, load_module, save_module
from .mi import marginals
from .protocol import MaskedModel, ModelOutput

HEAD_KIND = "mi-head"


TARGETS = ("mi", "tv")  # the maps a head predicts: the MI, or DEMASK's expected TV influence


@dataclass
class HeadConfig:
    d_in: int = 256  # backbone hidden width
    n_values: int = 9  # candidate values V (the logits' width)
    d_hidden: int = 256  # per-position MLP width
    rank: int = 64  # per-position embedding z_i
    d_pair: int = 32  # pair MLP width
    hidden_layers: tuple[int, ...] = ()  # backbone blocks read besides the final hidden states
    mix_layers: int = 0  # transformer blocks over the masked positions' embeddings z (0: off)
    mix_heads: int = 4  # attention heads of those blocks
    excess: bool = False  # add a second term up to (H_i + H_j)/2: the bound of the symmetrised truth (see forward)
    target: str = "mi"  # the map it predicts: "mi" (nats) or "tv" (DEMASK's expected TV influence, in [0, 1])

    def __post_init__(self) -> None:
        self.hidden_layers = tuple(int(i) for i in self.hidden_layers)  # JSON gives a list
        if self.target not in TARGETS:
            raise ValueError(f"head target {self.target!r}: choose {', '.join(TARGETS)}")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["hidden_layers"] = list(self.hidden_layers)
        return d


class MixBlock(nn.Module):
    """A pre-norm transformer block over the masked positions' embeddings, padding slots masked.

    Why: most of the held-out error sits on pairs in no common unit (results/sudoku/
    mi_report_pairs.npz), whose dependence runs through chains of
    other uncertain cells. The backbone computed marginals, not which cells share one
    remaining either/or; letting the uncertain cells exchange their embeddings gives
    z_i a chance to say which such cluster it belongs to.
    """

    def __init__(self, d: int, n_heads: int):
        super().__init__()
        if d % n_heads:
            raise ValueError(f"mix block width {d} is not divisible by its {n_heads} heads")
        self.n_heads = n_heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, z: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        """z (B, M, d), valid (B, M) bool, or None when every slot is a masked cell -> (B, M, d)."""
        B, M, d = z.shape
        h = self.n_heads
        q, k, v = self.qkv(self.ln1(z)).view(B, M, 3, h, d // h).permute(2, 0, 3, 1, 4)  # 3 x (B, h, M, d/h)
        keys = None
        if valid is not None:
            keys = (valid | ~valid.any(1, keepdim=True))[:, None, None, :]  # nothing masked: any keys, no NaN row
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=keys)  # (B, h, M, d/h)
        z = z + self.proj(y.transpose(1, 2).reshape(B, M, d))
        return z + self.ff(self.ln2(z))


class MIHead(nn.Module):
    def __init__(self, config: HeadConfig):
        super().__init__()
        self.config = c = config
        self.ln = nn.LayerNorm(c.d_in)
        # A middle block's residual stream carries what the last one has already folded
        # into the marginal (which cells constrain which): docs/mi.md, experiments/.
        self.ln_layers = nn.ModuleList([nn.LayerNorm(c.d_in) for _ in c.hidden_layers])
        d_x = c.d_in * (1 + len(c.hidden_layers))
        self.inp = nn.Linear(d_x + c.n_values + 1, c.d_hidden)
        self.emb = nn.Linear(c.d_hidden, c.rank)
        self.pair_prod = nn.Linear(c.rank, c.d_pair)
        self.pair_single = nn.Linear(c.rank, c.d_pair, bias=False)
        self.pair_overlap = nn.Parameter(torch.zeros(c.d_pair))
        self.mix = nn.ModuleList([MixBlock(c.rank, c.mix_heads) for _ in range(c.mix_layers)])
        self.out = nn.Linear(c.d_pair, 2 if c.excess else 1)
        # Without autograd (decoding, the app, the reports) the read runs traced (_traced): the same
        # maps bit for bit, faster at batch 1. False: eager, as in training (benchmarks time both).
        self.trace = True

    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def pair_preactivation(self, z: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
        """The pair MLP's first layer for every (i, j): one linear map of the pair products.

        pre_ijp = sum_r A_pr z_ir z_jr + u_p sum_v p_iv p_jv + b_p + c_ip + c_jp

        is a linear layer [A, u] applied to the elementwise product of [z_i, p_i] and
        [z_j, p_j], plus the per-position terms c added as two broadcasts. Pairs in rows,
        channels last: one (B M M x r+V) @ (r+V x P) matmul, then the output layer is
        another plain linear: faster than one bmm per channel block at batch 1 and at 64 (measured
        once, experiments/README.md); at batch 1 the head's cost is mostly the number of small ops
        (benchmarks/latency.py). z (B, M, r), p (B, M, V) -> (B, M, M, P).
        """
        A = self.pair_prod.weight  # (P, r)
        w_val = self.pair_overlap[:, None].expand(-1, p.shape[-1])  # (P, V): u_p for every value
        zp = torch.cat([z, p], -1)  # (B, M, r+V)
        pre = F.linear(
            zp[:, :, None, :] * zp[:, None, :, :], torch.cat([A, w_val], 1), self.pair_prod.bias
        )  # (B, M, M, P)
        c = self.pair_single(z)  # (B, M, P)
        pre += c[:, :, None, :]  # c_ip on row i
        pre += c[:, None, :, :]  # c_jp on column j
        return pre

    @property
    def hidden_layers(self) -> tuple[int, ...]:
        return self.config.hidden_layers

    def backbone_pass(self, model: MaskedModel, tokens: torch.Tensor) -> ModelOutput:
        """The backbone's forward pass with everything this head reads: a ModelOutput."""
        return model.forward_tokens(tokens, self.hidden_layers)

    def read(
        self, out: ModelOutput, masked: Tensor, logp: Tensor | None = None, entropy: Tensor | None = None
    ) -> Tensor:
        """MI (B, L, L) from a backbone ModelOutput of the same pass (head.backbone_pass).
        logp (B, L, V) and entropy (B, L): that pass's log-marginals and masked entropies
        when the caller has them already (every sampler does): not computed twice."""
        return self(out.hidden, out.logits, masked, out.layers, logp, entropy)

    def forward(
        self,
        hidden: torch.Tensor,
        logits: torch.Tensor,
        masked: torch.Tensor,
        layers: dict | None = None,
        logp: torch.Tensor | None = None,
        entropy: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """hidden (B, L, D), logits (B, L, V), masked (B, L) bool, layers {block: (B, L, D)};
        optional logp (B, L, V) and entropy (B, L): mi.marginals(logits, masked), computed here
        when not given -> MI (B, L, L)."""
        for i in self.config.hidden_layers:
            if not layers or i not in layers:
                raise ValueError(
                    f"this MI head reads the backbone's block {i}: run the pass with "
                    f"head.backbone_pass(model, tokens) and read its output"
                )
        if logp is None or entropy is None:  # row by row, as the samplers compute them (tested bit for bit)
            logp, entropy = marginals(logits, masked)  # (B, L, V), (B, L)
        # Everything touching an unmasked position is zero by definition, so the head runs
        # on the masked positions only, gathered to the front (M = most masked in the batch;
        # mid-decode M ~ L/3: a third of the per-position work, a ninth of the pair work).
        B = masked.shape[0]
        order = masked[0].nonzero()[:, 0][None] if B == 1 else None  # (1, M) ascending, as the sort below gives
        if order is not None and order.shape[1]:
            # Batch 1 (a step in the app, the report): every slot a masked cell, so the padding
            # masks are identities, and skipping them (and the sort) is a visible share of the read.
            valid, full = torch.ones_like(order, dtype=torch.bool), True  # (1, M)
        else:
            M = max(int(masked.sum(1).max()), 1)
            order = torch.argsort((~masked).to(torch.int8), dim=1, stable=True)[:, :M]  # (B, M): masked first
            valid = torch.gather(masked, 1, order)  # (B, M); False on padding slots
            full = bool(valid.all())
        tensors = (order, valid, hidden, logp, entropy, *((layers or {})[i] for i in self.config.hidden_layers))
        if torch.is_grad_enabled() or not self.trace:  # training: eager, autograd sees every op
            return self._dense(B == 1, full, *tensors)
        return self._traced(B == 1, full, tensors)(*tensors)

    def _traced(self, one: bool, full: bool, tensors: tuple[torch.Tensor, ...]) -> Callable[..., torch.Tensor]:
        """_dense for (one, full), traced once per device into TorchScript: the same ops, bit for bit
        (tested), without Python's dispatch between them. Why: at batch 1 the head is dozens of small
        ops on (M, 64)-sized tensors, and their overhead, not their arithmetic, is its cost (the
        eager and traced reads of the shipped head side by side: results/latency.txt).
        Shapes (B, M, L) stay symbolic in the trace; the two flags are its only constants. The trace
        shares this module's parameters, so a later load_state_dict or .to() is seen (cache keyed
        by device)."""
        key = (one, full, str(tensors[2].device))
        cache = self.__dict__.setdefault("_traces", {})  # not a submodule: kept out of state_dict
        if key not in cache:
            with torch.inference_mode(False), torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # TracerWarnings about the two constant flags
                example = tuple(t.clone() for t in tensors)  # plain tensors: inference ones cannot be traced
                traced = torch.jit.trace(_DenseRead(self, one, full), example, check_trace=False)
                for _ in range(2):  # TorchScript's executor optimises the graph over its first two runs
                    traced(*example)
                cache[key] = traced
        return cache[key]

    def _dense(
        self,
        one: bool,
        full: bool,
        order: Tensor,
        valid: Tensor,
        hidden: Tensor,
        logp: Tensor,
        entropy: Tensor,
        *layer_maps: Tensor,
    ) -> Tensor:
        """The head past the gather. order (B, M) masked positions first, valid (B, M), hidden (B, L, D),
        logp (B, L, V), entropy (B, L), layer_maps: the hidden_layers' (B, L, D) -> MI (B, L, L).
        one: batch 1; full: every slot of order a masked cell."""
        B, M = order.shape
        L = hidden.shape[1]
        flat = (order[:, :, None] * L + order[:, None, :]).reshape(B, M * M)  # (B, M*M): pair (i, j) at i*L + j

        # (B, L, C) -> (B, M, C); at batch 1 index_select: the same rows, cheaper than gather
        def pick(t: Tensor) -> Tensor:
            if one:
                return t.index_select(1, order[0])
            return torch.gather(t, 1, order[..., None].expand(-1, -1, t.shape[-1]))

        logp = pick(logp.float())  # (B, M, V)
        p = logp.exp()
        H = torch.gather(entropy.float(), 1, order)  # (B, M)
        if not full:
            H = H * valid  # (B, M)
        parts = [self.ln(pick(hidden.float()))]
        parts += [ln(pick(t.float())) for ln, t in zip(self.ln_layers, layer_maps)]
        hn = torch.cat(parts, -1)  # (B, M, D_x)
        x = torch.cat([hn, p, H[..., None]], -1)  # (B, M, D_x+V+1)
        z = self.emb(F.gelu(self.inp(x)))  # (B, M, r)
        for blk in self.mix:
            z = blk(z, None if full else valid)  # (B, M, r)
        pre = self.pair_preactivation(z, p)  # (B, M, M, P)
        g = self.out(F.gelu(pre))  # (B, M, M, n_out): 1 unit, or 2 with excess
        if self.config.target == "tv":
            # DEMASK's expected TV influence: by Pinsker, E_v TV <= sqrt(I / 2) <= sqrt(H / 2), and
            # TV <= 1: the same bound shape as the MI's, in TV's units
            H = torch.clamp(torch.sqrt(H / 2), max=1.0)  # (B, M)
        lo = torch.minimum(H[:, :, None], H[:, None, :])  # (B, M, M)
        mi = torch.sigmoid(g[..., 0]) * lo  # (B, M, M)
        if self.config.excess:
            # The truth is the mean of I(i->j) <= H_i and I(j->i) <= H_j: it is bounded by
            # (H_i + H_j)/2, not by min(H_i, H_j). An inconsistent model can make a confident
            # cell look dependent in one direction (results/sudoku/truth_bounds.json).
            hi = torch.maximum(H[:, :, None], H[:, None, :])  # (B, M, M)
            mi = mi + torch.sigmoid(g[..., 1]) * (hi - lo) / 2
        if not full:
            mi = mi * (valid[:, :, None] & valid[:, None, :])  # (B, M, M)
        mi.diagonal(dim1=1, dim2=2).zero_()
        mi = 0.5 * (mi + mi.transpose(1, 2))  # exact symmetry despite float rounding
        # scatter back to (B, L, L); padding slots point at unmasked cells and carry zeros
        out = mi.new_zeros(B, L * L).scatter_(1, flat, mi.reshape(B, M * M))
        return out.view(B, L, L)


class _DenseRead(nn.Module):
    """MIHead._dense with its two flags fixed: what MIHead._traced hands to torch.jit.trace."""

    def __init__(self, head: MIHead, one: bool, full: bool) -> None:
        super().__init__()
        self.head, self.one, self.full = head, one, full

    def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
        return self.head._dense(self.one, self.full, *tensors)


def frobenius_loss(pred: torch.Tensor, target: torch.Tensor, masked: torch.Tensor) -> torch.Tensor:
    """Squared Frobenius distance over masked pairs, averaged over states."""
    L = masked.shape[1]
    mask2 = masked[:, :, None] & masked[:, None, :] & ~torch.eye(L, dtype=torch.bool, device=masked.device)
    return (((pred - target) ** 2) * mask2).sum() / masked.shape[0]


def save_head(
    path: str | Path, head: MIHead, step: int = 0, metrics: dict | None = None, extra: dict | None = None
) -> Path:
    return save_module(path, head, HEAD_KIND, step, metrics, extra)


def check_head_fits(head: MIHead, model: MaskedModel) -> None:
    """A head trained on another backbone would run and return nonsense: refuse it by name.
    Reads only the masked-model protocol (d_model, n_layers, value_tokens)."""
    c = head.config
    name = "TV (DEMASK) head" if c.target == "tv" else "MI head"
    width = getattr(model, "d_model", None)
    if width is not None and c.d_in != width:
        raise CheckpointError(
            f"the {name} reads {c.d_in}-wide hidden states but the backbone's are {width} wide "
            f"(the head was trained on another backbone)"
        )
    n_values = len(model.value_tokens)
    if c.n_values != n_values:
        raise CheckpointError(f"the {name} reads {c.n_values} candidate values but the backbone has {n_values}")
    n_blocks = getattr(model, "n_layers", 0)
    bad = [i for i in c.hidden_layers if not 0 <= i < n_blocks]
    if bad:
        raise CheckpointError(f"the {name} reads backbone block(s) {bad} but the backbone has blocks 0..{n_blocks - 1}")


def load_head(path: str | Path, device: str = "cpu") -> tuple[MIHead, dict]:
    return load_module(path, HEAD_KIND, HeadConfig, MIHead, device)
