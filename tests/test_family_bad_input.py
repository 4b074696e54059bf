"""The family pipeline's bad inputs (issue 41): each is refused with a message that names the
problem, before anything is written, through the library and through the CLI."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest
from test_family import write_pdb

from mi_viz.cli import main as cli_main
from mi_viz.domains.family.alignment import GAP, SYMBOLS, AlignmentError
from mi_viz.domains.family.pipelines import read_family_inputs
from mi_viz.domains.family.structure import StructureError

WIDTH = 16


def write_alignment(path, rows: np.ndarray) -> None:
    path.write_text("".join(f">r{k}\n{''.join(SYMBOLS[v] for v in row)}\n" for k, row in enumerate(rows)))


@pytest.fixture
def family(tmp_path):
    """60 distinct rows of 16 columns, a 14-residue structure and its column map (columns 1..14)."""
    g = np.random.default_rng(0)
    write_alignment(tmp_path / "a.fasta", g.integers(0, 20, (60, WIDTH)))
    write_pdb(tmp_path / "s.pdb", [(10.0 * k, 0.0, 0.0) for k in range(14)])
    (tmp_path / "s.indices").write_text("".join(f"{c}\tA\t{c}\t{c} A\t0\n" for c in range(1, 15)))
    return tmp_path


def test_good_inputs_read(family):
    x = read_family_inputs(family / "a.fasta", family / "s.pdb", family / "s.indices")
    assert x.contacts is not None and x.contacts.n_mapped == 14


def test_a_structure_without_c_alpha(family):
    """Every residue keeps an atom (its backbone N), none a C-alpha or C-beta."""
    pdb = (family / "s.pdb").read_text()
    (family / "s.pdb").write_text(pdb.replace("  CA  ", "  N   ").replace("  CB  ", "  N   "))
    with pytest.raises(StructureError, match="no residue with a C-alpha or C-beta"):
        read_family_inputs(family / "a.fasta", family / "s.pdb", family / "s.indices")


def test_a_chain_that_does_not_exist(family):
    with pytest.raises(StructureError, match=r"no chain 'Z' \(chains: A\)"):
        read_family_inputs(family / "a.fasta", family / "s.pdb", family / "s.indices", chain="Z")


def test_an_indices_file_outside_the_alignment(family):
    with open(family / "s.indices", "a") as f:
        f.write(f"{WIDTH + 4}\tA\t15\t15 A\t0\n")
    with pytest.raises(StructureError, match=f"maps column {WIDTH + 4} but the alignment has columns 0..{WIDTH - 1}"):
        read_family_inputs(family / "a.fasta", family / "s.pdb", family / "s.indices")


def test_an_alignment_of_one_row(family):
    (family / "one.fasta").write_text(">only\n" + "A" * WIDTH + "\n")
    with pytest.raises(AlignmentError, match="1 rows; a family model needs at least"):
        read_family_inputs(family / "one.fasta")


def test_an_all_gap_column(family):
    rows = np.random.default_rng(1).integers(0, 20, (60, WIDTH))
    rows[:, [3, 9]] = GAP
    write_alignment(family / "gaps.fasta", rows)
    with pytest.raises(AlignmentError, match="columns 4, 10 are gaps in every row"):
        read_family_inputs(family / "gaps.fasta")


def test_the_cli_refuses_before_writing(family, capsys):
    """`mi-viz train-family` on a bad structure: one line on stderr, exit 2, no checkpoint files."""
    out = family / "ckpt" / "family_TOY"
    code = cli_main(["train-family", "--msa", str(family / "a.fasta"), "--structure", str(family / "s.pdb"),
                     "--map", str(family / "s.indices"), "--chain", "Q", "--out", str(out)])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "no chain 'Q'" in err and "Traceback" not in err
    assert not out.parent.exists() or not any(out.parent.iterdir())


@pytest.mark.skipif(
    importlib.util.find_spec("arDCA") is None and not os.environ.get("CI"),
    reason="arDCA not installed (make anchors; make test installs it)",
)
def test_an_anchor_that_does_not_converge():
    """arDCA given one epoch cannot pass its own convergence test: AnchorError, no fit returned."""
    from mi_viz.domains.family.anchors import AnchorError, fit_ardca

    rows = np.random.default_rng(0).integers(0, 4, (50, 6))
    with pytest.raises(AnchorError, match="did not converge in 1 epochs"):
        fit_ardca(rows, np.ones(50), epochs=1)


def test_a_contact_reading_that_cannot_run_is_refused_by_name(monkeypatch):
    """Issue 49's bad input: a Jacobian budget below one row, a split without held-out rows; and an
    anchor whose package is absent is named in the report, not a traceback."""
    from dataclasses import replace

    from mi_viz.domains.family import reading
    from mi_viz.domains.family.alignment import Alignment
    from mi_viz.domains.family.anchors import AnchorUnavailable
    from mi_viz.domains.family.train import prepare

    rows = np.random.default_rng(0).integers(0, 20, (60, WIDTH))
    data = prepare(Alignment([f"r{k}" for k in range(60)], rows))
    for bad, says in ((reading.JacobianBudget(rows=0), "budget of 0 held-out rows"),
                      (reading.JacobianBudget(rows=-2), "budget of -2"),
                      (reading.JacobianBudget(consensus_masks=-1), "-1 consensus masks")):  # fmt: skip
        with pytest.raises(reading.ReadingError, match=says):
            bad.check(data)
    empty = replace(data, heldout=np.zeros_like(data.heldout))
    with pytest.raises(reading.ReadingError, match="no held-out rows"):
        reading.JacobianBudget().check(empty)

    def absent(name, *_):
        raise AnchorUnavailable(f"{name} is not installed: `make anchors`")

    monkeypatch.setattr(reading, "fit_anchor", absent)
    maps, about, missing = reading.anchors_for(data, ["ardca", "plmdca"], reading.AnchorSettings())
    assert maps == {} and about == {} and set(missing) == {"ardca", "plmdca"} and "make anchors" in missing["ardca"]


def test_a_family_kept_out_of_the_tree_names_its_make_target(tmp_path, monkeypatch):
    """SH3's weights are not shipped (the tree's size line): asking for it by name says how to build it,
    the pickers leave it out and list it as not built; once its weights are there it is a family again."""
    import shutil

    from mi_viz.core.checkpoints import CheckpointError
    from mi_viz.domains import family as F

    for name in ("family_PF00018", "family_PF00595"):  # a copy of the checkpoints folder: SH3's JSON, no weights
        for p in (F.CHECKPOINTS).glob(name + ".*"):
            shutil.copy(p, tmp_path / p.name)
    monkeypatch.setattr(F, "CHECKPOINTS", tmp_path)
    F.forget_families()
    (tmp_path / "family_PF00018.safetensors.xz").unlink(missing_ok=True)
    with pytest.raises(CheckpointError, match=r"make family-PF00018"):
        F.family_domain("PF00018")
    assert F.unbuilt_families() == ["PF00018"] and F.shipped_families() == ["PF00595"]
    shutil.copy(tmp_path / "family_PF00595.safetensors.xz", tmp_path / "family_PF00018.safetensors.xz")
    assert F.unbuilt_families() == [] and "PF00018" in F.shipped_families()
    F.forget_families()
