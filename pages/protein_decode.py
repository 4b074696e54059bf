"""Protein decode: step through a protein (or protein-family) decode, with entropy, estimated and true MI;
for a family backbone, the structure's contacts on the maps and the map averaged over natural rows."""

import numpy as np
import streamlit as st
import torch

from mi_viz.core import strict_json
from mi_viz.core.plots import mi_map_figure, offline_html
from mi_viz.core.samplers import Trace
from mi_viz.domains.family.alignment import AlignmentError
from mi_viz.domains.family.structure import state_precision
from mi_viz.domains.protein.alphabet import MASK, SequenceError, clean, encode
from mi_viz.domains.protein.drawing import entropy_figure, mi_row_figure, track_figure
from mi_viz.domains.protein.fasta import parse_fasta
from pages._protein import (
    PROTEIN_LENGTH_CAP,
    averaged_map_view,
    backbone_domain,
    protein_backbones,
    protein_estimated_mi,
    protein_gt_cost,
    protein_model_or_error,
    protein_trace_json,
    protein_viewer_payload,
)
from pages._shared import GT_SECONDS_CAP, ground_truth_for, has_ground_truth, through_app
from pages._widgets import instant_view, mount_viewer, sampler_picker, step_controls

through_app()
st.title("Protein decode")
UPLOAD_MB = 1  # a prompt is at most PROTEIN_LENGTH_CAP residues: a megabyte is plenty


def read_family_prompt(dom):
    """A family's prompt: all masked at the alignment's width, the structure's own sequence with a
    share of its columns masked, or a row of the user's ('_' = masked)."""
    L = dom.width
    modes = ["All masked: a new family member"]
    if dom.contact_map is not None:
        modes.append("The structure's sequence, a share of its columns masked")
    modes.append("A row of your own ('_' = masked)")
    mode = st.radio("Start from", modes, key="pdec_fmode")
    if mode.startswith("All masked"):
        return "_" * L, f"unconditional, {L} columns"
    if mode.startswith("The structure"):
        share = st.slider("share masked", 0.05, 1.0, 0.3, 0.05, key="pdec_fshare")
        seed = st.number_input("mask seed", 0, 10_000, 0, key="pdec_fseed")
        g = np.random.default_rng(int(seed))
        row = list(dom.contact_map.sequence)
        for i in g.choice(L, max(1, round(share * L)), replace=False):
            row[i] = "_"
        return "".join(row), f"{dom.contact_map.source.get('structure', 'the structure')}, {share:.0%} masked"
    text = st.text_area(
        f"A row of {L} columns: the 20 amino acids, '-' for a gap, '_' where a symbol is to be generated",
        key="pdec_frow",
        height=110,
    )
    return text, "pasted row"


def validate_family(text: str, dom):
    if not text or not text.strip():
        return None, f"The row is empty: type {dom.width} columns, '_' where symbols are to be generated."
    p = "".join(text.split())
    try:
        dom.encode([p])
    except AlignmentError as e:
        return None, f"Invalid row: {e}."
    if "_" not in p:
        return None, "The row has no masked column: put '_' where symbols are to be generated."
    return p, None


def read_prompt():
    """The prompt ('_' = masked) from the sidebar, or None after a message in the main area."""
    mode = st.radio("Start from", ["All masked, a length", "A prompt (residues kept, '_' generated)"], key="pdec_mode")
    if mode.startswith("All masked"):
        n = st.number_input(f"Length (1..{PROTEIN_LENGTH_CAP})", 1, PROTEIN_LENGTH_CAP, 80, key="pdec_len")
        return "_" * int(n), f"unconditional, length {int(n)}"
    text = st.text_area(
        "Prompt: a sequence with '_' where residues are to be generated (FASTA works too)",
        key="pdec_prompt",
        height=110,
        placeholder="MKT__LVA___GLL__________RS",
    )
    up = st.file_uploader(
        f"... or a FASTA file (its first record; at most {UPLOAD_MB} MB)",
        type=["fasta", "fa", "faa", "txt"],
        key="pdec_file",
        max_upload_size=UPLOAD_MB,
    )
    source = "pasted prompt"
    if up is not None:
        if up.size > UPLOAD_MB * 2**20:
            return None, f"{up.name} is larger than {UPLOAD_MB} MB: upload a FASTA of the one prompt."
        text, source = up.getvalue().decode("utf-8", errors="replace"), f"{up.name}, first record"
    return text, source


def validate(text: str):
    """text -> a clean prompt, or an error message naming the problem."""
    if not text or not text.strip():
        return None, "The prompt is empty: type a sequence with '_' for the positions to generate, or pick a length."
    try:
        if text.lstrip().startswith(">"):
            text = parse_fasta(text)[0][1]
        p = clean(text)
        if len(p) > PROTEIN_LENGTH_CAP:
            return None, f"The prompt has {len(p)} positions; this page decodes up to {PROTEIN_LENGTH_CAP}."
        encode(p, allow_mask=True)
    except SequenceError as e:
        return None, f"Invalid prompt: {e}."
    if "_" not in p:
        return None, "The prompt has no masked position: put '_' where residues are to be generated."
    return p, None


backbones = protein_backbones()
with st.sidebar:
    st.subheader("Backbone")
    label = st.selectbox("Protein backbone", list(backbones), key="pdec_backbone")
    if "ESM-C 300M" not in backbones:
        st.caption(
            "ESM-C 300M is not on this machine: `python -m mi_viz fetch-esmc` downloads its weights "
            "(or set MI_VIZ_ESMC_300M to the .pth file)."
        )
    st.subheader("Input")
    spec = backbones[label]
    try:
        DOM = backbone_domain(spec)
    except ValueError as e:  # a family checkpoint whose contact map is unreadable
        st.error(f"Cannot use this backbone: {e}")
        st.stop()
    is_family = DOM.name == "family"
    raw, source = read_family_prompt(DOM) if is_family else read_prompt()
    st.subheader("Sampler")
loaded = protein_model_or_error(spec)
if loaded is None:
    st.stop()
model, head = loaded
with st.sidebar:
    cfg = sampler_picker(
        "pdec",
        has_head=head is not None,
        default="mi" if head is not None else "eb",
        temperature=1.0,
        domain_defaults=DOM.sampler_defaults,
    )
    eps = st.select_slider("ground-truth pruning eps", [1e-4, 1e-3, 1e-2], value=1e-3, key="pdec_eps")
if raw is None:  # an upload refused before it was read (its size)
    prompt, problem = None, source
else:
    prompt, problem = validate_family(raw, DOM) if is_family else validate(raw)
if problem:
    st.error(problem)
    st.stop()
if head is None:
    st.info(
        "No MI head for this backbone yet: the estimated MI map and the 'mi' sampler are off; the exact "
        "ground truth is available on demand below."
    )
head_path = str(DOM.default_head()) if head is not None else None


def decode(tokens) -> str:
    return DOM.decode(torch.tensor([list(tokens)]))[0]


if cfg.name == "mi-gt":
    st.info("mi-gt runs the exact ground truth at every step (an oracle): the first decode takes a while.")
trace = Trace.from_json(protein_trace_json(prompt, cfg.to_dict(), spec, head_path))
n_steps = len(trace.steps)
if instant_view("pdec_view", "position"):
    payload = protein_viewer_payload(prompt, cfg.to_dict(), spec, head_path)

    def gt_for(tokens, compute):
        if compute or has_ground_truth(tokens, eps, "protein", spec):
            return ground_truth_for(tokens, eps, domain="protein", spec=spec)
        return None

    mount_viewer(
        payload,
        "pdec_viewer",
        tokens_of=lambda t: trace.steps[t].tokens,
        gt_for=gt_for,
        cost_for=lambda tokens: protein_gt_cost(tokens, spec, eps),
        caption=f"{source} · {label} · {cfg.label()} · {n_steps} passes · estimated maps from the same passes",
        export_name="protein_decode",
    )
    if is_family:
        with st.expander("This family's MI averaged over natural rows, beside the structure's contacts"):
            averaged_map_view(DOM, "pdec_avg")
    st.stop()
t = step_controls("pdec", n_steps, (prompt, cfg.label(), cfg.temperature, cfg.seed, spec))
rec = trace.steps[t]
L = len(rec.tokens)
masked = np.array(rec.masked)
before = decode(rec.tokens)
after = decode(trace.tokens_at(t + 1))
m = st.columns(5)
m[0].metric("Step", f"{t + 1} / {n_steps}")
m[1].metric("Passes so far", f"{rec.passes}" + (f" (+{rec.oracle_passes} oracle)" if rec.oracle_passes else ""))
m[2].metric("Residues this step", len(rec.selected))
m[3].metric("Still masked after it", int((np.array(trace.tokens_at(t + 1)) == MASK).sum()))
m[4].metric("Length", L)
st.caption(
    f"{source} · {label} · {cfg.label()}"
    + (f" · temperature {cfg.temperature:g}, seed {cfg.seed}" if cfg.temperature > 0 else "")
    + " · orange: the residues chosen at this step · grey: still masked"
)

# the focus position (its MI row below): a click on a masked residue of the track picks it
click = st.session_state.get("pdec_track")
points = [p for p in (click.selection.points if click else []) if "customdata" in p]
clicked = int(points[0]["customdata"]) if points else None


def masked_here(i) -> bool:
    """i is a still-masked position of this state (not one of another sequence, nor decoded)."""
    return i is not None and i < L and rec.masked[i]


if clicked is not None and clicked != st.session_state.get("pdec_last_click"):
    st.session_state.pdec_last_click = clicked
    if masked_here(clicked):
        st.session_state.pdec_focus = clicked
focus_now = st.session_state.get("pdec_focus") if masked_here(st.session_state.get("pdec_focus")) else None
st.plotly_chart(
    track_figure(
        after,
        selected=rec.selected,
        focus=focus_now,
        title=f"Sequence after step {t + 1} (click a masked residue to draw its MI row)",
    ),
    key="pdec_track",
    on_select="rerun",
    selection_mode="points",
    config={"displayModeBar": False},
)
H = np.array(rec.entropy)
st.plotly_chart(entropy_figure(H, masked, rec.selected), key=f"pent_{t}", config={"displayModeBar": False})

tokens = tuple(rec.tokens)
est = protein_estimated_mi(tokens, spec, head_path) if head is not None else None
labels = [f"{i + 1}{before[i] if before[i] != '_' else ''}" for i in range(L)]
gt = None
cost = protein_gt_cost(tokens, spec, eps)
cached = has_ground_truth(tokens, eps, "protein", spec)
if cached:
    gt = ground_truth_for(tokens, eps, domain="protein", spec=spec)
else:
    over = cost["seconds"] > GT_SECONDS_CAP
    msg = (
        f"Ground truth for this state: {cost['total_passes']:,} passes, about {cost['seconds']:.0f} s on this machine "
        f"({int(masked.sum())} masked positions; one pass per position and kept value)."
    )
    if over:
        st.warning(
            msg + f" That is over this page's cap of {GT_SECONDS_CAP:.0f} s: step further into the decode "
            "(fewer masked positions) or use `python -m mi_viz mi-report protein` offline."
        )
    elif st.button("Compute the ground-truth MI", key="pdec_gt", help=msg):
        gt = ground_truth_for(tokens, eps, domain="protein", spec=spec)
    else:
        st.caption(msg)
scale = st.select_slider(
    "Colour scale of the MI maps (nats)",
    ["per step", 0.01, 0.03, 0.1, 0.3, 1.0],
    value=0.03,  # this backbone's pair MI: mostly 0.004-0.015 nats, rarely above 0.05 (docs/results-protein.md)
    key="pdec_scale",
    help="A fixed top keeps colours comparable across steps; 'per step' "
    "stretches each step's maps to their own largest value (shared by the maps of a step).",
)
zmax = (
    scale
    if scale != "per step"
    else max([float(x.max()) for x in (est, gt["mi"] if gt else None) if x is not None] + [1e-6])
)
cmap = DOM.contact_map if is_family else None
dots = None
if cmap is not None:
    if st.toggle("Show the structure's contacts on the maps", value=True, key="pdec_dots"):
        dots = cmap.contacts()
    parts = []
    for name, mp in (("estimated", est), ("ground truth", gt["mi"] if gt else None)):
        prec = state_precision(mp, masked, cmap) if mp is not None else None
        if prec is not None:
            parts.append(f"{name} {prec[0]:.2f} (top {prec[1]} pairs)")
    st.caption(
        "Red circles: residue contacts in "
        + cmap.source.get("structure", "the structure")
        + " (C-beta < 8 A, at least 6 columns apart). Contact precision of this state's map among its masked "
        "columns: " + ("; ".join(parts) if parts else "no scored pair is masked")
    )
cols = st.columns(2) if est is not None else [st.container(), st.container()]
with cols[0]:
    if est is not None:
        st.plotly_chart(
            mi_map_figure(est, masked, labels, zmax, "Estimated MI (head, same pass)", batch=rec.selected, dots=dots),
            key=f"pest_{t}",
            config={"displayModeBar": False},
        )
with cols[1 if est is not None else 0]:
    if gt is not None:
        st.plotly_chart(
            mi_map_figure(
                gt["mi"],
                masked,
                labels,
                zmax,
                f"Ground-truth MI ({gt['passes']:,} passes, {gt['seconds']:.1f} s)",
                batch=rec.selected,
                dots=dots,
            ),
            key=f"pgt_{t}",
            config={"displayModeBar": False},
        )
        st.caption(
            f"max pruned mass per position {gt['dropped']:.2e}; max asymmetry {float(gt['asym'].max()):.3f} nats"
        )
if est is not None and gt is not None:
    st.plotly_chart(
        mi_map_figure(
            est - gt["mi"], masked, labels, None, "Estimated minus true MI", diverging=True, batch=rec.selected
        ),
        key=f"pdiff_{t}",
        config={"displayModeBar": False},
    )

positions = [i for i in range(L) if masked[i]]
if positions and (est is not None or gt is not None):
    src = gt["mi"] if gt is not None else est
    best = int(np.argmax(src.sum(1))) if src.sum() > 0 else positions[0]
    if st.session_state.get("pdec_focus") not in positions:  # the user's position while it stays masked
        st.session_state.pdec_focus = best if best in positions else positions[0]
    st.session_state.pdec_focus_sel = st.session_state.pdec_focus

    def _pick():
        st.session_state.pdec_focus = st.session_state.pdec_focus_sel

    focus = st.selectbox(
        "Position whose MI row is drawn (or click the track)",
        positions,
        format_func=lambda i: f"{i + 1}",
        key="pdec_focus_sel",
        on_change=_pick,
    )
    rows = {
        name: v[focus] for name, v in (("estimated", est), ("ground truth", gt["mi"] if gt else None)) if v is not None
    }
    st.plotly_chart(mi_row_figure(rows, focus, masked, zmax=zmax), key=f"prow_{t}", config={"displayModeBar": False})

if cmap is not None:
    with st.expander("This family's MI averaged over natural rows, beside the structure's contacts", expanded=False):
        averaged_map_view(DOM, "pdec_avg")

with st.expander("Export"):
    final = decode(trace.final)
    st.download_button(
        "Sequence (FASTA)",
        f">mi-viz {cfg.label()} passes={trace.steps[-1].passes}\n{final}\n",
        file_name="protein.fasta",
        mime="text/plain",
        key="pdec_fasta",
    )
    st.download_button(
        "Trace (JSON)", trace.to_json(), file_name="protein_trace.json", mime="application/json", key="pdec_trace"
    )

    def view_html() -> str:
        """Built on click, not every rerun; plotly.js embedded, so the file opens offline."""
        figs = [track_figure(after, selected=rec.selected, title=f"Sequence after step {t + 1}")]
        figs.append(entropy_figure(H, masked, rec.selected))
        figs += [
            mi_map_figure(m, masked, labels, zmax, name, batch=rec.selected)
            for name, m in (("Estimated MI", est), ("Ground-truth MI", gt["mi"] if gt else None))
            if m is not None
        ]
        return offline_html(figs, f"mi-viz: protein step {t + 1}")

    st.download_button(
        "Current view (HTML, opens offline)",
        view_html,
        file_name=f"protein_step{t + 1}.html",
        mime="text/html",
        key="pdec_html",
    )
    st.code(
        strict_json.dumps(
            {"step": t + 1, "selected": [i + 1 for i in rec.selected], "residues": [after[i] for i in rec.selected]}
        ),
        language="json",
    )
