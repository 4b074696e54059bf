"""Protein families: a family backbone's MI against the structure's contacts, generation judged by
pair statistics, and a family model trained here on your own alignment."""

import json
import re

import numpy as np
import pandas as pd
import streamlit as st

from mi_viz.domains.family.alignment import AlignmentError, parse_alignment
from mi_viz.domains.family.structure import StructureError, contact_map
from pages._protein import APP_FAMILIES, FAMILY, averaged_map_view, backbone_domain, protein_backbones
from pages._shared import RESULTS, through_app

through_app()
st.title("Protein families")
st.markdown(
    "A family backbone is ESM-C's network trained on one family's alignment (the gap a symbol of its own). "
    "For a Potts model, two columns are conditionally dependent given the rest of a row exactly where they "
    "are coupled, and couplings follow residue contacts: so the backbone's **conditional MI**, averaged "
    "over natural rows, can be checked against a real structure. Decode a family member on the "
    "**Protein decode** page (pick a family backbone); compare samplers by pair statistics on "
    "**Protein comparison**."
)
families = {k: v for k, v in protein_backbones().items() if v.startswith(FAMILY)}
tab_contacts, tab_gen, tab_train = st.tabs(
    ["Contacts from MI", "Generation by pair statistics", "Train on your alignment"]
)

with tab_contacts:
    if not families:
        st.info("No family backbone on this machine yet: train one in the last tab, or `make families`.")
    else:
        label = st.selectbox("Family", list(families), key="fam_pick")
        try:
            dom = backbone_domain(families[label])
        except (ValueError, OSError) as e:
            st.error(f"Cannot read this family backbone: {e}")
            st.stop()
        folder = RESULTS / "family" / dom.family
        report = folder / "contacts.json"
        if dom.contact_map is None:
            st.info("This backbone ships no structure: train it with a PDB file to see contacts.")
        elif not report.exists():
            st.info(
                "No contact report for this backbone yet: `python -m mi_viz contacts --backbone "
                f"{dom.checkpoint} --msa ALIGNMENT --out {report}` makes one (minutes)."
            )
        else:
            r = json.loads(report.read_text())
            cmap = dom.contact_map
            rows = [
                {
                    "score": name,
                    "top-L/5 precision": r.get(f"precision_L5_{key}"),
                    "top-L/2": r.get(f"precision_L2_{key}"),
                    "AUROC": r.get(f"auroc_{key}"),
                }
                for name, key in (
                    ("the backbone's conditional MI (APC)", "truth"),
                    ("... without APC", "truth_raw"),
                    ("the MI head, one pass per row (APC)", "head"),
                    ("MIp: the alignment's MI (APC)", "mip"),
                    ("Potts couplings, plmDCA-style (APC)", "potts"),
                )
                if r.get(f"precision_L5_{key}") is not None
            ]
            st.dataframe(pd.DataFrame(rows), hide_index=True)
            st.caption(
                f"{r['rows']} held-out rows x {r['masks_per_row']} random masks of {r['frac']:.0%} of the columns; "
                f"L = {cmap.n_mapped} mapped columns of {cmap.source.get('structure')}; base rate "
                f"{r['base_rate']:.3f}; contacts: C-beta < 8 A, |i - j| >= 6 (`{report.relative_to(RESULTS.parent)}`)."
            )
            averaged_map_view(dom, "fam_kind")

with tab_gen:
    if families:
        label_g = st.selectbox("Family", list(families), key="fam_gen_pick")
        fam = backbone_domain(families[label_g]).family
        sweep = RESULTS / "family" / fam / "sweep.csv"
        if not sweep.exists():
            st.info(f"No committed pair-statistics sweep for {fam} (`make family-results` makes them).")
        else:
            from mi_viz.core.plots import sweep_figure

            rows = pd.read_csv(sweep).replace({np.nan: None}).to_dict("records")
            floor_file = RESULTS / "family" / fam / "floor.json"
            st.plotly_chart(
                sweep_figure(
                    {"": rows},
                    "pair_corr_pearson",
                    "Pearson of C_ij(a, b), generated vs held-out rows",
                    f"{fam}: pair correlations against passes",
                ),
                key="fam_sweep",
            )
            if floor_file.exists():
                fl = json.loads(floor_file.read_text())
                st.caption(
                    f"Natural vs natural (two halves of the held-out rows, {fl['n']} each): pair-correlation "
                    f"Pearson {fl['pair_corr_pearson']:.3f}. A generator's set is compared with all held-out rows."
                )
            cols = [
                c
                for c in ("sampler", "gamma", "lam", "k", "avg_passes", "pair_corr_pearson", "pair_corr_sd",
                          "single_freq_pearson", "mean_energy", "energy_w1", "nearest_identity_mean")
                if c in rows[0]
            ]  # fmt: skip
            st.dataframe(pd.DataFrame(rows)[cols], hide_index=True)

with tab_train:
    MAX_ROWS_APP, MAX_COLS_APP, MAX_MB = 5000, 200, 20
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
    minutes = st.slider("Training minutes (the default run is 28)", 1, 30, 5, key="fam_minutes")
    if st.button("Train", key="fam_train", type="primary"):
        problem = None
        if up_msa is None:
            problem = "Upload an alignment first."
        elif not re.fullmatch(r"[A-Za-z0-9_-]{1,40}", name or ""):
            problem = "The name may hold letters, digits, '-' and '_' only (up to 40)."
        elif any(f is not None and f.size > MAX_MB * 2**20 for f in (up_msa, up_pdb, up_map)):
            problem = f"A file is larger than {MAX_MB} MB."
        aln = None
        if problem is None:
            try:
                aln = parse_alignment(up_msa.getvalue().decode("utf-8", errors="replace"), up_msa.name)
                if len(aln) > MAX_ROWS_APP or aln.width > MAX_COLS_APP:
                    problem = (
                        f"The alignment has {len(aln):,} rows x {aln.width} columns; the app trains on at most "
                        f"{MAX_ROWS_APP:,} x {MAX_COLS_APP} (use `python -m mi_viz train-family` for more)."
                    )
            except AlignmentError as e:
                problem = f"Invalid alignment: {e}"
        out = APP_FAMILIES / f"family_{name}"
        if problem is None and up_pdb is not None:
            APP_FAMILIES.mkdir(parents=True, exist_ok=True)
            pdb = APP_FAMILIES / f"{name}.pdb"
            pdb.write_bytes(up_pdb.getvalue())
            idx = None
            if up_map is not None:
                idx = APP_FAMILIES / f"{name}.indices"
                idx.write_bytes(up_map.getvalue())
            try:
                from mi_viz.domains.family.train import prepare, profile_of

                data0 = prepare(aln)
                cmap = contact_map(pdb, aln.width, fi=profile_of(data0.train_rows, data0.weights[~data0.heldout]),
                                   indices=idx)  # fmt: skip
            except (StructureError, ValueError) as e:
                problem = f"The structure cannot be used: {e}"
        if problem:
            st.error(problem)
        else:
            from mi_viz.domains.family.backbone import FamilyMDMConfig
            from mi_viz.domains.family.train import TrainFamilyConfig, prepare, train_family

            APP_FAMILIES.mkdir(parents=True, exist_ok=True)
            (APP_FAMILIES / f"{name}.fasta").write_bytes(up_msa.getvalue())  # the user's file, kept beside the model
            data = prepare(aln)
            bar = st.progress(0.0, text="training ...")
            tc = TrainFamilyConfig(max_minutes=float(minutes))

            def cb(step, total, m):
                bar.progress(
                    min(1.0, step / total),
                    text=f"step {step}: held-out pseudo-perplexity {m['heldout_pseudo_ppl_15']:.2f} "
                    f"(the column profile: {m['profile_pseudo_ppl_15']:.2f})",
                )

            try:
                res = train_family(data, out, tc, FamilyMDMConfig(family=name), family=name, progress=cb)
            except (ValueError, OSError) as e:  # a paused run of another alignment, a full disk
                st.error(f"Training failed: {e}")
            else:
                if up_pdb is not None:
                    cmap.save(out.with_name(out.name + ".contacts.json"))
                bar.empty()
                st.success(
                    f"Trained {name}: {res['step']} steps, held-out pseudo-perplexity "
                    f"{res.get('heldout_pseudo_ppl_15', float('nan')):.2f} against the profile's "
                    f"{res.get('profile_pseudo_ppl_15', float('nan')):.2f}. Pick 'family {name}' on Protein decode."
                )
                from mi_viz.domains.family import forget_families

                forget_families()
                st.cache_resource.clear()
