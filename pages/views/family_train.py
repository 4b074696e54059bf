"""The families page's third tab: a family model trained here on your own alignment (and a
structure, for its contact map), within a stated budget, with progress; the trained family then
joins every protein page's backbone picker and gets the contact reading on the first tab."""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import streamlit as st

from mi_viz.core.errors import UserError
from mi_viz.domains.family import forget_families
from mi_viz.domains.family.alignment import AlignmentError, parse_alignment
from mi_viz.domains.family.backbone import FamilyMDMConfig
from mi_viz.domains.family.pipelines import read_family_inputs, train_from_inputs
from mi_viz.domains.family.train import TrainFamilyConfig

from ..kit.models import forget_models
from .family import (
    MAX_COLS_APP,
    MAX_MB,
    MAX_ROWS_APP,
)
from .protein_backbones import APP_FAMILIES


def train_tab() -> None:
    """Train a family backbone on an uploaded alignment (and structure) in the foreground, with a
    progress bar; every file is checked before anything is written to runs/app_families/."""
    if "fam_trained" in st.session_state:  # the last training's outcome, kept across its rerun
        kind, text = st.session_state.pop("fam_trained")
        (st.success if kind == "success" else st.warning)(text)
    if st.session_state.get("fam_train_stop"):  # the rerun a Stop click made
        st.info("Training stopped: Train resumes it from its last evaluation (its steps so far are kept there).")
    uploads, name, minutes = upload_form()
    if not st.button("Train", key="fam_train", type="primary"):
        return
    inputs = checked_inputs(*uploads, name)
    if inputs is not None:
        train_with_progress(inputs, name, minutes)


def upload_form() -> tuple[tuple[Any, Any, Any], str, float]:
    """The three uploads (alignment, structure, column map), the family's name and the minutes."""
    st.markdown(
        f"Upload an alignment (aligned FASTA: every row the same width, '-' for gaps, upper case) of at most "
        f"**{MAX_ROWS_APP:,} rows x {MAX_COLS_APP} columns** ({MAX_MB} MB), and optionally a structure of one "
        "member (PDB) with its column map (an indices file: column, residue, index, 'number chain'; without "
        "it the structure's sequence is aligned to the alignment's profile here). Training runs on this "
        "machine's CPU in the foreground; leaving the page pauses it, and the same button resumes it. "
        "Larger alignments: `python -m mi_viz train-family` (README)."
    )
    c1, c2, c3 = st.columns(3)
    up_msa = c1.file_uploader(
        "Alignment (FASTA)", type=["fasta", "fa", "afa", "txt", "aln"], key="fam_up_msa", max_upload_size=MAX_MB
    )
    up_pdb = c2.file_uploader(
        "Structure (PDB, optional)", type=["pdb", "ent"], key="fam_up_pdb", max_upload_size=MAX_MB
    )
    up_map = c3.file_uploader(
        "Column map (optional)", type=["indices", "tsv", "txt"], key="fam_up_map", max_upload_size=MAX_MB
    )
    name = st.text_input("Name", "my_family", key="fam_name", help="letters, digits, '-' and '_' (up to 40)")
    minutes = st.select_slider(
        "Training minutes (the default run is 28; a quarter of a minute tries a toy alignment)",
        [0.25, 0.5, *range(1, 31)],
        5,
        key="fam_minutes",
        help="The training's wall-clock budget on this machine; the run stops and saves at its end.",
    )
    return (up_msa, up_pdb, up_map), name, float(minutes)


def checked_inputs(up_msa, up_pdb, up_map, name: str):
    """The uploads read and checked in a temporary folder (nothing is kept if they fail: the error is
    said and None returned); the alignment then copied beside where its model will be written."""
    problem = None
    if up_msa is None:
        st.error("Upload an alignment first.")
        return None
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,40}", name or ""):
        problem = "The name may hold letters, digits, '-' and '_' only (up to 40)."
    elif any(f is not None and f.size > MAX_MB * 2**20 for f in (up_msa, up_pdb, up_map)):
        problem = f"A file is larger than {MAX_MB} MB."
    if problem:
        st.error(problem)
        return None
    with tempfile.TemporaryDirectory() as tmp:
        msa = Path(tmp) / f"{name}.fasta"
        msa.write_bytes(up_msa.getvalue())
        pdb = idx = None
        if up_pdb is not None:
            pdb = Path(tmp) / f"{name}.pdb"
            pdb.write_bytes(up_pdb.getvalue())
        if up_map is not None:
            idx = Path(tmp) / f"{name}.indices"
            idx.write_bytes(up_map.getvalue())
        try:
            aln = parse_alignment(up_msa.getvalue().decode("utf-8", errors="replace"), up_msa.name)
            if len(aln) > MAX_ROWS_APP or aln.width > MAX_COLS_APP:
                raise AlignmentError(
                    f"it has {len(aln):,} rows x {aln.width} columns; the app trains on at most "
                    f"{MAX_ROWS_APP:,} x {MAX_COLS_APP} (use `python -m mi_viz train-family` for more)"
                )
            inputs = read_family_inputs(msa, pdb, idx)
        except AlignmentError as e:
            st.error(f"Invalid alignment: {e}")
            return None
        except UserError as e:
            st.error(f"The structure cannot be used: {e}")
            return None
        APP_FAMILIES.mkdir(parents=True, exist_ok=True)
        shutil.copy(
            msa, APP_FAMILIES / msa.name
        )  # the user's alignment, kept beside the model (its sweeps score on it)
    return inputs


def train_with_progress(inputs, name: str, minutes: float) -> None:
    """The training itself, its bar moving with each step and held-out evaluation; its outcome said
    after the rerun that puts the new family in the pickers (a warning when it does not beat the
    alignment's column profile)."""
    st.button("Stop the training", key="fam_train_stop", help="Train again resumes it from its last evaluation.")
    bar = st.progress(0.0, text="training: the first steps ...")
    eval_every = TrainFamilyConfig().eval_every

    def cb(step, total, info):
        held = (
            f" · held-out pseudo-perplexity {info['heldout_pseudo_ppl_15']:.2f} (the column profile: "
            f"{info['profile_pseudo_ppl_15']:.2f})"
            if "heldout_pseudo_ppl_15" in info
            else f" · first held-out evaluation at step {eval_every}"
        )
        bar.progress(
            min(1.0, info["fraction"]),
            text=f"training: step {step} · {info['wall_seconds']:.0f} s of {minutes:g} min" + held,
        )

    out = APP_FAMILIES / f"family_{name}"
    try:
        res = train_from_inputs(inputs, out, name, TrainFamilyConfig(max_minutes=float(minutes)), FamilyMDMConfig(), cb)
    except (UserError, OSError) as e:  # a paused run of another alignment; a full disk
        st.error(f"Training failed: {e}")
        return
    bar.empty()
    ppl, prof = res.get("heldout_pseudo_ppl_15", float("nan")), res.get("profile_pseudo_ppl_15", float("nan"))
    msg = (
        f"Trained {name}: {res['step']} steps, held-out pseudo-perplexity {ppl:.2f} against the column "
        f"profile's {prof:.2f}."
    )
    if res["beats_profile"]:
        done = ("success", msg + f" Pick 'family {name}' above (its contacts) or on Protein decode.")
    else:
        done = ("warning", msg + " It does not yet predict held-out rows better than the alignment's own column "
                "frequencies: its MI maps will mean little. Train longer (the button resumes this run), or train on "
                "the command line with more minutes (`python -m mi_viz train-family`).")  # fmt: skip
    forget_families()
    forget_models()  # a family retrained under its old name is read afresh
    st.session_state["fam_trained"] = done  # said after the rerun that puts the new family in the picker
    st.rerun()
