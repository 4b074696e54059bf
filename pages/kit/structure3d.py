"""A structure in 3D with scored column pairs drawn on it, in the browser: 3Dmol.js (npm package
3dmol 2.5.5, BSD-3-Clause), which `make setup` fetches from the npm registry into the virtual
environment (.venv/share/3dmol/3Dmol-min.js; MI_VIZ_3DMOL names another copy) and the component
sends with itself, so nothing is fetched from a CDN at run time. Without it the page says how to get it.

The structure is the contact map's own atoms (the C-beta, C-alpha for glycine, of each mapped
column: ContactMap.coords), drawn as spheres on a trace; each pair is a cylinder between its two
residues, green when they are in contact, red when not, its width by the pair's score; the focus
column is a gold sphere."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

import numpy as np
import streamlit as st

ROOT = Path(__file__).resolve().parents[2]


def library() -> Path | None:
    """3Dmol.js where make setup put it (or MI_VIZ_3DMOL), or None."""
    env = os.environ.get("MI_VIZ_3DMOL")
    for p in ([Path(env)] if env else []) + [ROOT / ".venv" / "share" / "3dmol" / "3Dmol-min.js",
                                              Path(sys.prefix) / "share" / "3dmol" / "3Dmol-min.js"]:  # fmt: skip
        if p.is_file():
            return p
    return None


_ENTRY = """
export default function (component) {
  const { data, parentElement } = component;
  let host = parentElement.querySelector(".mi-structure");
  if (!host) {
    host = document.createElement("div");
    host.className = "mi-structure";
    host.setAttribute("data-testid", "mi-structure");
    host.style.cssText = "width: 100%; height: 440px; position: relative; border: 1px solid #ddd;";
    parentElement.appendChild(host);
  }
  host.replaceChildren();
  const v = globalThis.$3Dmol.createViewer(host, { backgroundColor: "white" });
  const p = data.coords.map(([x, y, z]) => ({ x, y, z }));
  const d = (a, b) => Math.hypot(p[a].x - p[b].x, p[a].y - p[b].y, p[a].z - p[b].z);
  for (let k = 0; k + 1 < p.length; k++) {
    if (data.columns[k + 1] === data.columns[k] + 1 && d(k, k + 1) < 8) {
      v.addCylinder({ start: p[k], end: p[k + 1], radius: 0.25, color: "#9a9a9a", fromCap: 1, toCap: 1 });
    }
  }
  p.forEach((q, k) => v.addSphere({ center: q, radius: k === data.focus ? 1.3 : 0.55,
    color: k === data.focus ? "#e6a800" : "#c8c8c8", hoverable: true, hover_callback: () => {} }));
  const top = Math.max(1e-9, ...data.pairs.map((x) => x[2]));
  for (const [a, b, s, contact] of data.pairs) {
    v.addCylinder({ start: p[a], end: p[b], radius: 0.12 + 0.45 * (s / top),
      color: contact ? "#2ca02c" : "#d62728", fromCap: 1, toCap: 1 });
  }
  v.zoomTo();
  v.render();
  host.dataset.pairs = String(data.pairs.length);
  host.dataset.ready = "1";
}
"""


@functools.lru_cache(maxsize=1)
def _component():
    """The component, built once per process with the library inside (None while it is not installed)."""
    lib = library()
    if lib is None:
        return None
    # the library is an UMD bundle: run as a function with `this` the global object, it sets $3Dmol there
    js = "(function () {\n" + lib.read_text() + "\n}).call(globalThis);\n" + _ENTRY
    return st.components.v2.component("mi_viz_structure_3d", js=js)


def structure_view(cmap, score: np.ndarray, k: int, key: str, focus: int | None = None, among=None) -> int:
    """Draw the structure of a ContactMap with its k highest-scoring scored pairs (both columns in
    `among`, a (L,) bool, when given): returns how many pairs were drawn (0 when the map carries
    no coordinates: a message says how to get them)."""
    if cmap.coords is None:
        st.info("This contact map was saved without coordinates: re-make it from its PDB to see it in 3D.")
        return 0
    component = _component()
    if component is None:
        st.info("The 3D view needs 3Dmol.js: `make setup` fetches it from the npm registry (3dmol 2.5.5).")
        return 0
    scored = np.triu(cmap.scored(), 1)
    if among is not None:
        m = np.asarray(among, bool)
        scored &= m[:, None] & m[None, :]
    i, j = np.nonzero(scored)
    s = np.asarray(score, dtype=float)[i, j]
    order = np.argsort(-s, kind="stable")[:k]
    place = {c: n for n, c in enumerate(cmap.columns)}
    contacts = cmap.contacts()
    pairs = [[place[int(i[t])], place[int(j[t])], float(max(s[t], 0.0)), bool(contacts[i[t], j[t]])] for t in order]
    data = {
        "coords": np.asarray(cmap.coords, float).round(2).tolist(),
        "columns": list(cmap.columns),
        "pairs": pairs,
        "focus": place.get(focus) if focus is not None else None,
    }
    component(data=data, key=key)
    return len(pairs)
