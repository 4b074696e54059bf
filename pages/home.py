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
conditional mutual information, from the model's own conditionals: one extra pass per cell and
candidate value), learns to predict the whole MI matrix from the model's hidden states in **one
pass** (a small MI head), and uses it to unmask many positions per pass only where they are
nearly independent (MI-guided decoding).

The paper's two domains: **Sudoku** (an MDM trained here) and **proteins** (ESM-C, through
EvolutionaryScale's `esm` package: a small one trained here, and ESM-C 300M when its weights are on
the machine); beyond it, **protein families** (a model per family, checked against a structure's
contacts) and **antibodies** on a real pretrained masked LM, AntiBERTy (CDR infilling), both
backbones of the protein pages.

* **Sudoku decode** - step through a decode: board, entropy, estimated and ground-truth MI side by side.
* **Sampler comparison** - sequential, top-k, EB-Sampler and MI-guided on the same puzzle, and sweeps.
* **MI estimator** - how well a head matches the ground truth (Sudoku and proteins), and whether MI
  recovers the rules.
* **Protein decode** - step through a protein decode from a length or a prompt: the sequence as a
  coloured track, entropy along it, MI maps (the ground truth on demand, after its cost estimate).
* **Protein comparison** - one length and seed under several samplers; a small sweep scored against
  natural proteins (the paper's k-means JSD) beside the committed Table 2, or, for a family
  backbone, by pair statistics against natural family members.
* **Protein families** - backbones trained on one family's alignment: their conditional MI against
  the contacts of a real structure (beside MIp and a Potts model), generation judged by pair
  statistics, and a family model trained here on your own alignment.
"""
)
fig1 = RESULTS / "figure1.png"
if fig1.exists():
    st.image(
        str(fig1),
        caption="One hard test puzzle mid-decode: the highlighted cell, the entropy map, and "
        "the estimated vs ground-truth MI (81x81, masked cells only, one colour scale).",
    )

st.subheader("Loaded checkpoints")
checkpoints = []
for view in VIEWS.values():
    for b in view.backbones():
        if b.spec is not None and not checkpoint_paths(b.spec)[1].exists():
            continue  # a backbone loaded by name from elsewhere (ESM-C 300M): not a checkpoint of ours
        checkpoints.append((b.label, b.spec if b.spec is not None else b.args[0]))
        checkpoints += [(f"{b.label} MI head" + (f" ({label})" if len(b.heads) > 1 else ""), p) for label, p in b.heads]
for name, path in checkpoints:
    w, j = checkpoint_paths(path)
    try:
        meta = read_meta(path)
    except CheckpointError as e:
        st.error(f"{name}: {e}")
        continue
    size = w.stat().st_size / 2**20
    extra = meta.get("extra", {})
    st.markdown(f"**{name}** - `{w.name}` ({size:.1f} MiB), step {meta['step']}, format v{meta['format_version']}")
    rows = [("config", k, v) for k, v in meta["config"].items()]
    rows += [("metrics", k, v) for k, v in meta.get("metrics", {}).items()]
    rows += [
        ("training", k, extra[k])
        for k in ("preset", "examples", "tokens", "wall_seconds", "device", "n_train_states", "seconds", "split")
        if k in extra
    ]
    st.dataframe(
        pd.DataFrame(
            [(g, k, v if isinstance(v, str) else strict_json.dumps(v)) for g, k, v in rows],
            columns=["", "field", "value"],
        ),
        hide_index=True,
        height=min(35 * (len(rows) + 1) + 3, 300),
    )
built = ", ".join(f"{label} x{n}" for label, n in LOAD_COUNT.items()) or "none yet"
st.caption(f"Models built in this server process so far: {built} (loaded once, shared by every browser session).")
