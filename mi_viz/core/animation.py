"""A whole decode as an animated GIF, drawn from the viewer's payload (core.viewer.viewer_payload:
the same data the in-browser viewer and the offline HTML draw, so all three show one decode).

Each frame is one step: the state before it (a 9 x 9 board or a sequence track; the batch this
step unmasks outlined, the values it writes shown) beside that step's estimated MI over the
masked positions (the batch on both axes). A payload with a "twin" (side by side) gets one row per
decode, both at the same backbone pass. Rendered with matplotlib (Agg) and written by Pillow: no
network, no browser. Kept small on purpose (a low dpi, a 64-colour palette): a whole Sudoku
decode is tens of kB, a 100-residue protein decoded a residue a pass about a megabyte
(benchmarks/app_latency.py measures both).
"""

from __future__ import annotations

import base64
import io
import textwrap
from collections.abc import Callable
from typing import Any

import numpy as np

from .errors import InputError

MAX_FRAMES = 400  # a longer decode is refused: the file would be too large to share


class EmptyDecode(ValueError):
    """A decode with no step has nothing to animate."""


def _square(b64: str | None, m: int, cut: list[int] | None = None) -> np.ndarray | None:
    """A payload map (float16 base64: the upper triangle over the m masked positions, or with a
    step's cut the pooled map's upper triangle with its diagonal) -> (cells, cells)."""
    if not b64 or m < 2:
        return None
    tri = np.frombuffer(base64.b64decode(b64), dtype="<f2").astype(np.float64)
    n, k = (m, 1) if cut is None else (len(cut) - 1, 0)
    out = np.zeros((n, n))
    out[np.triu_indices(n, k)] = tri
    return out + np.triu(out, 1).T


def _states(payload: dict) -> list[list[int]]:
    """The state before every step (symbol indices, -1 masked), then the final one."""
    s = list(payload["initial"])
    out = [s[:]]
    for st in payload["steps"]:
        for p, v in zip(st["sel"], st["val"]):
            s[p] = v
        out.append(s[:])
    return out


def _batch(payload: dict) -> str:
    """The batch's colour of the palette the payload was packed under (plots.MARKS)."""
    return payload.get("marks", {}).get("batch", "#ff7f0e")


def _passes_index(payload: dict, p: int) -> int:
    t = 0
    for k, st in enumerate(payload["steps"]):
        if st["passes"] <= p:
            t = k
    return t


def _draw_state(ax: Any, payload: dict, state: list[int], t: int) -> None:
    sym, step = payload["symbols"], payload["steps"][t]
    sel = dict(zip(step["sel"], step["val"]))
    L = len(state)
    if payload["kind"] == "board":
        cols, rows = 9, 9
    else:
        cols = min(L, 25)
        rows = -(-L // cols)
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    ax.set_aspect("equal")
    ax.axis("off")
    for p in range(L):
        r, c = divmod(p, cols)
        masked = state[p] < 0
        face = "#e6e6e6" if masked else "white"
        edge, lw = (_batch(payload), 2.0) if p in sel else ("#999", 0.4)
        ax.add_patch(_rect((c, r), face, edge, lw))
        text = sym[sel[p]] if p in sel else ("" if masked else sym[state[p]])
        if text:
            ink = _batch(payload) if p in sel else "black"
            ax.text(c + 0.5, r + 0.55, text, ha="center", va="center", fontsize=7, color=ink)
    if payload["kind"] == "board":
        for k in (3, 6):
            ax.plot([k, k], [0, 9], color="black", lw=1.2)
            ax.plot([0, 9], [k, k], color="black", lw=1.2)


def _rect(xy: tuple[float, float], face: str, edge: str, lw: float) -> Any:
    from matplotlib.patches import Rectangle

    return Rectangle(xy, 1, 1, facecolor=face, edgecolor=edge, linewidth=lw)


def _draw_map(ax: Any, payload: dict, t: int, zmax: float) -> Any:
    """The step's estimated map on the GIF's one colour scale (0..zmax); its image, for a colour bar."""
    step = payload["steps"][t]
    m = _square(step.get("mi"), len(step["masked"]), step.get("cut"))
    ax.set_xticks([])
    ax.set_yticks([])
    if m is not None:  # a few cells named as the viewer names them (an antibody's IMGT numbers, a board's r1c1)
        cut = step.get("cut") or list(range(len(step["masked"]) + 1))
        ticks = sorted({int(round(x)) for x in np.linspace(0, len(m) - 1, min(len(m), 5))})
        names = [str(payload["labels"][step["masked"][cut[k]]]) for k in ticks]
        ax.set_xticks(ticks, names, fontsize=6, rotation=90)  # the map is symmetric: one axis named (the
        ax.tick_params(axis="x", length=2, pad=1)  # rows' side carries the batch marks)
    if m is None:
        ax.text(0.5, 0.5, "no map", ha="center", va="center", transform=ax.transAxes, color="#888")
        return None
    im = ax.imshow(m, cmap="viridis", vmin=0, vmax=zmax, interpolation="nearest")
    cut = step.get("cut")
    idx = np.arange(len(step["masked"]))
    cell = idx if cut is None else np.searchsorted(cut, idx, "right") - 1  # each masked position's cell
    pos = {p: int(cell[r]) for r, p in enumerate(step["masked"])}
    for p in step["sel"]:
        k = pos[p]
        ax.plot([k, k], [-0.95, -0.58], color=_batch(payload), lw=2, clip_on=False)
        ax.plot([-0.95, -0.58], [k, k], color=_batch(payload), lw=2, clip_on=False)
    ax.set_xlim(-0.5, len(m) - 0.5)  # the batch marks sit outside the map: the axes keep the map's own extent
    ax.set_ylim(len(m) - 0.5, -0.5)
    return im


def frame_count(payload: dict) -> int:
    """The frames decode_gif would draw: the passes at which either decode takes a step."""
    decodes = [payload] + ([payload["twin"]] if payload.get("twin") else [])
    return len({st["passes"] for d in decodes for st in d["steps"]})


def decode_gif(
    payload: dict, ms_per_frame: int = 500, dpi: int = 90, progress: Callable[[int, int], None] | None = None
) -> bytes:
    """The decode (and its twin, if any) as an animated GIF, one frame per backbone pass at which
    either decode takes a step. EmptyDecode for a decode with no step; ValueError past MAX_FRAMES.
    progress(done, total) after each frame (a frame is a matplotlib figure: about a quarter second)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from PIL import Image

    decodes = [payload] + ([payload["twin"]] if payload.get("twin") else [])
    if any(not d["steps"] for d in decodes):
        raise EmptyDecode("the decode has no step: nothing to animate")
    passes = sorted({st["passes"] for d in decodes for st in d["steps"]})
    if len(passes) > MAX_FRAMES:
        raise InputError(f"{len(passes)} frames, over the {MAX_FRAMES} an animation may have: export the HTML instead")
    states = [_states(d) for d in decodes]
    zmax = max(
        [1e-6]
        + [
            float(m.max())
            for d in decodes
            for st in d["steps"]
            if (m := _square(st.get("mi"), len(st["masked"]), st.get("cut"))) is not None
        ]
    )
    measure = payload.get("measure") or {"name": "MI", "unit": "nats"}
    frames = []
    for p in passes:  # 9 x 3.6 inches a decode at 90 dpi: 810 px wide, titles whole (wrapped), a colour bar a map
        fig, axes = plt.subplots(len(decodes), 2, figsize=(9.0, 3.6 * len(decodes)), squeeze=False)
        for row, d in enumerate(decodes):
            t = _passes_index(d, p)
            _draw_state(axes[row][0], d, states[row][t], t)
            im = _draw_map(axes[row][1], d, t, zmax)
            name = "\n".join(textwrap.wrap(d.get("title") or "decode", 56))
            axes[row][0].set_title(f"{name}\nstep {t + 1} / {len(d['steps'])}", fontsize=8)
            axes[row][1].set_title(f"estimated {measure['name']} (masked positions)", fontsize=8)
            if im is not None:
                bar = fig.colorbar(im, ax=axes[row][1], fraction=0.046, pad=0.04)
                bar.set_label(
                    f"{measure['unit']} (one scale, every frame{' and both decodes' if len(decodes) > 1 else ''})",
                    fontsize=7,
                )
                bar.ax.tick_params(labelsize=7)
        fig.suptitle(f"pass {p}", fontsize=9)
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi)
        plt.close(fig)
        buf.seek(0)
        frames.append(Image.open(buf).convert("RGB").quantize(64))
        if progress is not None:
            progress(len(frames), len(passes))
    out = io.BytesIO()
    frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:], duration=ms_per_frame, loop=0)
    return out.getvalue()
