"""Every contact predictor of a family, by one name each: what the tables, the app and the contact
benchmark call them, and where their (L, L) maps are committed (results/family/NAME/*.npz).

The maps are made by `python -m mi_viz contacts` (contacts.npz: the backbone's conditional MI, its
head, MIp, the Potts model) and `python -m benchmarks.family_contact_classes` (jacobian.npz,
attention.npz and one file per packaged anchor); every map is APC'd where the field applies APC.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numpy.lib.npyio import NpzFile

# key in contact_classes.json "predictors" -> (what a reader calls it, file, array in that file)
PREDICTORS: dict[str, tuple[str, str, str]] = {
    "truth": ("conditional MI", "contacts.npz", "truth_apc"),
    "head": ("MI head", "contacts.npz", "head_apc"),
    "jacobian_rows": ("Jacobian, held-out rows", "jacobian.npz", "jacobian_rows"),
    "jacobian_consensus": ("Jacobian, consensus row", "jacobian.npz", "jacobian_consensus"),
    "mip": ("MIp", "contacts.npz", "mip"),
    "attention": ("attention (DAWN's map)", "attention.npz", "attention"),
    "potts": ("Potts (ours)", "contacts.npz", "potts"),
    "ardca": ("arDCA", "ardca.npz", "ardca"),
    "plmdca": ("plmDCA", "plmdca.npz", "plmdca"),
    "bmdca": ("bmDCA", "bmdca.npz", "bmdca"),
}
NAMES = {k: v[0] for k, v in PREDICTORS.items()}
HOW = {  # how each map is made, in a line (docs/results-family.md in full)
    "truth": "the backbone's exact conditional MI, averaged over held-out rows with 10 % of their columns masked",
    "head": "the MI head's map of the same states, a pass each",
    "jacobian_rows": "the backbone's categorical Jacobian, averaged over held-out rows (two half-masks each)",
    "jacobian_consensus": "the categorical Jacobian of the alignment's consensus row",
    "mip": "the training rows' mutual information, APC",
    "attention": "the backbone's attention read as DAWN reads it, averaged over the Jacobian's rows",
    "potts": "the project's Potts model on the training rows: couplings' Frobenius norms, APC",
    "ardca": "arDCA (package ardca) on the training rows: couplings' Frobenius norms, APC",
    "plmdca": "plmDCA (package pydca) on the training rows: couplings' Frobenius norms, APC",
    "bmdca": "bmDCA (package adabmdca) on the training rows: couplings' Frobenius norms, APC",
}
ANCHORS = ("ardca", "plmdca", "bmdca")  # the field's generative models, from their packages


def committed_maps(folder: Path) -> dict[str, np.ndarray]:
    """{predictor key: (L, L) map} of every map committed under a family's results folder, in
    PREDICTORS' order; a file that is absent contributes nothing."""
    out: dict[str, np.ndarray] = {}
    opened: dict[str, NpzFile | None] = {}
    for key, (_, file, array) in PREDICTORS.items():
        if file not in opened:
            opened[file] = np.load(folder / file) if (folder / file).exists() else None
        z = opened[file]
        if z is not None and array in z.files:
            out[key] = np.asarray(z[array], dtype=np.float32)
    return out
