"""The protein pages' models and inputs: the backbones (the small ESM-C, ESM-C 300M when present,
each shipped family and the ones trained here), cached decodes, the head's maps and the cost of
a ground truth, the viewer's payload."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import streamlit as st
import torch

from mi_viz.core.checkpoints import CheckpointError
from mi_viz.core.estimator import check_head_fits, load_head
from mi_viz.core.reading import read_state
from mi_viz.core.samplers import SAMPLERS, SamplerConfig, Trace, decode
from mi_viz.domains import get_domain
from pages._shared import LOAD_COUNT, ROOT, _estimates_for, _lock

PROTEIN_LENGTH_CAP = 300  # the longest protein the app decodes (a decode is L passes)

FAMILY = "family:"  # a backbone spec "family:PF00595" (a shipped family) or "family:PATH" (one trained here)

APP_FAMILIES = ROOT / "runs" / "app_families"  # where the app's own family trainings go (not tracked)


def backbone_domain(spec: str):
    """The domain a protein-page backbone belongs to: a family's (fixed width, gap, contacts) or proteins'."""
    if spec.startswith(FAMILY):
        from mi_viz.domains.family import family_domain

        return family_domain(spec[len(FAMILY) :])
    return get_domain("protein")


@st.cache_resource(show_spinner="Loading the protein backbone ...")
def get_protein_model(spec: str):
    with _lock:
        LOAD_COUNT["protein"] = LOAD_COUNT.get("protein", 0) + 1
        if spec.startswith(FAMILY):
            return backbone_domain(spec).load_model().eval()
        return get_domain("protein").load_model(spec).eval()


@st.cache_resource(show_spinner="Loading the protein MI head ...")
def get_protein_head(path: str):
    return load_head(path)


def protein_backbones() -> dict[str, str]:
    """The backbones a user can pick, by label -> spec: the shipped small ESM-C always, ESM-C
    300M when its weights are on this machine (MI_VIZ_ESMC_300M, a .pth path, or the local
    Hugging Face cache; never downloaded by the app)."""
    from mi_viz.domains.family import shipped_families
    from mi_viz.domains.protein.backbone import BackboneUnavailable, esmc_300m_weights

    opts = {"small ESM-C (shipped, trained here)": "protein_mdm"}
    env = os.environ.get("MI_VIZ_ESMC_300M")
    if env and Path(env).exists():
        opts["ESM-C 300M"] = env
    else:
        try:
            esmc_300m_weights()
            opts["ESM-C 300M"] = "esmc_300m"
        except BackboneUnavailable:
            pass
    for f in shipped_families():
        opts[f"family {f} ({FAMILY_NAMES.get(f, 'Pfam')})"] = FAMILY + f
    for p in sorted(APP_FAMILIES.glob("family_*.json")):
        if not p.name.endswith(("_last.json", "_mi_head.json")):
            opts[f"family {p.stem.removeprefix('family_')} (trained here in the app)"] = FAMILY + str(p.with_suffix(""))
    return opts


def family_alignment(dom) -> Path | None:
    """The alignment a family backbone was trained on, where this machine has it: MI_VIZ_FAMILY_DATA/
    NAME/NAME.align.80.fasta, the project's shared data beside the checkout, or the file the app kept
    when it trained the family; None when absent (the page then asks for an upload)."""
    names = [f"{dom.family}/{dom.family}.align.80.fasta"]
    roots = [Path(os.environ["MI_VIZ_FAMILY_DATA"])] if os.environ.get("MI_VIZ_FAMILY_DATA") else []
    roots.append(ROOT.parent / "shared" / "data" / "protein_families")
    for r in roots:
        for n in names:
            if (r / n).exists():
                return r / n
    kept = APP_FAMILIES / f"{dom.family}.fasta"
    return kept if kept.exists() else None


FAMILY_NAMES = {
    "PF00072": "response regulator receiver",
    "PF00076": "RNA recognition motif",
    "PF00595": "PDZ",
    "PF00085": "thioredoxin",
    "PF00018": "SH3",
}


def protein_model_or_error(spec: str):
    """(model, head or None) for a protein backbone, or None after a clear message."""
    from mi_viz.domains.protein.backbone import BackboneUnavailable

    try:
        model = get_protein_model(spec)
    except (CheckpointError, BackboneUnavailable, ValueError) as e:  # ValueError: a family's contact map
        st.error(f"Cannot load the protein backbone: {e}")
        st.info("Train the small one with `python training/train_protein_mdm.py` (README, Reproduce).")
        return None
    head = None
    if spec.startswith(FAMILY):
        path = backbone_domain(spec).default_head()
    else:
        path = get_domain("protein").default_head() if spec == "protein_mdm" else None
    if path is not None:
        try:
            head, _ = get_protein_head(str(path))
            check_head_fits(head, model)
        except CheckpointError as e:
            st.warning(f"Protein MI head not available ({e}); estimated MI and the 'mi' sampler are off.")
            head = None
    return model, head


@st.cache_data(show_spinner="Decoding ...", max_entries=32)
def protein_trace_json(prompt: str, cfg: dict, spec: str, head_path: str | None) -> str:
    model = get_protein_model(spec)
    head = get_protein_head(head_path)[0] if head_path and SAMPLERS[cfg["name"]].needs_head else None
    x = backbone_domain(spec).encode([prompt])
    res = decode(model, x, SamplerConfig.from_dict(cfg), head=head, record=True)
    return res.traces[0].to_json()


@st.cache_data(max_entries=256)
def protein_estimated_mi(tokens: tuple, spec: str, head_path: str) -> np.ndarray:
    model = get_protein_model(spec)
    head, _ = get_protein_head(head_path)
    with torch.inference_mode():
        return read_state(model, torch.tensor([tokens]), head).mi[0].numpy()


@st.cache_data(max_entries=256)
def protein_gt_cost(tokens: tuple, spec: str, eps: float) -> dict:
    from mi_viz.core.mi import ground_truth_cost

    with torch.inference_mode():
        return ground_truth_cost(get_protein_model(spec), torch.tensor([tokens]), eps=eps, chunk=128)


@st.cache_data(show_spinner="Packing the decode for the browser ...", max_entries=32)
def protein_viewer_payload(prompt: str, cfg: dict, spec: str, head_path: str | None) -> dict:
    """A protein (or family) decode packed once for the in-browser viewer (mi_viz.core.viewer)."""
    from mi_viz.core.viewer import viewer_payload

    trace = Trace.from_json(protein_trace_json(prompt, cfg, spec, head_path))
    dom, model = backbone_domain(spec), get_protein_model(spec)
    head = get_protein_head(head_path)[0] if head_path else None
    L = len(trace.initial)
    cmap = getattr(dom, "contact_map", None)
    return viewer_payload(
        trace,
        kind="track",
        labels=[dom.position_name(i, L) if dom.name == "family" else f"position {i + 1}" for i in range(L)],
        symbols=list(dom.value_names),
        value_tokens=model.value_tokens.tolist(),
        mask_id=model.mask_id,
        est=_estimates_for(trace, model, head),
        contacts=cmap.contacts() if cmap is not None else None,
    )


AVERAGED_MAPS = {  # the contact report's maps (results/family/NAME/contacts.npz), by what a user reads
    "the backbone's conditional MI (APC)": "truth_apc",
    "the MI head (APC)": "head_apc",
    "MIp (alignment MI, APC)": "mip",
    "Potts couplings (plmDCA-style, APC)": "potts",
}


def averaged_map_view(dom, key: str) -> None:
    """A family's committed averaged maps above its structure's contacts (the classic comparison),
    with a radio for which score; a message (and the command) when no report is committed."""
    from mi_viz.domains.family.drawing import contact_map_figure

    cmap = dom.contact_map
    avg_file = ROOT / "results" / "family" / dom.family / "contacts.npz"
    if cmap is None:
        st.info("This backbone ships no structure: train it with a PDB file to see contacts.")
        return
    if not avg_file.exists():
        st.info(
            f"No committed contact report for {dom.family}: `python -m mi_viz contacts --backbone "
            f"{dom.checkpoint} --msa ALIGNMENT --out results/family/{dom.family}/contacts.json` makes one."
        )
        return
    z = np.load(avg_file)
    kind = st.radio("Score", [k for k, v in AVERAGED_MAPS.items() if v in z.files], horizontal=True, key=key)
    st.plotly_chart(
        contact_map_figure(
            z[AVERAGED_MAPS[kind]], cmap, f"{dom.family}: {kind} (above) vs contacts (below)", top=cmap.n_mapped // 5
        ),
        key=f"{key}_map",
        config={"displayModeBar": False},
    )
    st.caption(
        "Averaged over held-out natural rows with 10 % of their columns masked (docs/results-family.md); "
        f"circles: the top L/5 = {cmap.n_mapped // 5} scored pairs (green: a contact, red: not)."
    )
