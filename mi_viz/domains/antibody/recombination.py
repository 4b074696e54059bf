"""Natural-like antibody chains and their generation probability from OLGA's models of V(D)J
recombination (PyPI olga 1.3.0, GPL-3.0; Sethna et al. 2019, Bioinformatics 35:2974).

OLGA's human B-cell models (heavy, kappa, lambda) generate a productive CDR3 (from the conserved
Cys to the Trp / Phe, as junction amino acids) with the V and J genes it recombined. A whole V
domain is then the V gene translated up to its Cys, the CDR3, and the J gene translated after its
Trp / Phe: a germline chain, as recombined before any somatic mutation (a pre-selection model:
natural-like, not natural; the reference nobody here trained). OLGA also scores any CDR3's
generation probability Pgen, the judge of a heavy chain's infilled CDR3 that no language model made.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ...core.errors import UserError

MODELS = {"heavy": "human_B_heavy", "kappa": "human_B_kappa", "lambda": "human_B_lambda"}


class RecombinationError(UserError, ValueError):
    """OLGA is absent or a chain type it has no model for."""


@dataclass(frozen=True)
class Chain:
    sequence: str  # the V domain: V gene to its Cys, the CDR3 junction, J gene after its Trp / Phe
    junction: str  # OLGA's CDR3 amino acids, Cys to Trp / Phe included (IMGT 104-118)
    chain: str  # "heavy", "kappa", "lambda"
    v_gene: str
    j_gene: str


@lru_cache(maxsize=3)
def _model(chain: str):
    if chain not in MODELS:
        raise RecombinationError(f"no OLGA model for {chain!r}: choose from {', '.join(MODELS)}")
    try:
        import olga
        import olga.generation_probability as pgen
        import olga.load_model as lm
        import olga.sequence_generation as sg
    except ImportError:
        raise RecombinationError(
            "olga is not installed: `make olga` (pip install olga==1.3.0; GPL-3.0, an optional install)"
        ) from None
    d = os.path.join(os.path.dirname(olga.__file__), "default_models", MODELS[chain])
    vdj = chain == "heavy"
    gd = lm.GenomicDataVDJ() if vdj else lm.GenomicDataVJ()
    gd.load_igor_genomic_data(f"{d}/model_params.txt", f"{d}/V_gene_CDR3_anchors.csv", f"{d}/J_gene_CDR3_anchors.csv")
    gm = lm.GenerativeModelVDJ() if vdj else lm.GenerativeModelVJ()
    gm.load_and_process_igor_model(f"{d}/model_marginals.txt")
    gen = (sg.SequenceGenerationVDJ if vdj else sg.SequenceGenerationVJ)(gm, gd)
    prob = (pgen.GenerationProbabilityVDJ if vdj else pgen.GenerationProbabilityVJ)(gm, gd)
    return gd, gen, prob


def _translate(nt: str) -> str:
    from olga.utils import nt2aa

    return nt2aa(nt[: len(nt) // 3 * 3])


def v_part(gd, v: int) -> str | None:
    """The V gene's amino acids up to (not including) its conserved Cys; None if it is not in frame
    or holds a stop."""
    name, from_anchor, full = gd.genV[v][0], gd.genV[v][1], gd.genV[v][2]
    anchor = len(full) - len(from_anchor)  # the Cys codon's first base
    if not full or anchor % 3 or not from_anchor.startswith(("TGT", "TGC")):
        return None
    aa = _translate(full[:anchor])
    return None if "*" in aa or not name else aa


def j_part(gd, j: int) -> str | None:
    """The J gene's amino acids after its conserved Trp / Phe; None if out of frame or a stop."""
    to_anchor, full = gd.genJ[j][1], gd.genJ[j][2]
    end = len(to_anchor)  # past the Trp / Phe codon
    if not full or end < 3 or full[end - 3 : end] not in ("TGG", "TTT", "TTC"):
        return None
    aa = _translate(full[end:])
    return None if "*" in aa else aa


def generate(chain: str, n: int, seed: int) -> list[Chain]:
    """n productive V domains of one chain type, seeded (OLGA draws from numpy's global state)."""
    gd, gen, _ = _model(chain)
    np.random.seed(seed)
    out: list[Chain] = []
    while len(out) < n:
        _, junction, v, j = gen.gen_rnd_prod_CDR3()
        vp, jp = v_part(gd, int(v)), j_part(gd, int(j))
        if vp is None or jp is None or "*" in junction:
            continue
        out.append(Chain(vp + junction + jp, junction, chain, gd.genV[int(v)][0], gd.genJ[int(j)][0]))
    return out


def log10_pgen(junction: str, chain: str = "heavy") -> float:
    """log10 of OLGA's generation probability of a CDR3 junction (Cys .. Trp/Phe), any V and J;
    -inf where OLGA cannot generate it at all (about 0.5 s a heavy CDR3 on one core)."""
    _, _, prob = _model(chain)
    p = float(prob.compute_aa_CDR3_pgen(junction))
    return float(np.log10(p)) if p > 0 else float("-inf")
