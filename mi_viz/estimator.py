"""The MI head: predicts the whole pairwise MI matrix from one backbone pass.

Input: the frozen backbone's hidden states and logits from the same forward
pass, and the mask. Output: a symmetric, non-negative (L, L) matrix, exactly
zero on the diagonal and on unmasked positions. Design (docs/mi.md):

    x_i  = [hidden_i, softmax(logits_i), H_i]                     per position
    z_i  = MLP(x_i)                                  (r)          per position
    [z   = mix blocks(z)   transformer blocks over the masked positions (mix_layers; 2 in the shipped head)]
    g_ij = w2 . gelu(A (z_i * z_j) + c_i + c_j + u (p_i . p_j) [+ W (p_i * p_j)] + b)   c_i = C z_i
    MI_ij = sigmoid(g_ij) * min(H_i, H_j) * mask_ij
    [g_ij += sum_k W_k (L/2) (A^k_ij + A^k_ji)   over the attention maps A^k of attn_layers; off when shipped]
    [  ... and the same maps chained once through the masked cells (attn_two_hop; off)]
    [MI_ij += sigmoid(g'_ij) * (max(H_i, H_j) - min(H_i, H_j)) / 2   the truth's own bound (excess; on in the shipped head)]
    [MI_ij = MI of a mixture of K products, instead of the pair MLP (mixture; off)]
    [g_ij += W [I_excl(i, j), I_agree(i, j)]   the MI a direct link between i and j would give (link; off)]

p_i . p_j is the overlap of the two marginals (the chance that independent draws
collide): in a constraint problem two positions can only be dependent where
their candidate values overlap, so it is a cheap, symmetric hint. The product
z_i * z_j, the sum c_i + c_j and the overlap make g symmetric by construction;
the sigmoid times min(H_i, H_j) builds in that MI is non-negative and bounded
by either marginal's entropy (so a confident position never looks dependent): the
bound of a consistent joint; the ground truth of an inconsistent model can pass it
(excess).
Splitting the first pair layer into a product term and a per-position term
keeps the L^2 work to one (r+V x d_pair) product per pair: a few percent of a
backbone pass.
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from .checkpoints import CheckpointError, load_module, save_module

HEAD_KIND = "mi-head"
LINK_TILTS = (-8.0, 4.0)  # link_mi's tilts s: exclusion (x_i = v forbids x_j = v) and agreement


def link_mi(p: torch.Tensor, tilts) -> torch.Tensor:
    """I(x_i; x_j) under the joint p_i(v) q_s(w | v) for every ordered pair (i, j) and tilt s.

    q_s(w | v) = p_j(w) e^{s [w = v]} / Z_v,   Z_v = 1 + p_j(v) (e^s - 1):
    fixing x_i = v multiplies the odds of x_j = v by e^s (s << 0: j can (almost) no longer take
    i's value, a Sudoku unit; s > 0: it takes it more often, an even chain). Closed form,
    O(V) per pair (tested against the joint written out):
        I = sum_v p_i(v) [s q_s(v | v) - log Z_v] - sum_w m(w) log c_w,
        c_w = sum_v p_i(v) / Z_v + p_i(w) (e^s - 1) / Z_w,   m(w) = p_j(w) c_w,
    m being x_j's marginal under the joint. p (B, M, V), tilts (S,) -> (B, M, M, S), row i
    conditioning on column j's partner: I[b, i, j, k] = I_{s_k}(i -> j).
    """
    s = torch.as_tensor(tilts, dtype=p.dtype, device=p.device)[:, None]  # (S, 1)
    es = s.exp()  # (S, 1)
    es1 = es - 1
    pi = p[:, :, None, None, :]  # (B, M, 1, 1, V)
    pj = p[:, None, :, None, :]  # (B, 1, M, 1, V)
    Z = 1 + pj * es1  # (B, 1, M, S, V)
    per_j = s * pj * es / Z - Z.log()  # (B, 1, M, S, V): s q_s(v | v) - log Z_v, built once per j
    ratio = pi / Z  # (B, M, M, S, V)
    c = ratio.sum(-1, keepdim=True) + ratio * es1  # (B, M, M, S, V)
    first = (pi * per_j).sum(-1)  # (B, M, M, S)
    second = (pj * c * c.clamp_min(1e-30).log()).sum(-1)  # (B, M, M, S)
    return (first - second).clamp_min(0)


@dataclass
class HeadConfig:
    d_in: int = 256  # backbone hidden width
    n_values: int = 9  # candidate values V (the logits' width)
    d_hidden: int = 256  # per-position MLP width
    rank: int = 64  # per-position embedding z_i
    d_pair: int = 32  # pair MLP width
    pair_values: bool = False  # also feed p_i * p_j (per value, V wide) to the pair MLP
    global_context: int = 0  # width of a masked-mean-pooled state summary fed to every position (0: off)
    hidden_layers: tuple[int, ...] = ()  # backbone blocks read besides the final hidden states
    attn_layers: tuple[int, ...] = ()  # backbone blocks whose attention maps feed the pair term
    attn_two_hop: bool = False  # also feed (S S)_ij / m: paths i -> k -> j through the masked cells k
    n_heads: int = 0  # attention heads per block (needed when attn_layers is set)
    mix_layers: int = 0  # transformer blocks over the masked positions' embeddings z (0: off)
    mix_heads: int = 4  # attention heads of those blocks
    excess: bool = False  # add a second term up to (H_i + H_j)/2: the bound of the symmetrised truth (see forward)
    mixture: int = 0  # K > 0: MI of a mixture of K product distributions instead of the pair MLP (see mixture_mi)
    link: bool = False  # feed the pair MLP the MI a direct exclusion / agreement link would give (see link_mi)

    def __post_init__(self):
        self.hidden_layers = tuple(int(i) for i in self.hidden_layers)  # JSON gives a list
        self.attn_layers = tuple(int(i) for i in self.attn_layers)
        if self.attn_layers and self.n_heads <= 0:
            raise ValueError("attn_layers needs n_heads (the backbone's attention heads per block)")
        if self.attn_two_hop and not self.attn_layers:
            raise ValueError("attn_two_hop needs attn_layers (the maps it chains)")
        pair_options = [n for n, on in (("excess", self.excess), ("attn_layers", self.attn_layers),
                                        ("pair_values", self.pair_values), ("link", self.link)) if on]
        if self.mixture and pair_options:
            raise ValueError(f"mixture replaces the pair MLP, so {', '.join(pair_options)} would be ignored: "
                             f"use one or the other")

    def to_dict(self):
        d = asdict(self)
        d["hidden_layers"] = list(self.hidden_layers)
        d["attn_layers"] = list(self.attn_layers)
        return d


class MixBlock(nn.Module):
    """A pre-norm transformer block over the masked positions' embeddings, padding slots masked.

    Why: most of the held-out error sits on pairs in no common unit (70 % of the squared
    error, results/sudoku/mi_report_pairs.npz), whose dependence runs through chains of
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

    def forward(self, z, valid=None):
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
        # into the marginal (which cells constrain which): measured, +0.04 held-out Pearson.
        self.ln_layers = nn.ModuleList([nn.LayerNorm(c.d_in) for _ in c.hidden_layers])
        d_x = c.d_in * (1 + len(c.hidden_layers))
        # A state-level summary: whether two far-apart uncertain positions move together
        # (one global either/or left on a hard board) is a property of the whole state,
        # which a per-position embedding can only guess at.
        self.glob = nn.Linear(d_x + 1, c.global_context) if c.global_context else None
        self.inp = nn.Linear(d_x + c.n_values + 1 + c.global_context, c.d_hidden)
        self.emb = nn.Linear(c.d_hidden, c.rank)
        pair_mlp = not c.mixture  # a mixture head replaces the pair MLP: none of its weights
        self.pair_prod = nn.Linear(c.rank, c.d_pair) if pair_mlp else None
        self.pair_single = nn.Linear(c.rank, c.d_pair, bias=False) if pair_mlp else None
        self.pair_overlap = nn.Parameter(torch.zeros(c.d_pair)) if pair_mlp else None
        # per-value overlap p_i(v) p_j(v): which shared candidates matter, not just how many
        self.pair_values = nn.Linear(c.n_values, c.d_pair, bias=False) if c.pair_values else None
        # Attention maps: how much i reads j (and j reads i) inside the backbone, per block and
        # head, is a pairwise signal the model computed anyway (ESM's contact head is built on it).
        n_maps = len(c.attn_layers) * c.n_heads * (2 if c.attn_two_hop else 1)
        self.pair_attn = nn.Linear(n_maps, c.d_pair, bias=False) if c.attn_layers else None
        # The MI of a direct link is a fixed, very non-linear function of the two marginals
        # (two 50/50 cells over the same pair of values: ln 2; over values sharing one: 0.22;
        # disjoint: 0). Computed exactly, the pair MLP only has to say whether i and j are linked.
        self.pair_link = nn.Linear(len(LINK_TILTS), c.d_pair, bias=False) if c.link else None
        self.mix = nn.ModuleList([MixBlock(c.rank, c.mix_heads) for _ in range(c.mix_layers)])
        self.out = nn.Linear(c.d_pair, 2 if c.excess else 1) if pair_mlp else None
        # mixture mode: each position tilts its marginal once per component (K x V logits from z_i)
        self.tilt = nn.Linear(c.rank, c.mixture * c.n_values) if c.mixture else None
        # Without autograd (decoding, the app, the reports) the read runs traced (_traced): the same
        # maps bit for bit, faster at batch 1. False: eager, as in training (benchmarks time both).
        self.trace = True

    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def pair_preactivation(self, z, p):
        """The pair MLP's first layer for every (i, j): one linear map of the pair products.

        pre_ijp = sum_r A_pr z_ir z_jr + sum_v (u_p + W_pv) p_iv p_jv + b_p + c_ip + c_jp

        is a linear layer [A, u + W] applied to the elementwise product of [z_i, p_i] and
        [z_j, p_j], plus the per-position terms c added as two broadcasts. Pairs in rows,
        channels last: one (B M M x r+V) @ (r+V x P) matmul, then the output layer is
        another plain linear. Measured on 2 cores against one bmm per channel block
        ((B, P, M, r+V) @ (B, r+V, M)): 0.21 vs 0.34 ms at batch 1 (M = 29 masked cells),
        16 vs 27 ms at batch 64 (M = 40); the head's cost at batch 1 is mostly the
        number of small ops (benchmarks/latency.py). z (B, M, r), p (B, M, V) -> (B, M, M, P).
        """
        A = self.pair_prod.weight  # (P, r)
        w_val = self.pair_overlap[:, None].expand(-1, p.shape[-1])  # (P, V): u_p for every value
        if self.pair_values is not None:
            w_val = w_val + self.pair_values.weight  # (P, V)
        zp = torch.cat([z, p], -1)  # (B, M, r+V)
        pre = F.linear(zp[:, :, None, :] * zp[:, None, :, :], torch.cat([A, w_val], 1), self.pair_prod.bias)  # (B, M, M, P)
        c = self.pair_single(z)  # (B, M, P)
        pre += c[:, :, None, :]  # c_ip on row i
        pre += c[:, None, :, :]  # c_jp on column j
        return pre

    def mixture_mi(self, z, logp):
        """MI of every pair under a uniform mixture of K product distributions.

        q_ik = softmax(logp_i + tilt_ik)      position i's value distribution in component k
        J_ij(a, b) = (1/K) sum_k q_ik(a) q_jk(b)     a proper joint of (x_i, x_j)
        MI_ij = H(m_i) + H(m_j) - H(J_ij),    m_i = (1/K) sum_k q_ik, both marginals of J_ij

        Why: on a hard board the model's uncertainty is a few global either/ors (results/
        sudoku/mi_report_pairs.npz: most squared error sits on pairs in no common unit).
        A latent "which hypothesis" shared by all positions makes far-apart cells dependent
        exactly when both move with it, and the MI of a real joint is non-negative, symmetric
        and bounded by both entropies by construction, with the right shape in between
        (two 50/50 cells locked together: ln 2; a 90/10 cell with a 50/50 one: H(0.9)).
        z (B, M, r), logp (B, M, V) -> (B, M, M).
        """
        B, M, _ = z.shape
        K, V = self.config.mixture, logp.shape[-1]
        q = torch.softmax(logp[:, :, None, :] + self.tilt(z).view(B, M, K, V), -1)  # (B, M, K, V)
        m = q.mean(2)  # (B, M, V)
        Hm = -(m * m.clamp_min(1e-30).log()).sum(-1)  # (B, M); clamped: xlogy's gradient is nan at 0
        qt = q.transpose(2, 3).reshape(B, M * V, K)  # (B, M*V, K)
        J = (qt @ qt.transpose(1, 2) / K).view(B, M, V, M, V)  # (B, M, V, M, V)
        HJ = -(J * J.clamp_min(1e-30).log()).sum((2, 4))  # (B, M, M)
        return (Hm[:, :, None] + Hm[:, None, :] - HJ).clamp_min(0)  # (B, M, M)

    @property
    def hidden_layers(self) -> tuple[int, ...]:
        return self.config.hidden_layers

    @property
    def attn_layers(self) -> tuple[int, ...]:
        return self.config.attn_layers

    def backbone_pass(self, model, tokens):
        """The backbone's forward pass with everything this head reads: a ModelOutput."""
        return model.forward_tokens(tokens, self.hidden_layers, self.attn_layers)

    def read(self, out, masked, logp=None, entropy=None):
        """MI (B, L, L) from a backbone ModelOutput of the same pass (head.backbone_pass).
        logp (B, L, V) and entropy (B, L): that pass's log-marginals and masked entropies
        when the caller has them already (every sampler does): not computed twice."""
        return self(out.hidden, out.logits, masked, out.layers, out.attn, logp, entropy)

    def forward(self, hidden, logits, masked, layers: dict | None = None, attn: dict | None = None,
                logp: torch.Tensor | None = None, entropy: torch.Tensor | None = None):
        """hidden (B, L, D), logits (B, L, V), masked (B, L) bool, layers {block: (B, L, D)},
        attn {block: (B, H, L, L)}; optional logp (B, L, V) = log_softmax(logits) and
        entropy (B, L) = -(p logp).sum(-1).clamp_min(0) * masked -> MI (B, L, L)."""
        for what, need, got in (("block", self.config.hidden_layers, layers),
                                ("attention map of block", self.config.attn_layers, attn)):
            for i in need:
                if not got or i not in got:
                    raise ValueError(f"this MI head reads the backbone's {what} {i}: run the pass with "
                                     f"head.backbone_pass(model, tokens) and read its output")
        # row by row, as samplers.marginals computes them: picking rows afterwards is bit-identical (tested)
        if logp is None:
            logp = torch.log_softmax(logits.float(), -1)  # (B, L, V)
        if entropy is None:
            entropy = (-(logp.exp() * logp).sum(-1)).clamp_min(0) * masked  # (B, L)
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
        tensors = (order, valid, hidden, logp, entropy, *(layers[i] for i in self.config.hidden_layers),
                   *(attn[i] for i in self.config.attn_layers))
        if torch.is_grad_enabled() or not self.trace:  # training: eager, autograd sees every op
            return self._dense(B == 1, full, *tensors)
        return self._traced(B == 1, full, tensors)(*tensors)

    def _traced(self, one: bool, full: bool, tensors):
        """_dense for (one, full), traced once per device into TorchScript: the same ops, bit for bit
        (tested), without Python's dispatch between them. Why: at batch 1 the head is dozens of small
        ops on (M, 64)-sized tensors, and their overhead, not their arithmetic, is its cost (the
        shipped head, 2 mix blocks, on 2 cores: 13.0-13.5 % of a pass eager, 8.9-9.6 % traced;
        results/latency.txt, results/sudoku/head_cost_7k.txt).
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
                for _ in range(2):  # TorchScript's executor optimises the graph over its first two runs (~10 ms)
                    traced(*example)
                cache[key] = traced
        return cache[key]

    def _dense(self, one: bool, full: bool, order, valid, hidden, logp, entropy, *maps):
        """The head past the gather. order (B, M) masked positions first, valid (B, M), hidden (B, L, D),
        logp (B, L, V), entropy (B, L), maps: the hidden_layers' (B, L, D), then the attn_layers'
        (B, H, L, L) -> MI (B, L, L). one: batch 1; full: every slot of order a masked cell."""
        B, M = order.shape
        L = hidden.shape[1]
        flat = (order[:, :, None] * L + order[:, None, :]).reshape(B, M * M)  # (B, M*M): pair (i, j) at i*L + j

        def pick(t):  # (B, L, C) -> (B, M, C); at batch 1 index_select: the same rows, cheaper than gather
            if one:
                return t.index_select(1, order[0])
            return torch.gather(t, 1, order[..., None].expand(-1, -1, t.shape[-1]))

        n_layers = len(self.config.hidden_layers)
        layer_maps, attn_maps = maps[:n_layers], maps[n_layers:]
        logp = pick(logp.float())  # (B, M, V)
        p = logp.exp()
        H = torch.gather(entropy.float(), 1, order)  # (B, M)
        if not full:
            H = H * valid  # (B, M)
        parts = [self.ln(pick(hidden.float()))]
        parts += [ln(pick(t.float())) for ln, t in zip(self.ln_layers, layer_maps)]
        hn = torch.cat(parts, -1)  # (B, M, D_x)
        x = torch.cat([hn, p, H[..., None]], -1)  # (B, M, D_x+V+1)
        if self.glob is not None:
            w = valid.float()[..., None]  # (B, M, 1)
            s = (self.glob(torch.cat([hn, H[..., None]], -1)) * w).sum(1) / w.sum(1).clamp_min(1)  # (B, G)
            x = torch.cat([x, F.gelu(s)[:, None].expand(-1, M, -1)], -1)  # (B, M, D_x+V+1+G)
        z = self.emb(F.gelu(self.inp(x)))  # (B, M, r)
        for blk in self.mix:
            z = blk(z, None if full else valid)  # (B, M, r)
        if self.tilt is not None:
            mi = self.mixture_mi(z, logp) * (valid[:, :, None] & valid[:, None, :])  # (B, M, M)
        else:
            pre = self.pair_preactivation(z, p)  # (B, M, M, P)
            if self.pair_link is not None:
                I = link_mi(p, LINK_TILTS)  # (B, M, M, S): conditioning on row i
                pre = pre + self.pair_link(I + I.transpose(1, 2))  # (B, M, M, P), symmetric like the truth
            if self.pair_attn is not None:
                maps = [t.float() for t in attn_maps]
                S = maps[0] if len(maps) == 1 else torch.cat(maps, 1)  # (B, K, L, L), K = blocks x heads
                K = S.shape[1]
                # the masked pairs' entries in one gather, channels last (what pair_attn reads)
                S = S.flatten(2).transpose(1, 2).gather(1, flat[..., None].expand(B, M * M, K))  # (B, M*M, K)
                S = S.view(B, M, M, K)
                S = (S + S.transpose(1, 2)) * (L / 2)  # (B, M, M, K) symmetric; uniform attention -> 1
                if self.config.attn_two_hop:
                    # Two cells in no common unit depend through a chain of uncertain cells
                    # (i shares a row with k, k a column with j): 70 % of the head's squared error
                    # sits on such pairs. Paths through filled cells carry no dependence, so the
                    # intermediate k runs over the masked cells only (padding slots zeroed).
                    S = S.permute(0, 3, 1, 2) * (valid[:, None, :, None] & valid[:, None, None, :])  # (B, K, M, M)
                    m = valid.sum(1).clamp_min(1)[:, None, None, None]  # (B, 1, 1, 1)
                    S = torch.cat([S, S @ S / m], 1).permute(0, 2, 3, 1)  # (B, M, M, 2K); S S symmetric too
                pre = pre + self.pair_attn(S)  # (B, M, M, P)
            g = self.out(F.gelu(pre))  # (B, M, M, n_out): 1 unit, or 2 with excess
            lo = torch.minimum(H[:, :, None], H[:, None, :])  # (B, M, M)
            mi = torch.sigmoid(g[..., 0]) * lo  # (B, M, M)
            if self.config.excess:
                # The truth is the mean of I(i->j) <= H_i and I(j->i) <= H_j: it is bounded by
                # (H_i + H_j)/2, not by min(H_i, H_j). An inconsistent model can make a confident
                # cell look dependent in one direction: 6 % of the report's pairs lie above
                # the min and carry 24 % of the squared error of a head capped there.
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

    def __init__(self, head: MIHead, one: bool, full: bool):
        super().__init__()
        self.head, self.one, self.full = head, one, full

    def forward(self, *tensors):
        return self.head._dense(self.one, self.full, *tensors)


def frobenius_loss(pred, target, masked):
    """Squared Frobenius distance over masked pairs, averaged over states."""
    L = masked.shape[1]
    mask2 = masked[:, :, None] & masked[:, None, :] & ~torch.eye(L, dtype=torch.bool, device=masked.device)
    return (((pred - target) ** 2) * mask2).sum() / masked.shape[0]


def save_head(path, head: MIHead, step: int = 0, metrics: dict | None = None, extra: dict | None = None):
    return save_module(path, head, HEAD_KIND, step, metrics, extra)


def check_head_fits(head: MIHead, model) -> None:
    """A head trained on another backbone would run and return nonsense: refuse it by name."""
    c = head.config
    width = getattr(getattr(model, "config", None), "d_model", None)
    if width is not None and c.d_in != width:
        raise CheckpointError(f"the MI head reads {c.d_in}-wide hidden states but the MDM's are {width} wide "
                              f"(the head was trained on another backbone)")
    n_blocks = len(getattr(model, "blocks", ()))
    bad = [i for i in c.hidden_layers + c.attn_layers if not 0 <= i < n_blocks]
    if bad:
        raise CheckpointError(f"the MI head reads backbone block(s) {bad} but the MDM has blocks 0..{n_blocks - 1}")
    heads = getattr(getattr(model, "config", None), "n_head", None)
    if c.attn_layers and heads is not None and heads != c.n_heads:
        raise CheckpointError(f"the MI head reads attention maps of {c.n_heads} heads per block but the MDM has {heads}")


def load_head(path, device: str = "cpu") -> tuple[MIHead, dict]:
    return load_module(path, HEAD_KIND, HeadConfig, MIHead, device)
