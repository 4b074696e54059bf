"""A decode, packed once for the browser: every step's state, batch, entropies, hover marginals and
MI maps, so that stepping, scrubbing, playing and focusing a position happen in the browser.

The app's decode viewer (pages/viewer/) and the offline HTML export draw the same payload with
the same JavaScript (one code path). Compact on purpose: positions are sent once with their
labels, a step sends only what it writes, entropies and marginals only for the masked
positions (rounded), and each MI map only over the masked positions, as the upper triangle in
float16, base64-encoded (a length-100 protein decoded one residue a pass: about 0.4 MB); past
MAX_CELLS masked positions a map is pooled to MAX_CELLS cells a side (level of detail).

No streamlit here: pages/ mounts it, benchmarks and the export read it as JSON.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from . import strict_json
from .errors import InputError
from .mi import expansions
from .plots import marks
from .samplers import Trace

PAYLOAD_VERSION = 1
MEASURES = {"mi": {"name": "MI", "unit": "nats"}, "tv": {"name": "TV influence (DEMASK)", "unit": "TV"}}
JS = Path(__file__).with_name("viewer.js")
# a map's cells at most: past it, runs of consecutive masked positions pool into one cell (the
# canvas is at most 460 px wide, so a 1,024-position map would draw under half a pixel a
# position anyway) and a step's map costs the same whatever the length (benchmarks/app_latency.py)
MAX_CELLS = 256


def _f16(values: np.ndarray) -> str:
    return base64.b64encode(np.asarray(values, dtype="<f2").tobytes()).decode("ascii")


def cuts(m: int, max_cells: int = MAX_CELLS) -> list[int] | None:
    """The level of detail of a map over m masked positions: None (one cell a position) up to
    max_cells, else the boundaries of max_cells runs of consecutive masked positions
    ([0, ..., m]; cell k covers the positions cut[k] .. cut[k+1] - 1)."""
    if m <= max_cells:
        return None
    return [int(c) for c in np.linspace(0, m, max_cells + 1).round()]


def pooled(mi: np.ndarray, pos: np.ndarray, cut: list[int]) -> np.ndarray:
    """(C, C) the largest MI between two distinct positions of cells a and b (max, not mean: one
    strong pair stays visible at any zoom; the diagonal cell is the largest pair within its run)."""
    sub = np.asarray(mi, dtype=np.float64)[np.ix_(pos, pos)].copy()  # (M, M)
    np.fill_diagonal(sub, -np.inf)
    rows = np.maximum.reduceat(sub, cut[:-1], axis=0)  # (C, M)
    out = np.maximum.reduceat(rows, cut[:-1], axis=1)  # (C, C)
    return np.where(np.isfinite(out), out, 0.0)


def upper(mi: np.ndarray, pos: np.ndarray, max_cells: int = MAX_CELLS) -> str:
    """The map over the positions pos, float16 base64: its upper triangle (row-major, i < j) at
    one cell a position, or past max_cells positions the pooled map's upper triangle with its
    diagonal (i <= j) over cuts(len(pos)) (the viewer reads the step's "cut")."""
    cut = cuts(len(pos), max_cells)
    if cut is None:
        sub = np.asarray(mi, dtype=np.float64)[np.ix_(pos, pos)]
        return _f16(np.clip(sub[np.triu_indices(len(pos), 1)], 0, 65000))
    sq = pooled(mi, np.asarray(pos), cut)
    return _f16(np.clip(sq[np.triu_indices(len(sq), 0)], 0, 65000))


@dataclass(frozen=True)
class Layout:
    """What a decode is drawn on: kind "board" (a 9 x 9 Sudoku) or "track" (a sequence); a name per
    position; a display name per value (value_tokens order); the mask token; regions: named spans
    (name, start, end exclusive, 0-based) drawn as bands under the residues and along the maps'
    axes, with a legend (an antibody's IMGT regions); contacts: (L, L) bool known relations drawn as
    dots (a family's contacts)."""

    kind: str
    labels: list[str]
    symbols: list[str]
    value_tokens: list[int]
    mask_id: int
    regions: list[tuple[str, int, int]] | None = None
    contacts: np.ndarray | None = None


@dataclass(frozen=True)
class ViewerMaps:
    """The maps drawn beside a decode, one per step's state. est: the estimated map (L, L), or None
    (a sampler that read none and no head: the trace's own maps are drawn); measure: what est holds,
    "mi" (nats) or "tv" (DEMASK's expected TV influence, 0..1: the viewer names it); att: the
    backbone's attention read as a dependency map (core.attention.dependency_map), attention_name
    which block and head it is (the panel's title; empty: the last block, its heads averaged);
    beside: (the other measure, its estimated maps), drawn beside est on its own scale (MI and TV of
    one step side by side: one pass, both heads); gt_eps: the ground truth's pruning tolerance, to
    state each step's cost before it is asked for ("gtPasses": the base pass plus one per masked
    position and value with p >= gt_eps or its most likely one, counted by mi.expansions on the
    recorded marginals)."""

    est: list[np.ndarray | None] | None = None
    measure: str = "mi"
    att: list[np.ndarray] | None = None
    attention_name: str = ""
    beside: tuple[str, list[np.ndarray | None]] | None = None
    gt_eps: float | None = None


NO_MAPS = ViewerMaps()


def viewer_payload(
    trace: Trace,
    layout: Layout,
    maps: ViewerMaps = NO_MAPS,
    *,
    title: str = "",
    top: int = 3,
    max_cells: int = MAX_CELLS,
) -> dict:
    """trace: a recorded decode (StepRecord per pass), drawn on its layout with its maps; top: the
    most likely values listed per masked position; max_cells: the maps' level of detail (cuts)."""
    sym_of = {int(t): k for k, t in enumerate(layout.value_tokens)}
    initial = [-1 if t == layout.mask_id else sym_of.get(int(t), -1) for t in trace.initial]
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
        if rec.remasked:  # a revising rule's remasks (trace format 2): masked again after this step's writes
            step["rm"] = [int(p) for p in rec.remasked]
            step["was"] = [sym_of.get(int(v), -1) for v in rec.cleared]
        if maps.gt_eps is not None and len(masked) > 1:  # the kept values as the ground truth keeps them
            kept = expansions(torch.from_numpy(P)[None], torch.ones(1, len(masked), dtype=torch.bool), maps.gt_eps)
            step["gtPasses"] = 1 + int(kept.qb.numel())
        cut = cuts(len(masked), max_cells)
        if cut is not None:
            step["cut"] = cut
        m = maps.est[t] if maps.est is not None else (np.asarray(rec.mi) if rec.mi is not None else None)
        if m is not None and len(masked) > 1:
            step["mi"] = upper(np.asarray(m), masked, max_cells)
        if maps.att is not None and len(masked) > 1:
            step["att"] = upper(np.asarray(maps.att[t]), masked, max_cells)
        if maps.beside is not None and maps.beside[1][t] is not None and len(masked) > 1:
            step["mi2"] = upper(np.asarray(maps.beside[1][t]), masked, max_cells)
        steps.append(step)
    out = {
        "version": PAYLOAD_VERSION,
        "kind": layout.kind,
        "title": title,
        "labels": list(layout.labels),
        "symbols": list(layout.symbols),
        "initial": initial,
        "steps": steps,
        "sampler": trace.sampler,
        "marks": marks(),
    }
    if maps.measure != "mi":  # an MI payload reads as it always did
        out["measure"] = MEASURES[maps.measure]
    if maps.attention_name:
        out["attName"] = maps.attention_name
    if maps.beside is not None:
        out["beside"] = MEASURES.get(maps.beside[0], {"name": "MI", "unit": "nats"})
    if layout.regions:
        out["regions"] = [[str(n), int(a), int(b)] for n, a, b in layout.regions]
    if layout.contacts is not None:
        i, j = np.nonzero(np.triu(np.asarray(layout.contacts, bool), 1))
        out["contacts"] = [[int(a), int(b)] for a, b in zip(i, j)]
    return out


def ground_truth_record(gt: dict, masked: list[bool], eps: float) -> dict:
    """One step's computed ground truth as a trace keeps it (meta["ground_truth"][step]): the masked
    positions, the MI and the TV over them (4 decimals, each row a position's), what it cost."""
    pos = [i for i, m in enumerate(masked) if m]
    out: dict = {"positions": pos, "eps": eps}
    for k in ("mi", "tv"):
        if gt.get(k) is not None:
            out[k] = np.round(np.asarray(gt[k], dtype=np.float64)[np.ix_(pos, pos)], 4).tolist()
    out.update({k: gt[k] for k in ("passes", "seconds", "dropped") if k in gt})
    return out


def truths_of(trace: Trace, measure: str = "mi") -> dict[str, str]:
    """A trace's kept ground truths as a payload's "gt" entries (step -> encoded map), for the measure shown."""
    out = {}
    L = len(trace.initial)
    for t, rec in (trace.meta.get("ground_truth") or {}).items():
        if rec.get(measure) is None:
            continue
        pos = rec["positions"]
        full = np.zeros((L, L))
        full[np.ix_(pos, pos)] = np.asarray(rec[measure])
        out[str(t)] = ground_truth_entry(full, np.nonzero(np.asarray(trace.steps[int(t)].masked, bool))[0].tolist())
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


@dataclass(frozen=True)
class MadeBy:
    """What a trace decoded and with what (as sweep rows name it): the input, the domain, the backbone
    and the fingerprint of its weights."""

    input: str = ""
    domain: str = ""
    backbone: str = ""
    weights_fingerprint: str = ""


NOBODY = MadeBy()  # a trace made outside the app: nothing said of its input or backbone


def trace_meta(
    *, kind: str, labels: list[str], symbols: list[str], value_tokens: list[int], mask_id: int, made_by: MadeBy = NOBODY
) -> dict:
    """What a trace file carries to be read without the app (and drawn by `show`): how its states are
    drawn, a name per position, the vocabulary (token id -> its symbol), the mask token, and what was
    decoded by what (MadeBy)."""
    return {
        "kind": kind,
        "labels": list(labels),
        "vocabulary": {str(int(t)): s for t, s in zip(value_tokens, symbols)},
        "mask_id": int(mask_id),
        "input": made_by.input,
        "backbone": made_by.backbone,
        "weights_fingerprint": made_by.weights_fingerprint,
        "domain": made_by.domain,
    }


class Shown:
    """A decode's viewer inside a notebook: the offline page in an iframe (Jupyter runs no script put
    straight into an output cell, but an iframe's page runs its own)."""

    def __init__(self, page: str, height: int = 720):
        self.page, self.height = page, height

    def _repr_html_(self) -> str:
        return (
            f'<iframe srcdoc="{html.escape(self.page, quote=True)}" style="width:100%;height:{self.height}px;'
            'border:0" sandbox="allow-scripts"></iframe>'
        )

    def save(self, path: str | Path) -> Path:
        """The same viewer as an HTML file."""
        p = Path(path)
        p.write_text(self.page)
        return p


def _in_notebook() -> bool:
    """Whether a notebook kernel will draw what a cell returns (Jupyter's ZMQ shell; not IPython in a terminal)."""
    try:
        from IPython import get_ipython  # noqa: PLC0415 - optional: only a notebook has it
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def show(trace: Trace | str | Path, est: list[np.ndarray | None] | None = None, title: str = "", height: int = 720,
         out: str | Path | None = None) -> Shown:  # fmt: skip
    """The in-browser viewer of a decode: `mi_viz.show(trace)` in a notebook cell draws it (a Trace, or the
    path / JSON text of a trace file the app or decode(record=True) wrote with its meta). Outside a notebook
    (a script, a terminal) nothing would draw it, so it writes the offline page (to `out`, default
    mi-viz-viewer.html in the working folder) and prints where. est: the estimated maps of each step, when
    the trace's own (the sampler's) are not the ones to show."""
    if isinstance(trace, (str, Path)):
        text = Path(trace).read_text() if Path(str(trace)).exists() else str(trace)
        trace = Trace.from_json(text)
    m = trace.meta
    missing = [k for k in ("kind", "labels", "vocabulary", "mask_id") if k not in m]
    if missing:
        raise InputError(f"this trace carries no {', '.join(missing)} in its meta: export it from the app, or "
                         "set trace.meta = trace_meta(...) (mi_viz.core.viewer)")  # fmt: skip
    tokens = [int(t) for t in m["vocabulary"]]
    layout = Layout(m["kind"], m["labels"], list(m["vocabulary"].values()), tokens, int(m["mask_id"]))
    payload = viewer_payload(trace, layout, ViewerMaps(est), title=title or m.get("input", ""))
    payload["gt"] = truths_of(trace)  # the ground truths the app computed for it, kept in the file
    name = title or f"mi-viz: {m.get('input', 'a decode')} · {m.get('backbone', '')}"
    shown = Shown(offline_viewer_html(payload, name), height)
    if out is not None or not _in_notebook():
        path = shown.save(out or "mi-viz-viewer.html")
        print(f"mi-viz: the viewer is in {path.resolve()} (open it in a browser; it needs no server)")
    return shown
