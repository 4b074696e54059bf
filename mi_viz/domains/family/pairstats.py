"""Generated family members judged by pair statistics, the thing parallel decoding breaks.

Two columns unmasked in one pass are drawn from their marginals independently, so a sampler
that unmasks coupled columns together loses exactly their connected correlation

    C_ij(a, b) = f_ij(a, b) - f_i(a) f_j(b).

The usual check of generative family models (bmDCA, arDCA practice) compares a generated
set's C with a natural set's: Pearson over all i < j and a, b (21 symbols, gap included).
Beside it: Pearson of the single-column frequencies, the Potts model's statistical energy
of the generated rows (mean, and how far its distribution is from the natural rows': the
1-D Wasserstein distance), and each generated row's identity to its nearest natural
training row (copying is not generating).

Natural sets are weighted by their sequence weights (alignment.sequence_weights), as the
family backbone was trained; generated rows count once each. The floor is two random
halves of the held-out rows against each other: how well a perfect generator of the same
size as half the reference could score, given the reference's own sampling noise.
Intervals: the spread of a bootstrap over the generated rows (pair_corr_sd; +-1.645 sd).

The floor is not a ceiling for a sweep's rows: they are 200 members against all held-out
rows, and the Pearson of connected correlations grows with both sets' sizes. `matched` puts
every set on the ceiling's terms: the same n rows (the natural half's size, or fewer) against
the same reference (the other half), the same bootstrap; natural half A on those terms is
the ceiling at that n for another natural sample. It is not a bound on a generator: natural
rows are related by descent (weighting removes only near-copies), a generator's members are
independent draws, so a good generator can sit above it at the same n. The bound is
`training_bound`: the training rows' statistics themselves against half B, a generator with
infinitely many members that reproduced them exactly (benchmarks/family_ceiling.py,
docs/results-family.md).
"""

from __future__ import annotations

import numpy as np
import torch

from ...core.errors import InputError
from .alignment import Q, frequencies, sequence_weights
from .coevolution import Potts


def connected(rows: np.ndarray, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(single frequencies f_i (L, Q) flattened, connected correlations C_ij(a, b) for i < j flattened)."""
    fi, fij = frequencies(rows, weights, 0.0)
    L = len(fi)
    iu, ju = np.triu_indices(L, 1)
    C = fij[iu, ju] - fi[iu][:, :, None] * fi[ju][:, None, :]  # (P, Q, Q)
    return fi.ravel(), C.ravel()


def flat_pearson(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson of two flattened statistics (connected correlations, frequencies); nan when one is flat."""
    a, b = a - a.mean(), b - b.mean()
    d = np.sqrt((a * a).sum() * (b * b).sum())
    return float((a * b).sum() / d) if d > 0 else float("nan")


def nearest_identity(rows: np.ndarray, natural: np.ndarray, block: int = 256) -> np.ndarray:
    """(N,) highest identity (share of equal columns) of each row to any natural row."""
    L = rows.shape[1]

    def onehot(r):
        x = torch.zeros(len(r), L * Q)
        x[torch.arange(len(r))[:, None], torch.arange(L)[None] * Q + torch.as_tensor(r, dtype=torch.long)] = 1.0
        return x

    nat = onehot(natural)
    out = np.empty(len(rows))
    for s in range(0, len(rows), block):
        out[s : s + block] = (onehot(rows[s : s + block]) @ nat.T).max(1).values.numpy() / L
    return out


class FamilyReference:
    """The natural side of the comparison, computed once per family: held-out rows (weighted),
    the training rows for the nearest-identity check, and a Potts model for the energies."""

    def __init__(self, heldout: np.ndarray, train: np.ndarray, potts: Potts | None = None, seed: int = 0):
        self.heldout = heldout
        self.train = train
        self.w = sequence_weights(heldout)
        self.fi, self.C = connected(heldout, self.w)
        self.potts = potts
        self.energy_natural = potts.energy(heldout) if potts is not None else None
        self.seed = seed

    def halves(self) -> tuple[np.ndarray, np.ndarray]:
        """The held-out rows split in two at random (seeded): (half A, half B) row indices."""
        perm = np.random.default_rng(self.seed).permutation(len(self.heldout))
        return perm[: len(perm) // 2], perm[len(perm) // 2 :]

    def floor(self) -> dict:
        """Two random halves of the held-out rows scored against each other (the same metrics)."""
        a, b = self.halves()
        fa, Ca = connected(self.heldout[a], sequence_weights(self.heldout[a]))
        fb, Cb = connected(self.heldout[b], sequence_weights(self.heldout[b]))
        return {
            "n": int(len(a)),
            "pair_corr_pearson": round(flat_pearson(Ca, Cb), 4),
            "single_freq_pearson": round(flat_pearson(fa, fb), 4),
        }

    def training_bound(self) -> float:
        """The training rows' own statistics (all of them, weighted) against held-out half B: what
        a generator that reproduced its training statistics exactly would score with infinitely
        many members. The n -> infinity bound of `matched`; a set of n rows sits below it."""
        _, b = self.halves()
        _, Cb = connected(self.heldout[b], sequence_weights(self.heldout[b]))
        return round(flat_pearson(connected(self.train, sequence_weights(self.train))[1], Cb), 4)

    def matched(self, rows: np.ndarray | None, n: int, bootstrap: int = 100) -> dict:
        """The ceiling's terms: a set of exactly n rows against held-out half B, with a bootstrap
        interval over its rows. rows None: the natural set, the first n rows of half A (weighted as
        every natural set is); else the first n generated rows (members are independent draws, so
        the first n are a random subset). n <= len(half A): the natural half bounds it."""
        a, b = self.halves()
        if n > len(a):
            raise InputError(f"n = {n} is more than the natural half's {len(a)} rows")
        _, Cb = connected(self.heldout[b], sequence_weights(self.heldout[b]))
        x = self.heldout[a[:n]] if rows is None else rows[:n]
        if len(x) < n:
            raise InputError(f"{len(x)} rows, fewer than n = {n}")
        w = sequence_weights(x) if rows is None else np.ones(n)
        est = flat_pearson(connected(x, w)[1], Cb)
        g = np.random.default_rng(self.seed + 2)
        bs = []
        for _ in range(bootstrap):
            i = g.integers(0, n, n)
            bs.append(flat_pearson(connected(x[i], w[i])[1], Cb))
        sd = float(np.std(bs)) if bootstrap else float("nan")
        return {
            "n": n,
            "pair_corr_pearson": round(est, 4),
            "pair_corr_sd": round(sd, 4),
            "pair_corr_ci90": [round(est - 1.645 * sd, 4), round(est + 1.645 * sd, 4)],
        }

    def __call__(self, rows: np.ndarray, bootstrap: int = 200) -> dict:
        """Metrics of a generated set rows (N, L) of value indices against the held-out rows."""
        fi, C = connected(rows)
        res: dict[str, float | list[float]] = {
            "pair_corr_pearson": round(flat_pearson(C, self.C), 4),
            "single_freq_pearson": round(flat_pearson(fi, self.fi), 4),
            "nearest_identity_mean": round(float(nearest_identity(rows, self.train).mean()), 4),
            "gap_share": round(float((rows == Q - 1).mean()), 4),
        }
        if bootstrap:
            g = np.random.default_rng(self.seed + 1)
            draws = (g.integers(0, len(rows), len(rows)) for _ in range(bootstrap))
            bs = [flat_pearson(connected(rows[i])[1], self.C) for i in draws]
            # the bootstrap's spread, as a normal 90 % interval around the estimate: resampling with
            # replacement duplicates rows, which inflates pair correlations, so the draws' own
            # percentiles sit above the estimate; their spread is still the sampling noise
            est, sd = flat_pearson(C, self.C), float(np.std(bs))
            res["pair_corr_sd"] = round(sd, 4)
            res["pair_corr_ci90"] = [round(est - 1.645 * sd, 4), round(est + 1.645 * sd, 4)]  # type: ignore[assignment]
        if self.potts is not None and self.energy_natural is not None:
            from scipy.stats import wasserstein_distance

            e = self.potts.energy(rows)
            res["mean_energy"] = round(float(e.mean()), 3)
            res["natural_mean_energy"] = round(float(np.average(self.energy_natural, weights=self.w)), 3)
            res["energy_w1"] = round(float(wasserstein_distance(e, self.energy_natural, v_weights=self.w)), 3)
        return res
