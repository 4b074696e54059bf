"""The decode viewer as a Streamlit custom component (components v2, no iframe): the payload of
mi_viz.core.viewer goes to the browser once, and Step / Back / Play / the slider / focusing a
position run there without a round trip. The only message back is a click on "compute the
ground truth of this step" (a trigger value): the server computes that map and remounts the
viewer with it, and the viewer keeps its step and focus across the remount.
"""

from __future__ import annotations

import time

import streamlit as st

from mi_viz.core.animation import MAX_FRAMES, decode_gif, frame_count
from mi_viz.core.viewer import JS, ground_truth_entry, offline_viewer_html

from . import caches, widgets
from .caches import GT_SECONDS_CAP
from .widgets import cancel_button

_ENTRY = """
export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  let root = parentElement.querySelector(".mi-viewer-root");
  if (!root) {
    root = document.createElement("div");
    root.className = "mi-viewer-root";
    parentElement.appendChild(root);
  }
  const cb = data.gtEnabled ? {
    onGroundTruth: (t) => setTriggerValue("gt_step", t),
    onGroundTruthTwin: (t) => setTriggerValue("gt_step_twin", t),
  } : {};
  if (data.twin) mountPair(root, data, data.twin, cb); else mountViewer(root, data, cb);
}
"""

_VIEWER = st.components.v2.component("mi_viz_decode_viewer", js=JS.read_text() + _ENTRY)


def decode_viewer(payload: dict, key: str, ground_truth: bool = True):
    """Mount the viewer; returns (viewer, step) of the ground truth the user asked for ("main" or
    "twin", the second of a pair), or None."""
    result = _VIEWER(
        data={**payload, "gtEnabled": ground_truth},
        key=key,
        on_gt_step_change=lambda: None,
        on_gt_step_twin_change=lambda: None,
    )
    for side, name in (("main", "gt_step"), ("twin", "gt_step_twin")):
        t = getattr(result, name, None)
        if t is not None:
            return side, int(t)
    return None


def mount_viewer(
    payload: dict,
    key: str,
    tokens_of,
    gt_for,
    cost_for=None,
    caption="",
    export_name="decode",
    twin_tokens_of=None,
    pass_seconds=None,
    ident=(),
    measure: str = "mi",
) -> None:
    """The viewer with the ground truth of every step whose state has one. A request computes that
    step's map on the server and remounts: tokens_of(t) -> the step's state, gt_for(tokens,
    compute) -> the cached ground_truth_for dict (None if not computed and compute is False),
    cost_for(tokens) -> its cost (refused past GT_SECONDS_CAP), pass_seconds(tokens) -> one measured
    pass (prices every step's button before it is pressed). A pair (payload["twin"]) gets its
    second decode's maps the same way through twin_tokens_of. Under it: the caption, and the
    whole decode as one offline HTML page (the same viewer) and a GIF (kept under ident: what the
    caller caches the payload by).

    A map is looked up by the state it was computed on (its tokens, with the backbone and eps
    in gt_for's store key), never by a step number: a map can only be drawn on the decode whose
    step holds exactly that state, so a new puzzle, length or sampler never inherits one."""
    seconds_per_pass = None
    if pass_seconds is not None and payload["steps"]:  # one measured pass prices every step's button
        seconds_per_pass = pass_seconds(tuple(tokens_of(0)))

    def with_truths(p: dict, tokens_at) -> dict:
        d = dict(p, gt={}, gtNote={}, gtCap=GT_SECONDS_CAP, secondsPerPass=seconds_per_pass)
        for t, step in enumerate(p["steps"]):
            gt = gt_for(tuple(tokens_at(t)), compute=False)
            if gt is not None and gt.get(measure) is not None:  # the measure shown, from the same passes
                d["gt"][str(t)] = ground_truth_entry(gt[measure], step["masked"])
                d["gtNote"][str(t)] = (
                    f"{gt['passes']:,} passes, {gt['seconds']:.1f} s; max pruned mass {gt['dropped']:.1e}"
                )
        return d

    data = with_truths(payload, tokens_of)
    cancelled = bool(st.session_state.get(f"{key}_gt_cancel"))  # the click that stopped a computation
    if cancelled:  # new data remounts the viewer: its button, disabled while it waited, is live again
        st.session_state[f"{key}_gt_cancels"] = st.session_state.get(f"{key}_gt_cancels", 0) + 1
    data["cancels"] = st.session_state.get(f"{key}_gt_cancels", 0)
    if "twin" in payload and twin_tokens_of is not None:
        data["twin"] = with_truths(payload["twin"], twin_tokens_of)
    asked = decode_viewer(data, key=key)
    if asked is not None:
        side, t = asked
        at = twin_tokens_of if side == "twin" else tokens_of
        if at is not None and str(t) not in (data["twin"] if side == "twin" else data)["gt"]:
            tokens = at(t)
            cost = cost_for(tuple(tokens)) if cost_for else None
            if cost is not None and cost["seconds"] > GT_SECONDS_CAP:
                st.warning(
                    f"The ground truth of step {t + 1} would take about {cost['seconds']:.0f} s "
                    f"({cost['total_passes']:,} passes), over this page's cap of {GT_SECONDS_CAP:.0f} s: "
                    "step further in."
                )
            else:
                cancel_button("ground truth", f"{key}_gt_cancel")
                gt_for(tuple(tokens), compute=True)
                st.rerun()
    elif cancelled:
        widgets.cancelled("Ground truth", f"{key}_gt_cancel")
    if caption:
        st.caption(caption)
    c1, c2 = st.columns(2)
    c1.download_button(
        "The whole decode as one offline HTML page (this viewer, every step)",
        lambda: offline_viewer_html(kept_truths(payload, data), f"mi-viz: {caption}"),
        file_name=f"{export_name}.html",
        mime="text/html",
        key=f"{key}_html",
        on_click="ignore",  # no rerun: a second export clicked meanwhile keeps its file
    )
    gif_export(c2, payload, key, export_name, ident)


def gif_export(col, payload: dict, key: str, export_name: str, ident) -> None:
    """The whole decode as an animated GIF: drawn on request (a matplotlib figure a frame), its
    cost stated first (frames times a frame's seconds, measured once per server process), the
    button disabled, a progress bar and a Cancel while it draws, then kept for every session under
    ident, what the payload is cached by (never a hash of the payload itself: it is rerun-hot)."""
    frames = frame_count(payload)
    if frames == 0:
        col.caption("No step to animate: the input had nothing masked.")
        return
    if frames > MAX_FRAMES:
        col.caption(f"{frames} passes: too many frames for an animation ({MAX_FRAMES} at most); the HTML has them all.")
        return
    gif = caches.peek("gif", ident)
    if gif is not None:
        col.download_button(
            f"The whole decode as an animated GIF ({frames} frames)", gif, file_name=f"{export_name}.gif",
            mime="image/gif", key=f"{key}_gif",
            on_click="ignore",  # no rerun: a second export clicked meanwhile keeps its file
        )  # fmt: skip
        return

    def frame_seconds() -> float:  # the first step alone, drawn twice (the first warms matplotlib up)
        one = {**payload, "steps": payload["steps"][:1], "twin": None}
        times = []
        for _ in range(2):
            t0 = time.perf_counter()
            decode_gif(one)
            times.append(time.perf_counter() - t0)
        return min(times)

    # once per server process (the launcher's warm-up pays it): a board's frame and a track's cost alike
    rate = caches.cached("gif_frame_seconds", "any", frame_seconds, max_entries=1)
    rate *= 2 if payload.get("twin") else 1  # a pair draws two rows a frame
    cost = f"{frames} frames, about {max(1, round(frames * rate))} s"
    drawing = bool(st.session_state.get(f"{key}_gif_make"))  # the click that started this run
    col.button(
        f"Drawing the GIF ({cost}) ..." if drawing else f"Draw the decode as an animated GIF ({cost})",
        key=f"{key}_gif_make", icon=":material/movie:", disabled=drawing,
    )  # fmt: skip
    if drawing:
        with col:
            cancel_button("GIF", f"{key}_gif_cancel")
            bar = caches.LazyBar("Drawing the GIF", after=0.0, unit="frames")
            bar.update(0, frames)  # the bar in this column, before the first frame
        caches.cached("gif", ident, lambda: decode_gif(payload, progress=bar.update), max_entries=8)
        bar.empty()
        st.rerun()
    widgets.cancelled("GIF", f"{key}_gif_cancel", col)


def kept_truths(payload: dict, data: dict) -> dict:
    """The offline page's payload with every ground truth computed so far (and its cost note): what was
    paid for is kept in the file, each half's its own."""
    out = {**payload, "gt": data.get("gt", {}), "gtNote": data.get("gtNote", {})}
    if "twin" in payload and "twin" in data:
        out["twin"] = {**payload["twin"], "gt": data["twin"].get("gt", {}), "gtNote": data["twin"].get("gtNote", {})}
    return out
