"""Home: what the app shows, and which models are loaded."""

import pandas as pd
import streamlit as st

from mi_viz.core import strict_json
from mi_viz.core.checkpoints import CheckpointError, checkpoint_paths, read_meta
from pages.kit.models import LOAD_COUNT
from pages.kit.runtime import RESULTS, through_app
from pages.views import VIEWS

through_app()
for view in VIEWS.values():
    view.sidebar_extras()
st.title("mi-viz: pairwise dependence inside masked diffusion models")
st.markdown(
    """
A masked diffusion model (MDM) predicts a **marginal** for every masked position but never says
which positions **depend on each other**. mi-viz computes that dependence exactly (the pairwise
conditional mutual information, from the model's own conditionals), learns to predict the whole map
from the model's hidden states in **one pass** (a small head), and uses it to decode many positions
per pass only where they are nearly independent, or to go back over a pair written together.
"""
)
st.subheader("Start here")
START = (  # what to do first: (page, its link, icon, what it shows)
    ("pages/sudoku_decode.py", "Explore a dependency map", ":material/grid_on:",
     "A hard Sudoku mid-decode: entropy, the head's MI map and the exact one side by side; the rules of the game "
     "appear in the map."),
    ("pages/sudoku_comparison.py", "Compare samplers", ":material/compare_arrows:",
     "Sequential, top-k, EB, the MI rule, DEMASK and the revisers on one timeline, and the committed sweeps with "
     "their intervals."),
    ("pages/antibody_decode.py", "Your own antibody chain", ":material/vaccines:",
     "Paste a V domain: AntiBERTy or Sapiens infills a CDR, each design judged by both models, its IMGT regions "
     "drawn."),
    ("pages/protein_families.py", "Your own model or family", ":material/hub:",
     "Train a family model on your alignment and read its contacts, or load a masked LM folder on the protein "
     "pages."),
)  # fmt: skip
for col, (page, label, icon, what) in zip(st.columns(len(START)), START):
    col.page_link(page, label=label, icon=icon)
    col.caption(what)
st.markdown(
    """
* **Sudoku**: decode, sampler comparison, the MI estimator (how well each head matches the exact map).
* **Proteins**: the small ESM-C trained here, ESM-C 300M when its weights are on the machine, families
  checked against a structure's contacts.
* **Antibodies**: AntiBERTy (26 M parameters, 558 M natural antibody sequences) and Sapiens VH / VL
  (BioPhi's human models), pretrained, from their PyPI wheels: CDR infilling on pages of their own.
"""
)
fig1 = RESULTS / "figure1.png"
if fig1.exists():
    st.image(
        str(fig1),
        caption="One hard test puzzle mid-decode: the highlighted cell, the entropy map, and "
        "the estimated vs ground-truth MI (81x81, masked cells only, one colour scale).",
    )

models = st.expander("The models this app loads: checkpoints and pretrained antibody LMs")
checkpoints = []
for view in VIEWS.values():
    for b in view.backbones():
        if b.spec is not None and not checkpoint_paths(b.spec)[1].exists():
            continue  # a backbone loaded by name from elsewhere (ESM-C 300M): not a checkpoint of ours
        checkpoints.append((b.label, b.spec if b.spec is not None else b.args[0]))
        checkpoints += [(f"{b.label} MI head" + (f" ({label})" if len(b.heads) > 1 else ""), p) for label, p in b.heads]
pretrained = [b for view in VIEWS.values() for b in view.backbones() if b.domain == "antibody"]
if pretrained:
    models.markdown("**Pretrained antibody LMs** (from their wheels; nothing downloaded): " + "; ".join(
        f"{b.label}" + (" with an MI head" if b.heads else "") for b in dict.fromkeys(pretrained)))  # fmt: skip
for name, path in checkpoints:
    w, j = checkpoint_paths(path)
    try:
        meta = read_meta(path)
    except CheckpointError as e:
        models.error(f"{name}: {e}")
        continue
    size = w.stat().st_size / 2**20
    extra = meta.get("extra", {})
    models.markdown(f"**{name}** - `{w.name}` ({size:.1f} MiB), step {meta['step']}, format v{meta['format_version']}")
    rows = [("config", k, v) for k, v in meta["config"].items()]
    rows += [("metrics", k, v) for k, v in meta.get("metrics", {}).items()]
    rows += [
        ("training", k, extra[k])
        for k in ("preset", "examples", "tokens", "wall_seconds", "device", "n_train_states", "seconds", "split")
        if k in extra
    ]
    models.dataframe(
        pd.DataFrame(
            [(g, k, v if isinstance(v, str) else strict_json.dumps(v)) for g, k, v in rows],
            columns=["", "field", "value"],
        ),
        hide_index=True,
        height=min(35 * (len(rows) + 1) + 3, 300),
    )
built = ", ".join(f"{label} x{n}" for label, n in LOAD_COUNT.items()) or "none yet"
models.caption(f"Models built in this server process so far: {built} (loaded once, shared by every browser session).")
