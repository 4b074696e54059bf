"""The decode viewer as a Streamlit custom component (components v2, no iframe): the payload of
mi_viz.core.viewer goes to the browser once, and Step / Back / Play / the slider / focusing a
position run there without a round trip. The only message back is a click on "compute the
ground truth of this step" (a trigger value): the server computes that map and remounts the
viewer with it, and the viewer keeps its step and focus across the remount.
"""

from __future__ import annotations

import streamlit as st

from mi_viz.core.viewer import JS

_ENTRY = """
export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  let root = parentElement.querySelector(".mi-viewer-root");
  if (!root) {
    root = document.createElement("div");
    root.className = "mi-viewer-root";
    parentElement.appendChild(root);
  }
  mountViewer(root, data, data.gtEnabled ? { onGroundTruth: (t) => setTriggerValue("gt_step", t) } : {});
}
"""

_VIEWER = st.components.v2.component("mi_viz_decode_viewer", js=JS.read_text() + _ENTRY)


def decode_viewer(payload: dict, key: str, ground_truth: bool = True):
    """Mount the viewer; returns the step whose ground truth the user asked for (or None)."""
    result = _VIEWER(data={**payload, "gtEnabled": ground_truth}, key=key, on_gt_step_change=lambda: None)
    return getattr(result, "gt_step", None)
