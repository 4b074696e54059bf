"""Protein families: alignments, weights, the split, contacts, the anchors (MIp, Potts), the
family backbone, conditional MI on a toy Potts model with known couplings, pair statistics,
and the CLI verbs (tiny configs, exact oracles)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from conftest import ROOT

from mi_viz.domains.family.alignment import (
    GAP,
    AlignmentError,
    parse_alignment,
    parse_row,
    sequence_weights,
    split_heldout,
)
from mi_viz.domains.family.scoring import apc, contact_scores, precision_at
from mi_viz.domains.family.structure import ContactMap, StructureError, contact_map

COUPLED = [(0, 6), (2, 9), (3, 8)]  # the toy family's couplings
LETTERS = "LAGVSERT"
W = 12  # the toy's width


def toy_rows(n: int, seed: int = 0, width: int = W) -> np.ndarray:
    """A pairwise model with known couplings: columns in COUPLED copy their partner's symbol with
    probability 0.95; every other column is uniform over 8 amino acids, independently (rows far
    apart, so the 80 %-identity split and weights leave them alone)."""
    g = np.random.default_rng(seed)
    x = g.integers(0, len(LETTERS), (n, width))
    for i, j in COUPLED:
        copy = g.random(n) < 0.95
        x[copy, j] = x[copy, i]
    return np.array([[parse_row(LETTERS[v])[0] for v in r] for r in x], dtype=np.uint8)


def fasta(rows: np.ndarray) -> str:
    from mi_viz.domains.family.alignment import row_string

    return "".join(f">r{n}\n{row_string(r)}\n" for n, r in enumerate(rows))


# --------------------------------------------------------------------------- alignments


def test_alignment_errors_name_row_and_column():
    good = ">a\nLA-G\n>b\nLAVG\n"
    assert parse_alignment(good, min_rows=2).rows.tolist() == [[0, 1, GAP, 2], [0, 1, 3, 2]]
    with pytest.raises(AlignmentError, match=r"row 2 \(b\) has 3 columns, row 1 has 4"):
        parse_alignment(">a\nLA-G\n>b\nLAV\n", min_rows=2)
    with pytest.raises(AlignmentError, match=r"row 2 \(b\), column 3: '7'"):
        parse_alignment(">a\nLA-G\n>b\nLA7G\n", min_rows=2)
    with pytest.raises(AlignmentError, match=r"column 2: 'a'"):  # a lower-case insert state
        parse_alignment(">a\nLA-G\n>b\nLaVG\n", min_rows=2)
    with pytest.raises(AlignmentError, match="at least 20"):
        parse_alignment(good)
    with pytest.raises(AlignmentError, match="no FASTA header"):
        parse_alignment("LA-G\n", min_rows=1)
    a = parse_alignment(">a\nLX.G\n>b\nLAVG\n", min_rows=2)  # X and '.' read as gaps, X counted
    assert a.rows[0].tolist() == [0, GAP, GAP, 2] and a.unknown == 1


def test_sequence_weights_written_out():
    # rows 0-2: identities 0.9 (0-1), 0.8 (0-2), 0.7 (1-2); row 3 far from all
    base = list("LLLLLLLLLL")
    r1 = base.copy()
    r1[0] = "A"
    r2 = base.copy()
    r2[1] = r2[2] = "A"
    rows = np.stack([parse_row("".join(r)) for r in (base, r1, r2, list("GGGGGGGGGG"))]).astype(np.uint8)
    # neighbours at >= 0.8 (self included): row 0 {0, 1, 2}; row 1 {0, 1}; row 2 {0, 2}; row 3 {3}
    np.testing.assert_allclose(sequence_weights(rows), [1 / 3, 1 / 2, 1 / 2, 1.0])


def test_split_never_separates_rows_at_80_percent_identity():
    rows = toy_rows(300, seed=1)
    g = np.random.default_rng(0)
    near = rows[:60].copy()  # 60 near-copies (one column changed) of the first 60 rows
    near[np.arange(60), g.integers(0, 10, 60)] = GAP
    rows = np.concatenate([rows, near])
    held = split_heldout(rows, 0.1, seed=3)
    assert 0.1 <= held.mean() < 0.3
    ident = (rows[:, None, :] == rows[None, :, :]).mean(-1)
    straddle = ident[held][:, ~held]
    assert straddle.max() < 0.8


# --------------------------------------------------------------------------- structures and contacts


def write_pdb(path, coords: list[tuple[float, float, float]], glycine: set[int] = frozenset()):
    """A one-chain PDB: residue k (number k + 1) at coords[k], C-beta there (C-alpha for glycine;
    the other residues' C-alpha 3.8 A off in z, so only C-beta decides)."""
    lines = []
    n = 1
    for k, (x, y, z) in enumerate(coords):
        name = "GLY" if k in glycine else "ALA"
        atoms = [("CA", (x, y, z))] if k in glycine else [("CA", (x, y, z + 3.8)), ("CB", (x, y, z))]
        for atom, (ax, ay, az) in atoms:
            lines.append(
                f"ATOM  {n:5d}  {atom:<3s} {name} A{k + 1:4d}    {ax:8.3f}{ay:8.3f}{az:8.3f}  1.00  0.00           C"
            )
            n += 1
    path.write_text("\n".join(lines) + "\nEND\n")


def test_contacts_on_a_hand_made_structure(tmp_path):
    # 14 residues 10 A apart on a line, except residue 12 moved next to residue 0 (5 A) and
    # residue 13 next to residue 2 (glycine: its C-alpha counts)
    coords = [(10.0 * k, 0.0, 0.0) for k in range(14)]
    coords[12] = (0.0, 5.0, 0.0)
    coords[13] = (20.0, 6.0, 0.0)
    write_pdb(tmp_path / "s.pdb", coords, glycine={13})
    # alignment columns 0..15; column c holds residue c - 1 for c in 1..14 (columns 0 and 15 unmapped)
    (tmp_path / "s.indices").write_text("".join(f"{c}\tA\t{c}\t{c} A\t0\n" for c in range(1, 15)))
    cm = contact_map(tmp_path / "s.pdb", 16, indices=tmp_path / "s.indices")
    assert cm.n_mapped == 14 and cm.columns == list(range(1, 15))
    c = cm.contacts()
    assert {tuple(p) for p in np.argwhere(np.triu(c))} == {(1, 13), (3, 14)}  # both far apart in sequence
    assert not cm.scored()[1, 2] and cm.scored()[1, 7]  # |i - j| < 6 is never scored
    score = np.zeros((16, 16))
    score[1, 13] = score[13, 1] = 2.0
    score[4, 11] = score[11, 4] = 1.0  # a non-contact second
    assert precision_at(score, cm, 1) == 1.0 and precision_at(score, cm, 2) == 0.5
    s = contact_scores(score, cm)
    assert s["precision_L5"] == 0.5 and s["base_rate"] == round(2 / int(np.triu(cm.scored()).sum()), 4)
    cm.save(tmp_path / "c.json")
    back = ContactMap.load(tmp_path / "c.json")
    assert (back.contacts() == c).all() and back.residues[0] == "A1 A"


def test_a_structure_sequence_finds_its_columns():
    """Without an indices file the structure's sequence is aligned to the profile: residues
    before and after the domain are skipped, a column the structure lacks stays unmapped."""
    from mi_viz.domains.family.structure import align_to_profile

    consensus = "LAGVSERTIDPKQNFY"
    fi = np.full((len(consensus), 21), 0.02)
    for c, a in enumerate(consensus):
        fi[c, "LAGVSERTIDPKQNFYMHWC-".index(a)] = 0.6
    fi /= fi.sum(1, keepdims=True)
    seq = "MWWH" + consensus[:5] + consensus[6:] + "HHCC"  # column 5 deleted in this member
    got = align_to_profile(seq, fi)
    want = {c: c + 4 for c in range(5)} | {c: c + 3 for c in range(6, len(consensus))}
    assert got == want


def test_structure_errors(tmp_path):
    write_pdb(tmp_path / "s.pdb", [(10.0 * k, 0, 0) for k in range(14)])
    (tmp_path / "far.indices").write_text("40\tA\t0\t1 A\t0\n")
    with pytest.raises(StructureError, match="maps column 40 but the alignment has columns 0..15"):
        contact_map(tmp_path / "s.pdb", 16, indices=tmp_path / "far.indices")
    (tmp_path / "absent.indices").write_text("".join(f"{c}\tA\t{c}\t{c + 100} A\t0\n" for c in range(14)))
    with pytest.raises(StructureError, match="lacks 14 of the 14 residues"):
        contact_map(tmp_path / "s.pdb", 16, indices=tmp_path / "absent.indices")
    with pytest.raises(StructureError, match="not found"):
        contact_map(tmp_path / "none.pdb", 16, indices=tmp_path / "far.indices")
    (tmp_path / "bad.pdb").write_text("this is no PDB file\n")
    with pytest.raises(StructureError):
        contact_map(tmp_path / "bad.pdb", 16, indices=tmp_path / "far.indices")


def test_apc_removes_a_rank_one_background():
    g = np.random.default_rng(0)
    a = g.random(8) + 1
    S = np.outer(a, a)
    S[1, 5] = S[5, 1] = S[1, 5] + 3.0
    out = apc(S)
    iu = np.triu_indices(8, 1)
    assert np.argmax(out[iu]) == list(zip(*iu)).index((1, 5))


# --------------------------------------------------------------------------- anchors and the family backbone


def test_mip_and_potts_rank_the_coupled_pairs_first():
    from mi_viz.domains.family.coevolution import fit_potts, mip

    rows = toy_rows(600)
    w = np.ones(len(rows))
    for score in (mip(rows, w), fit_potts(rows, w, max_iter=60).contact_score()):
        iu = np.triu_indices(W, 1)
        top = {tuple(int(v) for v in p) for p in np.array(iu).T[np.argsort(-score[iu])[:3]]}
        assert top == set(COUPLED)


def test_potts_energy_is_the_written_out_sum():
    from mi_viz.domains.family.coevolution import Potts

    g = torch.Generator().manual_seed(0)
    L, Q = 4, 21
    h = torch.randn(L, Q, generator=g)
    J = torch.randn(L, L, Q, Q, generator=g)
    J = 0.5 * (J + J.permute(1, 0, 3, 2))
    J[torch.arange(L), torch.arange(L)] = 0
    x = np.array([[0, 5, 20, 3], [1, 1, 1, 1]])
    want = [
        -(sum(h[i, r[i]] for i in range(L)) + sum(J[i, j, r[i], r[j]] for i in range(L) for j in range(i + 1, L)))
        for r in x
    ]
    np.testing.assert_allclose(Potts(h, J).energy(x), [float(v) for v in want], rtol=1e-5)


@pytest.fixture(scope="module")
def toy_family(tmp_path_factory):
    """A tiny family backbone trained on the toy Potts model's rows (seconds) and its data."""
    from mi_viz.domains.family.alignment import parse_alignment
    from mi_viz.domains.family.backbone import FamilyMDMConfig
    from mi_viz.domains.family.train import TrainFamilyConfig, prepare, train_family

    d = tmp_path_factory.mktemp("family")
    rows = toy_rows(1500, seed=2)
    (d / "toy.fasta").write_text(fasta(rows))
    aln = parse_alignment((d / "toy.fasta").read_text(), "toy.fasta")
    data = prepare(aln, seed=0)
    tc = TrainFamilyConfig(batch_size=64, max_steps=400, max_minutes=0, eval_every=100, warmup=20, lr=3e-3)
    mc = FamilyMDMConfig(d_model=32, n_heads=2, n_layers=2)
    res = train_family(data, d / "family_TOY", tc, mc, family="TOY")
    return d, data, res


def test_toy_family_learns_its_couplings(toy_family):
    """The family backbone's conditional MI, averaged over held-out rows, ranks the truly coupled
    pairs first; the profile model cannot (it has no pairs), and the backbone beats it."""
    from mi_viz.domains.family import family_domain
    from mi_viz.domains.family.contacts import averaged_mi

    d, data, res = toy_family
    assert res["heldout_pseudo_ppl_15"] < 0.8 * res["profile_pseudo_ppl_15"]
    dom = family_domain(d / "family_TOY")
    model = dom.load_model()
    avg = averaged_mi(model, data.heldout_rows[:40], masks_per_row=4, frac=0.3, eps=1e-3)
    iu = np.triu_indices(W, 1)
    top = {tuple(int(v) for v in p) for p in np.array(iu).T[np.argsort(-avg.truth[iu])[:3]]}
    assert top == set(COUPLED)
    assert avg.passes > avg.states and (avg.count[iu] > 0).all()


def test_family_training_resumes_to_the_same_weights(tmp_path):
    from mi_viz.core.checkpoints import read_tensors
    from mi_viz.domains.family.alignment import parse_alignment
    from mi_viz.domains.family.backbone import FamilyMDMConfig
    from mi_viz.domains.family.train import TrainFamilyConfig, prepare, train_family

    data = prepare(parse_alignment(fasta(toy_rows(200)), "toy"), seed=0)
    tc = TrainFamilyConfig(batch_size=8, max_steps=6, max_minutes=0, eval_every=3, warmup=2)
    mc = FamilyMDMConfig(d_model=16, n_heads=2, n_layers=1)
    train_family(data, tmp_path / "a", tc, mc)
    stops = iter([False, False, True])  # pause after the third step, then resume
    train_family(data, tmp_path / "b", tc, mc, should_stop=lambda: next(stops, False))
    assert read_tensors(tmp_path / "b_last")  # the paused state is on disk
    train_family(data, tmp_path / "b", tc, mc)
    ta, tb = read_tensors(tmp_path / "a_last"), read_tensors(tmp_path / "b_last")
    assert all(torch.equal(ta[k], tb[k]) for k in ta)


# --------------------------------------------------------------------------- pair statistics


def test_pair_statistics_see_independent_columns():
    from mi_viz.domains.family.pairstats import FamilyReference, connected

    two = np.stack([parse_row("LLG"), parse_row("AAG")]).astype(np.uint8)
    fi, C = connected(two)  # written out: columns 0 and 1 move together, column 2 is constant
    C = C.reshape(3, 21, 21)  # pairs (0, 1), (0, 2), (1, 2)
    L_, A_, G_ = (parse_row(a)[0] for a in "LAG")
    assert fi.reshape(3, 21)[0, L_] == 0.5 and C[0, L_, L_] == 0.25 and C[0, L_, A_] == -0.25
    assert np.abs(C[1:]).max() == 0.0 and fi.reshape(3, 21)[2, G_] == 1.0
    ref = FamilyReference(toy_rows(600, seed=5), toy_rows(600, seed=6))
    same = ref(toy_rows(600, seed=7), bootstrap=20)
    shuffled = toy_rows(600, seed=7)
    g = np.random.default_rng(0)
    for j in range(W):  # columns drawn independently: the marginals stay, the pairs go
        shuffled[:, j] = shuffled[g.permutation(600), j]
    broken = ref(shuffled, bootstrap=20)
    assert same["pair_corr_pearson"] > 0.6 > 0.3 > broken["pair_corr_pearson"]
    assert broken["single_freq_pearson"] > 0.95
    assert 0 < same["pair_corr_sd"] < 0.05
    assert same["nearest_identity_mean"] <= 1.0
    assert ref.floor()["pair_corr_pearson"] > 0.5


# --------------------------------------------------------------------------- command line

pytest_slow = pytest.mark.slow


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "mi_viz", *map(str, args)], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


@pytest_slow
def test_cli_train_contacts_bench(tmp_path):
    rows = toy_rows(300, seed=4, width=16)
    (tmp_path / "toy.fasta").write_text(fasta(rows))
    coords = [(10.0 * k, 0.0, 0.0) for k in range(14)]
    coords[12] = (0.0, 5.0, 0.0)
    write_pdb(tmp_path / "s.pdb", coords)
    (tmp_path / "s.indices").write_text("".join(f"{c}\tA\t{c}\t{c} A\t0\n" for c in range(1, 15)))
    ck = tmp_path / "family_TOY"
    r = _cli(
        "train-family", "--msa", tmp_path / "toy.fasta", "--structure", tmp_path / "s.pdb", "--map",
        tmp_path / "s.indices", "--out", ck, "--steps", "6", "--d-model", "16", "--n-heads", "2", "--n-layers", "1",
        "--batch-size", "8",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout.strip().splitlines()[-1])
    assert s["family"] == "TOY" and s["step"] == 6 and s["contacts"]["mapped_columns"] == 14
    assert (tmp_path / "family_TOY.contacts.json").exists()
    r = _cli(
        "contacts", "--backbone", ck, "--msa", tmp_path / "toy.fasta", "--rows", "4", "--masks-per-row", "2",
        "--potts-iter", "3", "--cache", tmp_path / "cache", "--out", tmp_path / "c.json", "--jacobian-rows", "3",
        "--consensus-masks", "2", "--anchors",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    c = json.loads(r.stdout.strip().splitlines()[-1])
    want = {"precision_L5_truth", "precision_L2_truth", "precision_L5_mip", "precision_L5_potts", "auroc_truth"}
    assert want | {"rows", "seconds"} <= set(c) and c["rows"] == 4
    assert (tmp_path / "c.npz").exists()
    # the user's family gets the shipped families' reading: classes, the Jacobian, the structure-free choice
    assert "categorical Jacobian:" in r.stderr and " passes (3 held-out rows" in r.stderr
    cc = json.loads((tmp_path / "contact_classes.json").read_text())
    assert {"truth", "mip", "potts", "jacobian_rows", "jacobian_consensus", "attention"} <= set(cc["predictors"])
    assert cc["jacobian_cost"]["rows"]["rows"] == 3 and cc["jacobian_cost"]["consensus"]["states"] == 2
    assert (
        cc["extraction"]["chosen"] in ("truth", "jacobian_rows")
        and c["extraction_chosen"] == cc["extraction"]["chosen"]
    )
    assert {"precision_long_L", "pairs_short", "contacts_all"} <= set(cc["predictors"]["jacobian_rows"])
    r = _cli(
        "contacts", "--backbone", ck, "--msa", tmp_path / "toy.fasta", "--out", tmp_path / "z.json",
        "--jacobian-rows", "0",
    )  # fmt: skip
    assert (
        r.returncode == 2 and "a Jacobian budget of 0 held-out rows" in r.stderr and not (tmp_path / "z.json").exists()
    )
    for sampler in (["sequential"], ["eb", "--gamma", "1"], ["topk", "--k", "4"]):
        r = _cli(
            "bench", "family", "--backbone", ck, "--msa", tmp_path / "toy.fasta", "--n", "8", "--potts-iter", "3",
            "--cache", tmp_path / "cache", "--bootstrap", "5", "--out", tmp_path / "b.csv", "--sampler", *sampler,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
        b = json.loads(r.stdout.strip().splitlines()[-1])
        keys = {"sampler", "gamma", "lam", "k", "n", "avg_passes", "pair_corr_pearson", "single_freq_pearson"}
        assert keys | {"mean_energy"} <= set(b) and b["n"] == 8 and b["sampler"] == sampler[0]
    # the head's report against the truth, beside the two baselines (a random tiny head: the keys and the wiring)
    from mi_viz.core.mi_head import HeadConfig, MIHead, save_head

    torch.manual_seed(0)
    save_head(tmp_path / "head", MIHead(HeadConfig(d_in=16, n_values=21, d_hidden=8, rank=4, d_pair=4)))
    r = _cli(
        "mi-report", "family", "--backbone", ck, "--msa", tmp_path / "toy.fasta", "--head", tmp_path / "head",
        "--states", "6", "--eps", "0.05", "--cache", tmp_path / "cache", "--out", tmp_path / "rep.json",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout.strip().splitlines()[-1])
    assert {"pearson", "within_state_pearson", "baselines", "auroc_structure_gt"} <= set(rep)
    assert {"pearson_head", "within_state_pearson_separation", "pearson_separation_entropies"} <= set(rep["baselines"])
    # bad input: a message and status 2, nothing written
    (tmp_path / "bad.fasta").write_text(">a\nLAG\n>b\nLA\n")
    r = _cli("train-family", "--msa", tmp_path / "bad.fasta", "--out", tmp_path / "family_BAD")
    assert r.returncode == 2 and "row 2 (b) has 2 columns" in r.stderr
    assert not (tmp_path / "family_BAD.json").exists()
    r = _cli("contacts", "--backbone", ck, "--msa", tmp_path / "s.indices", "--out", tmp_path / "x.json")
    assert r.returncode == 2 and "error:" in r.stderr


def test_family_sampler_defaults_are_the_validation_choice():
    """The family defaults the CLI and the app use are those benchmarks/defaults.py (family) chose on
    the validation sweeps (results/family/choice.json), read the one way every domain's are
    (tests/test_choices.py checks that reading on a choice file that has choices)."""
    from benchmarks.report import defaults_from_choice
    from mi_viz.domains.family import FamilyDomain

    choice = json.loads((ROOT / "results" / "family" / "choice.json").read_text())
    assert FamilyDomain.sampler_defaults == defaults_from_choice(choice["chosen"])


def test_contact_precision_by_separation_class():
    """The field's classes on a hand-made map: a pair 5 columns apart is never scored, 6 and 11 are
    short, 12 and 23 medium, 24 long; precision at top L, L/2, L/5 within each class."""
    from mi_viz.domains.family.scoring import class_precisions
    from mi_viz.domains.family.structure import ContactMap

    W = 41
    dist = np.full((W, W), 20.0)
    np.fill_diagonal(dist, 0.0)
    close = [(0, 5), (0, 6), (0, 11), (1, 13), (1, 24), (2, 26)]  # separations 5, 6, 11, 12, 23, 24
    for a, b in close:
        dist[a, b] = dist[b, a] = 5.0
    cm = ContactMap(W, list(range(W)), [f"A{k} A" for k in range(W)], "A" * W, dist)
    assert {(int(a), int(b)) for a, b in np.argwhere(np.triu(cm.contacts()))} == set(close[1:])  # 5 apart: never
    score = np.zeros((W, W))
    for rank, (a, b) in enumerate([(0, 6), (3, 10), (1, 13), (2, 26), (3, 30), (0, 11), (1, 24)]):
        score[a, b] = score[b, a] = 10.0 - rank  # contacts and non-contacts interleaved
    p = class_precisions(score, cm)
    assert (p["contacts_short"], p["contacts_medium"], p["contacts_long"], p["contacts_all"]) == (2, 2, 1, 5)
    # L = 41 mapped columns: top L/5 = 8 pairs per class; the ranked ones first, then zeros in scan order
    assert p["precision_short_L5"] == round(2 / 8, 4)  # (0,6) and (0,11) of (0,6), (3,10), (0,11) + zeros
    assert p["precision_long_L5"] == round(1 / 8, 4)  # (2,26) among (2,26), (3,30) + zeros
    assert p["precision_medium_L5"] == round(2 / 8, 4)  # (1,13), (1,24)
    assert p["precision_all_L5"] == round(5 / 8, 4)  # the seven ranked pairs hold all five contacts
    assert p["precision_all_L5"] == contact_scores(score, cm)["precision_L5"]  # today's headline, the same
    assert p["pairs_long"] == sum(W - d for d in range(24, W)) and p["precision_long_L"] == round(1 / 41, 4)


def test_separation_counts_residues_along_the_chain_not_columns():
    """Issue 49: columns the structure lacks add nothing to a pair's separation; a gap in the residue
    numbers (missing residues) does; a residue with an insertion code counts as one; a residue
    mapped twice, numbers that go back or two chains are refused by name."""
    from mi_viz.domains.family.structure import ContactMap, StructureError

    W = 24
    cols = list(range(0, W, 2))  # every other column mapped, residues 1..12 in a row
    dist = np.full((len(cols), len(cols)), 5.0)  # every pair close
    cm = ContactMap(W, cols, [f"A{k + 1} A" for k in range(len(cols))], "-" * W, dist)
    assert cm.separation()[0, 12] == 6 and cm.scored()[0, 12] and cm.contacts()[0, 12]  # 12 columns, 6 residues
    assert not cm.scored()[0, 10] and not cm.contacts()[0, 10]  # 10 columns, 5 residues: too close
    assert cm.separation()[1, 2] == -1 and not cm.scored()[1, 3]  # unmapped columns
    gap = ContactMap(W, cols[:3], ["A1 A", "A2 A", "A20 A"], "-" * W, dist[:3, :3])
    assert gap.separation()[0, 4] == 19  # residues 3..19 are missing from the structure: they count
    ins = ContactMap(W, cols[:4], ["A1 A", "A52 A", "A52A A", "A53 A"], "-" * W, dist[:4, :4])
    assert list(ins.positions) == [1, 52, 53, 54]
    for residues, says in (
        (["A1 A", "A2 A", "A2 A"], "mapped to two columns"),
        (["A5 A", "A4 A", "A9 A"], "go back"),
        (["A1 A", "A2 B", "A9 B"], "2 chains"),
        (["A1 A", "A2", "A9 A"], "not 'letter number"),
    ):
        with pytest.raises(StructureError, match=says):
            ContactMap(W, cols[:3], residues, "-" * W, dist[:3, :3])


class _ToyPotts:
    """A Potts model's conditionals given the unmasked columns: logit_{j,b} = h_j(b) + sum over
    unmasked k != j of J_jk(b, x_k), tokens = values, MASK = V."""

    def __init__(self, L=7, V=5, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.L, self.V = L, V
        self.h = torch.randn(L, V, generator=g, dtype=torch.float64)
        J = torch.randn(L, L, V, V, generator=g, dtype=torch.float64)
        J = (J + J.permute(1, 0, 3, 2)) / 2  # J_jk(b, c) = J_kj(c, b)
        J[0, 3] = J[3, 0] = 0.0  # an uncoupled pair
        for j in range(L):
            J[j, j] = 0.0
        self.J = J
        # an unmasked column's logits follow other couplings: an MDM never trains them, and a
        # Jacobian that read them instead of the masked columns' would score J_seen, not J
        self.h_seen = torch.randn(L, V, generator=g, dtype=torch.float64)
        self.J_seen = 3.0 * torch.randn(L, L, V, V, generator=g, dtype=torch.float64)
        self.value_tokens = torch.arange(V)
        self.mask_id = V

    def forward_tokens(self, tokens, hidden_layers=()):
        from mi_viz.core.protocol import ModelOutput

        B, L = tokens.shape
        seen = tokens != self.mask_id  # (B, L)
        onehot = torch.nn.functional.one_hot(tokens.clamp(max=self.V - 1), self.V).double() * seen[..., None]
        logits = self.h[None] + torch.einsum("jkbc,nkc->njb", self.J, onehot)  # (B, L, V) masked columns'
        other = self.h_seen[None] + torch.einsum("jkbc,nkc->njb", self.J_seen, onehot)  # unmasked columns'
        logits = torch.where(seen[..., None], other, logits)
        return ModelOutput(logits=logits.float(), hidden=None)


def test_the_categorical_jacobian_of_a_toy_potts_is_its_couplings():
    """On a Potts model the Jacobian score of a pair is the Frobenius norm of its double-centred
    coupling block, whatever the row and the mask (and an uncoupled pair scores 0); the toy's
    unmasked columns answer with other couplings, so reading the wrong columns fails here."""
    from mi_viz.domains.family.jacobian import categorical_jacobian

    toy = _ToyPotts()
    rows = np.random.default_rng(0).integers(0, toy.V, (4, toy.L))
    jac = categorical_jacobian(toy, rows, masks_per_row=6, frac=0.5, symbols=list(range(toy.V)))
    Jc = toy.J - toy.J.mean(2, keepdim=True)
    Jc = Jc - Jc.mean(3, keepdim=True)
    want = Jc.pow(2).sum((2, 3)).sqrt().numpy()  # (L, L), symmetric
    seen = (jac.count > 0) & ~np.eye(toy.L, dtype=bool)
    assert seen.sum() > toy.L  # the masks reach most pairs
    assert np.allclose(jac.score[seen], want[seen], atol=1e-5)
    assert jac.score[0, 3] < 1e-6 and jac.passes == sum(toy.V * (toy.L - round(0.5 * toy.L)) for _ in range(24))


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("arDCA") is None and not os.environ.get("CI"),
    reason="arDCA not installed (make anchors; make test installs it)",
)
def test_ardca_anchor_on_a_tiny_alignment():
    """The packaged arDCA, fitted with its documented defaults on an alignment with one copied
    column: its couplings rank that pair first (column order mapped back from its entropic
    order), and it draws members of the alignment's width and alphabet. (Its default convergence
    threshold stops this toy early: the members keep the copy only a little above chance.)"""
    from mi_viz.domains.family.anchors import ardca_contacts, ardca_sample, fit_ardca

    g = np.random.default_rng(0)
    rows = g.integers(0, 4, (600, 10))
    rows[:, 7] = rows[:, 2]
    fit = fit_ardca(rows, np.ones(600))
    s = ardca_contacts(fit)
    iu = np.triu_indices(10, 1)
    best = int(np.argmax(s[iu]))
    assert (iu[0][best], iu[1][best]) == (2, 7)
    x, _ = ardca_sample(fit, 300)
    assert x.shape == (300, 10) and x.min() >= 0 and x.max() < 21
    assert "rows" not in fit.settings  # under the cap: every row
    sub = fit_ardca(rows, np.ones(600), max_rows=300)  # past it: a subsample, said in its settings
    assert (sub.settings["rows"], sub.settings["rows_of"]) == (300, 600)


@pytest.mark.skipif(
    importlib.util.find_spec("pydca") is None and not os.environ.get("CI"),
    reason="pydca not installed (make anchors; make test installs it)",
)
def test_plmdca_anchor_on_a_tiny_alignment():
    """The packaged plmDCA on an alignment with one copied column and one constant column, its
    parameters mapped into our symbol order: the copied pair ranks first, the constant column's
    field favours its symbol, and adabmDCA's chains on those parameters keep both (so the
    mapping of pydca's and adabmDCA's alphabets onto ours is the right one)."""
    from mi_viz.domains.family.alignment import SYMBOLS
    from mi_viz.domains.family.anchors import coupling_contacts, fit_plmdca, potts_sample

    g = np.random.default_rng(0)
    rows = g.integers(0, 4, (600, 10))
    rows[:, 7] = rows[:, 2]
    rows[:, 5] = SYMBOLS.index("W")
    fit = fit_plmdca(rows)
    assert np.allclose(fit.J, fit.J.transpose(2, 3, 0, 1))
    s = coupling_contacts(fit.J)
    iu = np.triu_indices(10, 1)
    best = int(np.argmax(s[iu]))
    assert (iu[0][best], iu[1][best]) == (2, 7)
    assert SYMBOLS[int(fit.h[5].argmax())] == "W"
    x, _ = potts_sample(fit, 200, sweeps=200)
    assert x.shape == (200, 10)
    assert (x[:, 5] == SYMBOLS.index("W")).mean() > 0.9 and (x[:, 2] == x[:, 7]).mean() > 0.8


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("adabmDCA") is None and not os.environ.get("CI"),
    reason="adabmDCA not installed (make anchors; make test installs it)",
)
def test_bmdca_anchor_on_a_tiny_alignment():
    """adabmDCA's bmDCA on a small budget: the copied pair ranks first, the constant column's field
    favours its symbol; the budget it was given and whether it reached its target are recorded."""
    from mi_viz.domains.family.alignment import SYMBOLS
    from mi_viz.domains.family.anchors import coupling_contacts, fit_bmdca

    g = np.random.default_rng(0)
    rows = g.integers(0, 4, (600, 10))
    rows[:, 7] = rows[:, 2]
    rows[:, 5] = SYMBOLS.index("W")
    fit = fit_bmdca(rows, chains=300, max_steps=150)
    s = coupling_contacts(fit.J)
    iu = np.triu_indices(10, 1)
    best = int(np.argmax(s[iu]))
    assert (iu[0][best], iu[1][best]) == (2, 7)
    assert SYMBOLS[int(fit.h[5].argmax())] == "W"
    assert fit.settings["gradient_steps"] <= 150 and fit.settings["pearson"] is not None


def test_matched_pair_statistics_share_the_ceilings_terms():
    """`matched` scores every set as the ceiling is scored: n rows against held-out half B. A
    generated set that is half B itself scores 1 (random rows: every weight 1); the natural half A
    scores below it; n past half A's size, or past the set's, is refused."""
    from mi_viz.domains.family.pairstats import FamilyReference

    g = np.random.default_rng(0)
    held = g.integers(0, 20, (60, 12))
    ref = FamilyReference(held, held)
    a, b = ref.halves()
    assert sorted(np.concatenate([a, b]).tolist()) == list(range(60))
    same = ref.matched(held[b], n=len(b))
    assert same["pair_corr_pearson"] == 1.0 and same["n"] == 30
    ceiling = ref.matched(None, n=30, bootstrap=20)
    assert ceiling["pair_corr_pearson"] < 0.5 and ceiling["pair_corr_sd"] > 0
    assert ref.matched(None, n=10)["n"] == 10
    assert FamilyReference(held, held[b]).training_bound() == 1.0  # training rows that are half B itself
    assert ref.training_bound() < 1.0
    with pytest.raises(ValueError, match="more than the natural half"):
        ref.matched(None, n=31)
    with pytest.raises(ValueError, match="fewer than n"):
        ref.matched(held[:5], n=10)


def test_potts_and_plmdca_agreement_and_the_structure_free_choice():
    """agreement: Spearman over the scored pairs and the shared top-L/5; structure_free_choice picks
    the extraction whose top pairs carry more held-out covariation (here one that points at the
    coupled columns against one that points elsewhere)."""
    from types import SimpleNamespace

    from mi_viz.domains.family.reading import agreement, structure_free_choice

    L = 20
    cmap = SimpleNamespace(scored=lambda: np.ones((L, L), bool), n_mapped=L)
    rng = np.random.default_rng(0)
    a = rng.random((L, L))
    a = a + a.T
    same = agreement(a, a, cmap)
    assert same == {"spearman": 1.0, "top_L5_shared": 1.0}
    assert agreement(a, -a, cmap)["spearman"] == -1.0 and agreement(a, -a, cmap)["top_L5_shared"] == 0.0
    # held-out rows where columns 0 and 10 are copies, everything else random
    rows = rng.integers(0, 20, (400, L))
    rows[:, 10] = rows[:, 0]
    data = SimpleNamespace(heldout_rows=rows, weights=np.ones(400), heldout=np.ones(400, bool))
    right = np.zeros((L, L))
    right[0, 10] = right[10, 0] = 1.0
    wrong = np.zeros((L, L))
    wrong[3, 15] = wrong[15, 3] = 1.0
    got = structure_free_choice({"truth": wrong, "jacobian_rows": right}, data)
    assert got["chosen"] == "jacobian_rows" and got["scores"]["jacobian_rows"] > got["scores"]["truth"]


def test_ceiling_for_some_families_keeps_the_others(tmp_path, monkeypatch):
    """`family_ceiling --families X` re-runs X only: the file keeps every other family's entry as it
    was, X's is replaced, a new family is appended (the stop that added two anchors relied on it)."""
    import json

    import benchmarks.family_ceiling as fc

    out = tmp_path / "ceiling.json"
    out.write_text(json.dumps({"families": {"A": {"n": 1, "rows": {}}, "B": {"n": 2, "rows": {}}}}))
    monkeypatch.setattr(fc, "family_rows", lambda name, data, bootstrap: {"n": 10, "rows": {}, "name": name})
    fc.main(["--families", "B", "C", "--out", str(out)])
    fams = json.loads(out.read_text())["families"]
    assert list(fams) == ["A", "B", "C"]
    assert fams["A"] == {"n": 1, "rows": {}} and fams["B"]["name"] == "B" and fams["C"]["name"] == "C"
