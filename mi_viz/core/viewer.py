"""A decode, packed once for the browser: every step's state, batch, entropies, hover marginals and
MI maps, so that stepping, scrubbing, playing and focusing a position happen in the browser.

The app's decode viewer (pages/viewer/) and the offline HTML export draw the same payload with
the same JavaScript (one code path). Compact on purpose: positions are sent once with their
labels, a step sends only what it writes, entropies and marginals only for the masked
positions (rounded), and each MI map only over the masked positions, as the upper triangle in
float16, base64-encoded (a length-100 protein decoded one residue a pass: about 0.4 MB).

No streamlit here: pages/ mounts it, benchmarks and the export read it as JSON.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path

import numpy as np

from . import strict_json
from .plots import marks
from .samplers import Trace

PAYLOAD_VERSION = 1
JS = Path(__file__).with_name("viewer.js")


def _f16(values: np.ndarray) -> str:
    return base64.b64encode(np.asarray(values, dtype="<f2").tobytes()).decode("ascii")


def upper(mi: np.ndarray, pos: np.ndarray) -> str:
    """The map's upper triangle over the positions pos (row-major, i < j), float16 base64."""
    sub = np.asarray(mi, dtype=np.float64)[np.ix_(pos, pos)]
    iu = np.triu_indices(len(pos), 1)
    return _f16(np.clip(sub[iu], 0, 65000))


def viewer_payload(
    trace: Trace,
    *,
    kind: str,
    labels: list[str],
    symbols: list[str],
    value_tokens: list[int],
    mask_id: int,
    est: list[np.ndarray | None] | None = None,
    att: list[np.ndarray] | None = None,
    contacts: np.ndarray | None = None,
    title: str = "",
    top: int = 3,
) -> dict:
    """trace: a recorded decode (StepRecord per pass); kind: "board" (a 9 x 9 Sudoku) or "track"
    (a sequence); labels: a name per position; symbols: a display name per value (value_tokens
    order); est: the estimated MI map (L, L) of every step's state, or None (a sampler that read
    none and no head); att: the backbone's attention read as a dependency map (L, L) of every
    step's state (core.attention.dependency_map), or None; contacts: (L, L) bool known relations
    drawn as dots (a family's contacts).
    """
    sym_of = {int(t): k for k, t in enumerate(value_tokens)}
    initial = [-1 if t == mask_id else sym_of.get(int(t), -1) for t in trace.initial]
    steps = []
    for t, rec in enumerate(trace.steps):
        masked = np.nonzero(np.asarray(rec.masked, bool))[0]
        H = np.asarray(rec.entropy, dtype=np.float64)[masked]
        P = np.asarray(rec.probs, dtype=np.float64)[masked]  # (M, V)
        order = np.argsort(-P, axis=1)[:, :top]
        step = {
            "masked": masked.tolist(),
            "sel": [int(i) for i in rec.selected],
            "val": [sym_of.get(int(v), -1) for v in rec.values],
            "H": np.round(H, 3).tolist(),
            "top": [[[int(v), round(float(P[r, v]), 3)] for v in order[r]] for r in range(len(masked))],
            "passes": rec.passes,
        }
        m = est[t] if est is not None else (np.asarray(rec.mi) if rec.mi is not None else None)
        if m is not None and len(masked) > 1:
            step["mi"] = upper(np.asarray(m), masked)
        if att is not None and len(masked) > 1:
            step["att"] = upper(np.asarray(att[t]), masked)
        steps.append(step)
    out = {
        "version": PAYLOAD_VERSION,
        "kind": kind,
        "title": title,
        "labels": list(labels),
        "symbols": list(symbols),
        "initial": initial,
        "steps": steps,
        "sampler": trace.sampler,
        "marks": marks(),
    }
    if contacts is not None:
        i, j = np.nonzero(np.triu(np.asarray(contacts, bool), 1))
        out["contacts"] = [[int(a), int(b)] for a, b in zip(i, j)]
    return out


def ground_truth_entry(mi: np.ndarray, masked: list[int]) -> str:
    """A step's ground-truth map for the payload's "gt" field: the same upper-triangle encoding."""
    return upper(mi, np.asarray(masked))


def offline_viewer_html(payload: dict, title: str = "mi-viz decode") -> str:
    """The viewer as one self-contained HTML file: the same JavaScript the app mounts, every step
    in it (both decodes when the payload carries a "twin": side by side on one timeline), no
    network. Every user string (labels, titles, FASTA headers) reaches the page as JSON data
    rendered with textContent, never as markup; the title is escaped here."""
    data = strict_json.dumps(payload, separators=(",", ":")).replace("</", "<\\/")  # no early </script>
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>'
        + html.escape(title)
        + "</title></head><body><div id='mi-viz-viewer'></div><script>"
        + JS.read_text()
        + "\nconst d = "
        + data
        + ";\nconst r = document.getElementById('mi-viz-viewer');\n"
        + "if (d.twin) mountPair(r, d, d.twin, {}); else mountViewer(r, d, {});</script></body></html>"
    )
