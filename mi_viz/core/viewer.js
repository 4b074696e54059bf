// mi-viz decode viewer: every step of a decode, drawn and scrubbed in the browser.
// mountViewer(root, data, callbacks): data is mi_viz.core.viewer.viewer_payload's dict; callbacks
// may hold onGroundTruth(step) (the app asks the server for that step's exact map, which comes
// back in data.gt[step]). Used by the app (a Streamlit custom component) and by the offline HTML
// export alike. User strings are set with textContent, never as markup.

function miF16(b64) {
  const bin = atob(b64);
  const out = new Float32Array(bin.length / 2);
  for (let i = 0; i < out.length; i++) {
    const h = bin.charCodeAt(2 * i) | (bin.charCodeAt(2 * i + 1) << 8);
    const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, f = h & 0x3ff;
    out[i] = e === 0 ? s * Math.pow(2, -14) * (f / 1024) : e === 31 ? (f ? NaN : s * Infinity) : s * Math.pow(2, e - 15) * (1 + f / 1024);
  }
  return out;
}

// (M x M) symmetric map from its upper triangle (row-major, i < j; i <= j with diag: a pooled map)
function miSquare(tri, M, diag = false) {
  const m = new Float32Array(M * M);
  let k = 0;
  for (let i = 0; i < M; i++) for (let j = diag ? i : i + 1; j < M; j++) { m[i * M + j] = m[j * M + i] = tri[k++]; }
  return m;
}

const MI_VIRIDIS = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
function miRGB(x) {
  x = Math.max(0, Math.min(1, x)) * (MI_VIRIDIS.length - 1);
  const i = Math.min(MI_VIRIDIS.length - 2, Math.floor(x)), f = x - i, a = MI_VIRIDIS[i], b = MI_VIRIDIS[i + 1];
  return a.map((v, k) => Math.round(v + f * (b[k] - v)));
}
function miColor(x) { return `rgb(${miRGB(x).join(",")})`; }
const MI_LUT = Array.from({ length: 256 }, (_, k) => miRGB(k / 255));  // the scale in 256 steps
const MI_WHITE = [255, 255, 255];

// text on a coloured cell: black or white, whichever contrasts more (WCAG relative luminance)
function miLum(rgb) {
  const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
  return 0.2126 * f(rgb[0]) + 0.7152 * f(rgb[1]) + 0.0722 * f(rgb[2]);
}
function miParse(css) {
  if (css[0] === "#") return [1, 3, 5].map((k) => parseInt(css.slice(k, k + 2), 16));
  return css.replace(/[^\d,]/g, "").split(",").map(Number);
}
function miTextOn(css) {
  const l = miLum(miParse(css));
  return (1.05) / (l + 0.05) >= (l + 0.05) / 0.05 ? "#ffffff" : "#111111";
}

const MI_CLUSTALX = {};
for (const a of "AILMFWV") MI_CLUSTALX[a] = "#80a0f0";
for (const a of "KR") MI_CLUSTALX[a] = "#f01505";
for (const a of "ED") MI_CLUSTALX[a] = "#c048c0";
for (const a of "NQST") MI_CLUSTALX[a] = "#15c015";
for (const a of "HY") MI_CLUSTALX[a] = "#15a4a4";
Object.assign(MI_CLUSTALX, { C: "#f08080", G: "#f09048", P: "#c0c000", "-": "#9a9a9a" });

// an antibody's regions (payload "regions"): frameworks in greys, the CDRs in three distinct colours
const MI_REGION = { fwr1: "#c8c8c8", fwr2: "#a8a8a8", fwr3: "#c8c8c8", fwr4: "#a8a8a8", cdr1: "#d55e00", cdr2: "#0072b2", cdr3: "#009e73" };
const miRegionColor = (name) => MI_REGION[String(name).toLowerCase()] || "#777";
// the residue colours' legend (ClustalX's groups)
const MI_AA_GROUPS = [["AILMFWV", "hydrophobic"], ["KR", "positive"], ["ED", "negative"], ["NQST", "polar"], ["HY", "aromatic"], ["C", "cysteine"], ["G", "glycine"], ["P", "proline"]];
const MEASURE = typeof document !== "undefined" ? document.createElement("canvas").getContext("2d") : null;  // text widths

function miEl(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

// the bar's icons as inline SVG (Material Icons' paths, Apache-2.0): no font needs the glyphs
const MI_ICONS = {
  first: "M18.41 16.59L13.82 12l4.59-4.59L17 6l-6 6 6 6zM6 6h2v12H6z",
  back: "M15.41 7.41L14 6l-6 6 6 6 1.41-1.41L10.83 12z",
  step: "M10 6L8.59 7.41 13.17 12l-4.58 4.59L10 18l6-6z",
  last: "M5.59 7.41L10.18 12l-4.59 4.59L7 18l6-6-6-6zM16 6h2v12h-2z",
  play: "M8 5v14l11-7z",
  pause: "M6 19h4V5H6v14zm8-14v14h4V5h-4z",
};
function miIcon(name) {
  const ns = "http://www.w3.org/2000/svg", svg = document.createElementNS(ns, "svg"), path = document.createElementNS(ns, "path");
  svg.setAttribute("viewBox", "0 0 24 24"); svg.setAttribute("width", "16"); svg.setAttribute("height", "16");
  svg.setAttribute("aria-hidden", "true"); svg.setAttribute("data-icon", name);
  path.setAttribute("d", MI_ICONS[name]); path.setAttribute("fill", "currentColor");
  svg.appendChild(path);
  return svg;
}

function mountViewer(root, data, callbacks) {
  callbacks = callbacks || {};
  const MK = data.marks || { batch: "#ff7f0e", focus: "#d62728" };  // the session's palette (plots.MARKS)
  const S = data.steps, n = S.length, L = data.labels.length, sym = data.symbols;
  const states = [data.initial.slice()];
  const revealedAt = data.initial.map(() => -1);  // the step (0-based) that wrote each position; -1: given
  const writes = data.initial.map(() => 0);  // how often each position was written (2+: revised)
  S.forEach((st, t) => st.sel.forEach((p) => { revealedAt[p] = t; writes[p] += 1; }));
  for (let t = 0; t < n; t++) {
    const s = states[t].slice();
    S[t].sel.forEach((p, k) => { s[p] = S[t].val[k]; });
    (S[t].rm || []).forEach((p) => { s[p] = -1; });  // a revising rule's remasks, after the step's writes
    states.push(s);
  }
  // the step and focus survive a remount with new data for the same decode (a ground truth joined
  // it); another decode (input, sampler, parameters, seed) starts at its first step
  const ident = JSON.stringify([data.initial, data.sampler, n]);
  const host = callbacks.stateHost || root;  // a pair's halves are new elements each mount: it lends a lasting one
  // (fresh: this decode is new to the host, its step not yet the user's: a pair may put it on the shared pass)
  const keep = host.__miState && host.__miState.ident === ident ? host.__miState
    : { t: 0, focus: null, ident, fresh: host.__miState !== undefined };
  if (host.__miState && host.__miState !== keep && host.__miState.timer) clearInterval(host.__miState.timer);
  host.__miState = keep;
  keep.t = Math.min(keep.t, n - 1);
  const cache = {};
  const mapOf = (t, which) => {
    const src = which === "gt" ? (data.gt || {})[t] : which === "att" ? S[t].att : which === "est2" ? S[t].mi2 : S[t].mi;
    if (!src) return null;
    const key = which + t;
    if (!cache[key]) cache[key] = miSquare(miF16(src), cellsOf(t).C, !!S[t].cut);
    return cache[key];
  };
  // a step's map cells: one a masked position, or past MAX_CELLS (viewer.py) a run of them (S[t].cut)
  const cellsOf = (t) => {
    const key = "cells" + t;
    if (cache[key]) return cache[key];
    const pos = S[t].masked, cut = S[t].cut || pos.map((_, k) => k).concat([pos.length]);
    const C = cut.length - 1, of = new Map();
    for (let c = 0; c < C; c++) for (let k = cut[c]; k < cut[c + 1]; k++) of.set(pos[k], c);
    const name = (c) => cut[c + 1] - cut[c] === 1 ? data.labels[pos[cut[c]]] : `${data.labels[pos[cut[c]]]}..${data.labels[pos[cut[c + 1] - 1]]}`;
    const mid = (c) => (pos[cut[c]] + pos[cut[c + 1] - 1]) / 2;
    return (cache[key] = { C, of, name, mid, first: (c) => pos[cut[c]], pooled: !!S[t].cut });
  };
  const contacts = new Set((data.contacts || []).map(([a, b]) => a * L + b));
  const regionAt = new Array(L).fill(null);  // each position's region name (an antibody's), else null
  (data.regions || []).forEach(([name, a, b]) => { for (let p = a; p < b && p < L; p++) regionAt[p] = name; });
  const AX = data.kind === "board" ? 0 : 36;  // a track's left margin: the entropy bars' axis, the residues aligned to it

  root.replaceChildren();
  const box = miEl("div", { class: "mi-viewer" });
  box.style.cssText = "font-family: sans-serif; font-size: 13px; color: #222;";
  root.appendChild(box);
  if (data.title) box.appendChild(miEl("div", { style: "font-weight: 600; margin-bottom: 4px" }, data.title));
  const bar = miEl("div", { style: "display: flex; flex-wrap: wrap; gap: 6px; align-items: center; margin: 4px 0 8px" });
  const mk = (icon, label, id) => {
    const b = miEl("button", { "data-testid": id, title: label, "aria-label": label, style: "padding: 2px 8px; display: inline-flex; align-items: center; gap: 3px" });
    b.appendChild(miIcon(icon));
    if (label && !["first", "last"].includes(icon)) b.appendChild(miEl("span", {}, label));
    bar.appendChild(b);
    return b;
  };
  const bStart = mk("first", "First step", "mv-start"), bBack = mk("back", "Back", "mv-back"), bStep = mk("step", "Step", "mv-step"),
    bEnd = mk("last", "Last step", "mv-end"), bPlay = mk("play", "Play", "mv-play");
  const setPlay = (playing) => { bPlay.replaceChildren(miIcon(playing ? "pause" : "play"), miEl("span", {}, playing ? "Pause" : "Play")); };
  const slider = miEl("input", { type: "range", min: "0", max: String(n - 1), value: String(keep.t), "data-testid": "mv-slider", style: "flex: 1" });
  bar.appendChild(slider);
  const counter = miEl("span", { "data-testid": "mv-counter", style: "min-width: 170px; text-align: right" });
  bar.appendChild(counter);
  // decode order: each position coloured by the step that revealed it (remembered in this browser)
  const orderBox = miEl("label", { style: "white-space: nowrap; margin-left: 6px" });
  const orderToggle = miEl("input", { type: "checkbox", "data-testid": "mv-order" });
  orderBox.append(orderToggle, miEl("span", {}, " decode order"));
  bar.appendChild(orderBox);
  try { orderToggle.checked = globalThis.localStorage && localStorage.getItem("mi-viz-order") === "1"; } catch (e) { /* no storage */ }
  orderToggle.onchange = () => {
    try { localStorage.setItem("mi-viz-order", orderToggle.checked ? "1" : "0"); } catch (e) { /* no storage */ }
    draw();
  };
  box.appendChild(bar);

  const seqView = miEl("div", { "data-testid": "mv-seq", style: "margin-bottom: 4px" });
  box.appendChild(seqView);
  // what the colours mean: the residues' groups (a protein), the regions' bands (an antibody)
  const legend = miEl("div", { "data-testid": "mv-legend", style: `display: flex; flex-wrap: wrap; gap: 4px 10px; margin: 0 0 6px ${AX}px; font-size: 11px; color: #444` });
  const swatch = (color, text, band = false) => {
    const item = miEl("span", { style: "display: inline-flex; align-items: center; gap: 3px" });
    const sw = miEl("span");
    sw.style.cssText = band ? `width: 14px; height: 4px; background: ${color}` : `width: 10px; height: 10px; background: ${color}; border: 1px solid #bbb`;
    item.append(sw, miEl("span", {}, text));
    legend.appendChild(item);
  };
  if (data.kind !== "board" && sym.length >= 20 && sym.includes("W")) MI_AA_GROUPS.forEach(([aa, name]) => swatch(MI_CLUSTALX[aa[0]], `${aa} ${name}`));
  const regionNames = [...new Set((data.regions || []).map((r) => r[0]))];
  if (regionNames.length) {
    legend.appendChild(miEl("span", { style: "margin-left: 8px" }, "regions (bands under the residues and along the maps):"));
    regionNames.forEach((r) => swatch(miRegionColor(r), r.toUpperCase(), true));
  }
  if (legend.childNodes.length) box.appendChild(legend);
  const tip = miEl("div", { style: "position: fixed; pointer-events: none; background: #fff; border: 1px solid #999; padding: 2px 5px; font-size: 12px; display: none; z-index: 10" });
  box.appendChild(tip);
  const showTip = (ev, text) => { tip.textContent = text; tip.style.display = "block"; tip.style.left = ev.clientX + 12 + "px"; tip.style.top = ev.clientY + 12 + "px"; };
  const hideTip = () => { tip.style.display = "none"; };

  const entropy = miEl("canvas", { "data-testid": "mv-entropy", height: "70" });
  box.appendChild(entropy);
  const maps = miEl("div", { style: "display: flex; gap: 16px; flex-wrap: wrap; margin-top: 8px" });
  box.appendChild(maps);
  // two maps a row where the viewer is wide enough for two legible maps, else one (a side-by-side
  // half): each panel a share of the width (CSS, so a resize reflows it), its canvas scaled down to it
  const panel = (title, id) => {
    const p = miEl("div", { style: "flex: 1 1 calc(50% - 8px); min-width: min(100%, 380px); max-width: 600px" });
    p.appendChild(miEl("div", { style: "font-weight: 600" }, title));
    const c = miEl("canvas", { "data-testid": id });
    p.appendChild(c);
    maps.appendChild(p);
    return c;
  };
  // the dependence drawn: the MI (nats) by default, or DEMASK's expected TV influence (a share, 0..1)
  const ME = Object.assign({ name: "MI", unit: "nats" }, data.measure || {});
  const estCanvas = panel(`Estimated ${ME.name} (the head, same pass)`, "mv-est");
  // the other measure's head on the same pass (MI and TV side by side), on its own colour scale
  const BE = data.beside ? Object.assign({ name: "MI", unit: "nats" }, data.beside) : null;
  const est2Canvas = BE ? panel(`Estimated ${BE.name} (its head, same pass)`, "mv-est2") : null;
  // the backbone's own attention read as a dependency graph (DAWN's proxy): a share, not nats, on its own scale
  const attCanvas = S.some((st) => st.att) ? panel(`Attention (${data.attName || "last block"}, sinks removed)`, "mv-att") : null;
  const gtCanvas = panel(`Ground-truth ${ME.name}`, "mv-gt");
  // where the head is wrong: truth minus head, on a diverging scale (shown once a truth is there)
  const diffCanvas = S.some((st) => st.mi) ? panel("Difference: truth minus head", "mv-diff") : null;
  const gtNote = miEl("div", { "data-testid": "mv-gt-note", style: "max-width: 420px" });
  gtCanvas.parentNode.appendChild(gtNote);
  let gtButton = null;
  if (callbacks.onGroundTruth) {
    gtButton = miEl("button", { "data-testid": "mv-gt-button", style: "margin-top: 4px" }, "Compute the ground truth of this step");
    gtButton.onclick = () => {
      // one request at a time: the server computes (its progress bar under the viewer) and remounts
      gtButton.disabled = true;
      gtButton.textContent = "Computing the ground truth ... (progress and Cancel below)";
      callbacks.onGroundTruth(keep.t);
    };
    gtCanvas.parentNode.appendChild(gtButton);
  }
  const rowView = miEl("canvas", { "data-testid": "mv-row", height: "120", style: "margin-top: 8px; max-width: 100%; height: auto" });
  box.appendChild(rowView);
  const caption = miEl("div", { "data-testid": "mv-caption", style: "color: #666; margin-top: 4px" });
  box.appendChild(caption);

  function drawSeq(t) {
    seqView.replaceChildren();
    const byOrder = orderToggle.checked;
    const before = states[t], after = states[t + 1], sel = new Set(S[t].sel);
    const rm = new Map((S[t].rm || []).map((p, k) => [p, S[t].was[k]]));  // masked again after this step: what it held
    const masked = new Map(S[t].masked.map((p, r) => [p, r]));
    const board = data.kind === "board";
    const per = board ? 9 : perRow(), cell = board ? 34 : 17;
    const grid = miEl("div");
    grid.style.cssText = `display: grid; grid-template-columns: repeat(${per}, ${cell}px); gap: ${board ? 0 : 1}px; margin-left: ${AX}px;`;
    for (let p = 0; p < L; p++) {
      const v = rm.has(p) ? rm.get(p) : after[p], ch = v < 0 ? "·" : sym[v];
      const c = miEl("div", { "data-pos": String(p) }, ch);
      if (rm.has(p)) c.title = `${data.labels[p]}: held ${ch}, masked again after this step`;
      let bg = v < 0 ? "#e6e6e6" : board ? (before[p] < 0 ? "#eef4ff" : "#fff") : MI_CLUSTALX[ch] || "#ccc";
      if (byOrder && v >= 0) bg = revealedAt[p] < 0 ? "#ffffff" : miColor(revealedAt[p] / Math.max(1, n - 1));
      const outline = p === keep.focus ? `3px solid ${MK.focus}` : rm.has(p) ? "3px dashed #7b3294"
        : sel.has(p) ? `3px solid ${MK.batch}` : byOrder && writes[p] > 1 ? "3px double #333" : "1px solid #bbb";
      const band = regionAt[p] ? ` box-shadow: inset 0 -4px 0 ${miRegionColor(regionAt[p])};` : "";
      c.style.cssText = `width: ${cell}px; height: ${cell}px; line-height: ${cell}px; text-align: center; background: ${bg}; color: ${miTextOn(bg)}; outline: ${outline}; outline-offset: -2px; cursor: pointer; font-family: monospace; font-size: ${board ? 16 : 11}px; box-sizing: border-box;${band}`;
      if (board) {
        const r = Math.floor(p / 9), col = p % 9;
        c.style.borderRight = col % 3 === 2 && col < 8 ? "2px solid #333" : "1px solid #ccc";
        c.style.borderBottom = r % 3 === 2 && r < 8 ? "2px solid #333" : "1px solid #ccc";
      }
      c.onmousemove = (ev) => {
        const r = masked.get(p);
        const top = r === undefined ? "" : " · " + S[t].top[r].map(([k, q]) => `${sym[k]} ${q}`).join(", ") + ` · H ${S[t].H[r]}`;
        const when = revealedAt[p] < 0 ? " · given" : revealedAt[p] <= t ? ` · revealed at step ${revealedAt[p] + 1}` : "";
        showTip(ev, data.labels[p] + (v < 0 ? " (masked)" : " " + sym[v]) + when + top);
      };
      c.onmouseleave = hideTip;
      c.onclick = () => { if (masked.has(p)) { keep.focus = p; draw(); } };
      grid.appendChild(c);
    }
    seqView.appendChild(grid);
  }

  // a track's residues per row: 50, or as many 18-pixel columns as the viewer's width holds (side by side)
  function perRow() { const w = (root.clientWidth || 900) - AX; return Math.max(10, Math.min(50, Math.floor(w / 18))); }

  function drawEntropy(t) {
    // a board: one strip of L bars; a track: one strip per wrapped row of the sequence above, each bar
    // under its own residue (the same columns as drawSeq's grid)
    const track = data.kind !== "board", per = perRow(), colW = 18, head = 14, rowH = 34;
    const rows = track ? Math.ceil(L / per) : 1;
    // a left axis (0 and the step's top, in nats) beside every row; a track's bars start at AX, as its residues do
    const ax = track ? AX : 36;
    const W = ax + (track ? Math.min(L, per) * colW : Math.max(300, Math.min(900, L * 9))), Hh = head + rows * rowH;
    entropy.width = W; entropy.height = Hh;
    entropy.style.maxWidth = "100%";
    const g = entropy.getContext("2d");
    g.clearRect(0, 0, W, Hh);
    const hmax = Math.max(1e-6, ...S[t].H, 0.1), sel = new Set(S[t].sel);
    S[t].masked.forEach((p, r) => {
      const h = (S[t].H[r] / hmax) * (rowH - 6), row = track ? Math.floor(p / per) : 0;
      const x = ax + (track ? (p % per) * colW : (p / L) * (W - ax)), w = track ? colW - 2 : Math.max(1, (W - ax) / L - 1);
      g.fillStyle = sel.has(p) ? MK.batch : MK.rest || "#1f77b4";
      g.fillRect(x, head + (row + 1) * rowH - 2 - h, w, h);
    });
    g.fillStyle = "#333"; g.strokeStyle = "#999"; g.font = "10px sans-serif"; g.textAlign = "right";
    const busy = new Set(S[t].masked.map(p => (track ? Math.floor(p / per) : 0)));  // rows that hold bars
    for (let row = 0; row < rows; row++) {
      if (!busy.has(row)) continue;  // a row with nothing masked draws no axis (five "2.8"s read as a bug)
      const base = head + (row + 1) * rowH - 2, top = base - (rowH - 6);
      g.beginPath(); g.moveTo(ax - 3, top); g.lineTo(ax - 3, base); g.stroke();
      g.textBaseline = "top"; g.fillText(hmax.toFixed(1), ax - 6, top - 1);
      g.textBaseline = "bottom"; if (rows === 1) g.fillText("0", ax - 6, base + 1);  // stacked rows: each row's top only
    }
    g.textAlign = "start"; g.textBaseline = "alphabetic"; g.font = "11px sans-serif";
    g.fillText(`marginal entropy before this step (nats, axis 0..${hmax.toFixed(2)})` + (rows > 1 ? ", one row per row of the sequence" : "") + (S[t].sel.length ? " · orange: this step's batch" : ""), 4, 11);
  }

  function drawMap(canvas, m, t, zmax, unit = "nats", diverging = false) {
    // a diverging map (a difference) runs -zmax (blue) .. 0 (white) .. +zmax (red)
    const lut = (v) => {
      if (!diverging) return MI_LUT[Math.max(0, Math.min(255, Math.round((v / zmax) * 255)))];
      const x = Math.max(-1, Math.min(1, v / zmax)), w = Math.round(255 * (1 - Math.abs(x)));
      return x >= 0 ? [255, w, w] : [w, w, 255];
    };
    const pos = S[t].masked, cells = cellsOf(t), M = cells.C;
    // the map, a batch strip on top and left (pad), position names on the axes, a colour bar in its unit
    // axes: about eight position names each way, dark and legible; the left margin fits the longest
    const every = Math.max(1, Math.ceil(M / 8)), tickName = (k) => String(cells.name(k)).replace(/position /g, "").slice(0, 12);
    MEASURE.font = "11px sans-serif";
    let widest = 0;
    for (let k = 0; k < M; k += every) widest = Math.max(widest, MEASURE.measureText(tickName(k)).width);
    // as wide as its panel allows (up to 600 px), never so large that a few cells fill the page
    const pad = 14, left = Math.max(58, Math.ceil(widest) + 20), bottom = 56, bar = 70;
    const avail = (canvas.parentNode && canvas.parentNode.clientWidth) || 460;
    const size = Math.max(200, Math.min(600, avail - left - bar, 24 * M + 160));
    const empty = !m || M < 2;  // a one-line note, not a blank square
    canvas.width = empty ? 260 : left + size + bar; canvas.height = empty ? 40 : pad + size + bottom;
    const g = canvas.getContext("2d");
    g.clearRect(0, 0, canvas.width, canvas.height);
    if (empty) { g.fillStyle = "#555"; g.font = "13px sans-serif"; g.fillText(pos.length < 2 ? "fewer than two masked positions" : "no map for this step", 10, 24); return; }
    const c = size / M;
    // one pixel per pair written into an M x M image, then scaled without smoothing: a 1,024 x 1,024
    // map is one drawImage, not a million fillRects (benchmarks/app_latency.py times its repaint)
    const img = new ImageData(M, M), px = img.data;
    for (let i = 0; i < M; i++) for (let j = 0; j < M; j++) {
      const o = (i * M + j) * 4, rgb = i === j && !cells.pooled ? MI_WHITE : lut(m[i * M + j]);
      px[o] = rgb[0]; px[o + 1] = rgb[1]; px[o + 2] = rgb[2]; px[o + 3] = 255;
    }
    const off = document.createElement("canvas");
    off.width = M; off.height = M;
    off.getContext("2d").putImageData(img, 0, 0);
    g.imageSmoothingEnabled = false;
    g.drawImage(off, left, pad, size, size);
    const mark = (k, color) => { g.fillStyle = color; g.fillRect(left + k * c, 2, Math.max(2, c), 9); g.fillRect(left - 12, pad + k * c, 9, Math.max(2, c)); };
    if (data.regions) for (let k = 0; k < M; k++) {  // each cell's region: a band under the map and one at its right
      const r = regionAt[cells.first(k)];
      if (!r) continue;
      g.fillStyle = miRegionColor(r);
      g.fillRect(left + k * c, pad + size + 1, Math.max(1, c), 5); g.fillRect(left + size + 1, pad + k * c, 5, Math.max(1, c));
    }
    for (const p of S[t].sel) mark(cells.of.get(p), MK.batch);  // the batch as ticks on both axes (a strip)
    if (cells.of.has(keep.focus)) mark(cells.of.get(keep.focus), MK.focus);  // the focus in red
    g.fillStyle = "#222"; g.font = "11px sans-serif";
    for (let k = 0; k < M; k += every) {
      const name = tickName(k), mid = (k + 0.5) * c;
      g.textAlign = "right"; g.textBaseline = "middle"; g.fillText(name, left - 14, pad + mid);
      g.save(); g.translate(left + mid, pad + size + 8); g.rotate(-Math.PI / 4);
      g.textAlign = "right"; g.fillText(name, 0, 0); g.restore();
    }
    // the colour bar: 0 .. zmax in the map's unit
    const bx = left + size + 12, bh = size * 0.8, by = pad + (size - bh) / 2;
    for (let y = 0; y < bh; y++) {
      const f = 1 - y / bh, rgb = lut(diverging ? (2 * f - 1) * zmax : f * zmax);
      g.fillStyle = `rgb(${rgb[0]},${rgb[1]},${rgb[2]})`; g.fillRect(bx, by + y, 12, 1.5);
    }
    g.fillStyle = "#222"; g.textAlign = "left"; g.textBaseline = "middle";
    for (const f of [0, 0.5, 1]) {
      const v = diverging ? (2 * f - 1) * zmax : zmax * f;
      g.fillText((v > 0 && diverging ? "+" : "") + v.toFixed(zmax >= 1 ? 2 : 3), bx + 16, by + bh * (1 - f));
    }
    g.textBaseline = "bottom"; g.fillText(unit, bx, by - 4);
    g.textAlign = "start"; g.textBaseline = "alphabetic";
    if (contacts.size) {  // over the contacts, not over every pair
      g.strokeStyle = "#ff2d2d"; g.lineWidth = 1;
      for (const [pa, pb] of data.contacts) {
        const i = cells.of.get(pa), j = cells.of.get(pb);
        if (i === undefined || j === undefined) continue;
        for (const [a, b] of [[i, j], [j, i]]) {
          g.beginPath(); g.arc(left + (b + 0.5) * c, pad + (a + 0.5) * c, Math.max(1.5, c * 0.3), 0, 2 * Math.PI); g.stroke();
        }
      }
    }
    canvas.style.maxWidth = "100%"; canvas.style.height = "auto";  // a narrow column scales the map down
    const at = (ev) => { const r = canvas.getBoundingClientRect(), k = canvas.width / r.width; return [(ev.clientX - r.left) * k, (ev.clientY - r.top) * k]; };
    canvas.onmousemove = (ev) => {
      const [px_, py_] = at(ev), i = Math.floor((py_ - pad) / c), j = Math.floor((px_ - left) / c);
      if (i >= 0 && j >= 0 && i < M && j < M) showTip(ev, `${cells.name(i)} · ${cells.name(j)}: ${cells.pooled ? "at most " : ""}${m[i * M + j].toFixed(4)} ${unit}`); else hideTip();
    };
    canvas.onmouseleave = hideTip;
    canvas.onclick = (ev) => {
      const i = Math.floor((at(ev)[1] - pad) / c);
      if (i >= 0 && i < M) { keep.focus = cells.first(i); draw(); }
    };
  }

  function drawRow(t, est, gt) {
    // the focus's row as bars: one group per other masked cell (estimated, then exact), position names
    // under them, a y axis in the measure's unit
    const W = Math.max(300, Math.min(900, root.clientWidth || 900)), Hh = 170, left = 44, base = Hh - 52, top0 = 22;
    rowView.width = W; rowView.height = Hh;
    const g = rowView.getContext("2d");
    g.clearRect(0, 0, W, Hh);
    const cells = cellsOf(t), r = cells.of.has(keep.focus) ? cells.of.get(keep.focus) : -1;
    g.fillStyle = "#444"; g.font = "11px sans-serif";
    if (r < 0) { rowView.height = 24; g.font = "11px sans-serif"; g.fillStyle = "#444"; g.fillText(`click a masked position (or a map row) to draw its ${ME.name} row`, 4, 14); return; }
    const M = cells.C, rows = [[est, "#1f77b4", "estimated"], [gt, "#ff7f0e", "ground truth"]].filter((x) => x[0]);
    const others = [...Array(M).keys()].filter((j) => j !== r);
    let top = 1e-6;
    rows.forEach(([m]) => { for (const j of others) top = Math.max(top, m[r * M + j]); });
    g.fillText(`${ME.name} of ${cells.pooled ? cells.name(r) + " (pooled: the largest of each run)" : data.labels[keep.focus]} with each other masked position (${ME.unit})`, 4, 12);
    rows.forEach(([, color, name], k) => { g.fillStyle = color; g.fillRect(W - 200 + 95 * k, 4, 10, 10); g.fillStyle = "#333"; g.fillText(name, W - 186 + 95 * k, 13); });
    const gw = (W - left - 8) / Math.max(1, others.length), bw = Math.max(1, (gw * 0.8) / Math.max(1, rows.length));
    g.strokeStyle = "#999"; g.beginPath(); g.moveTo(left - 2, top0); g.lineTo(left - 2, base); g.lineTo(W - 4, base); g.stroke();
    g.fillStyle = "#333"; g.textAlign = "right"; g.font = "10px sans-serif";
    for (const f of [0, 0.5, 1]) { g.textBaseline = "middle"; g.fillText((top * f).toFixed(top >= 1 ? 2 : 3), left - 5, base - f * (base - top0)); }
    others.forEach((j, q) => rows.forEach(([m, color], k) => {
      const v = m[r * M + j], h = (v / top) * (base - top0);
      g.fillStyle = color; g.fillRect(left + q * gw + gw * 0.1 + k * bw, base - h, bw, h);
    }));
    const every = Math.max(1, Math.ceil(others.length / Math.max(1, Math.floor((W - left) / 34))));
    g.fillStyle = "#222";
    others.forEach((j, q) => {
      if (q % every) return;
      g.save(); g.translate(left + (q + 0.5) * gw, base + 4); g.rotate(-Math.PI / 4);
      g.textAlign = "right"; g.textBaseline = "middle"; g.fillText(String(cells.name(j)).replace(/position /g, "").slice(0, 12), 0, 0); g.restore();
    });
    g.textAlign = "start"; g.textBaseline = "alphabetic";
  }

  // the top of a step's estimated and exact maps (what its colour scale runs to alone)
  function topAt(t) {
    let z = 0;
    for (const m of [mapOf(t, "est"), mapOf(t, "gt")]) if (m) for (const v of m) z = Math.max(z, v);
    return z;
  }

  function draw() {
    const t = keep.t, st = S[t];
    slider.value = String(t);
    counter.textContent = `Step ${t + 1} / ${n} · passes ${st.passes}`;
    const masked = new Set(st.masked);
    if (keep.focus !== null && !masked.has(keep.focus)) keep.focus = null;
    drawSeq(t);
    drawEntropy(t);
    const est = mapOf(t, "est"), gt = mapOf(t, "gt");
    // a pair sharing one colour scale: the larger top of the two halves' steps shown (callbacks.scale)
    const shared = !data.zmax && callbacks.scale ? callbacks.scale() : 0;
    // a floor of 0.001 (nats, or TV): a step whose map is all but zero is drawn faint, as its colour bar
    // reads, not stretched to full contrast under a bar reading 0 / 0 / 0
    const zmax = Math.max(data.zmax || shared || topAt(t), 1e-3);
    drawMap(estCanvas, est, t, zmax, ME.unit);
    gtCanvas.parentNode.style.display = gt || gtButton ? "" : "none";
    drawMap(gtCanvas, gt, t, zmax, ME.unit);
    if (diffCanvas) {
      const diff = gt && est ? gt.map((v, k) => v - est[k]) : null;
      diffCanvas.parentNode.style.display = diff ? "" : "none";
      let dmax = 1e-6;
      if (diff) for (const v of diff) dmax = Math.max(dmax, Math.abs(v));
      if (diff) drawMap(diffCanvas, diff, t, dmax, ME.unit, true);
    }
    if (est2Canvas) {
      const est2 = mapOf(t, "est2");
      let bmax = 1e-3;
      if (est2) for (const v of est2) bmax = Math.max(bmax, v);
      drawMap(est2Canvas, est2, t, bmax, BE.unit);
    }
    if (attCanvas) {
      const att = mapOf(t, "att");
      let amax = 1e-6;
      if (att) for (const v of att) amax = Math.max(amax, v);
      drawMap(attCanvas, att, t, amax, "share");
    }
    const pairs = st.masked.length > 1;  // one masked position has no pair: nothing to compute
    if (gtButton) gtButton.style.display = gt || !pairs ? "none" : "";
    // its cost before it starts: passes counted on this step's marginals, seconds from a measured pass
    const cost = st.gtPasses && data.secondsPerPass ? st.gtPasses * data.secondsPerPass : null;
    const over = cost !== null && data.gtCap && cost > data.gtCap;
    if (gtButton && !gt && pairs) {
      gtButton.disabled = !!over;
      gtButton.textContent = "Compute the ground truth of this step" +
        (st.gtPasses ? ` (${st.gtPasses.toLocaleString("en-US")} passes` + (cost !== null ? `, about ${Math.max(1, Math.round(cost))} s)` : ")") : "");
    }
    gtNote.textContent = gt ? ((data.gtNote || {})[t] || "")
      : !(gtButton && pairs) ? ""
      : over ? `over this page's cap of ${Math.round(data.gtCap)} s: step further in (fewer masked positions)`
      : "exact map: one pass per masked position and kept value";
    drawRow(t, est, gt);
    const named = MK.batch === "#ff7f0e" ? ["orange", "red"] : ["blue", "light orange"];
    const rmText = (st.rm || []).map((p, k) => `${data.labels[p]} (held ${st.was[k] < 0 ? "·" : sym[st.was[k]]})`).join(", ");
    caption.textContent = `${named[0]}: the ${st.sel.length} position(s) unmasked at this step · ${named[1]}: the focus · colour scale 0..${zmax.toFixed(3)} ${ME.unit}${shared ? " (shared by both halves)" : ""}` + (contacts.size ? " · circles: structural contacts" : "") + (rmText ? ` · dashed purple: masked again after this step, to be re-predicted: ${rmText}` : "") + (orderToggle.checked ? ` · decode order: step 1 (purple) .. step ${n} (yellow), white: given${writes.some((w) => w > 1) ? ", double outline: written twice (revised; coloured by its last write)" : ""}` : "");
  }

  // go: this viewer's own step (its buttons, slider, Play) also tells a linked partner; show: a partner's order
  const show = (t) => { keep.t = Math.max(0, Math.min(n - 1, t)); draw(); };
  const go = (t) => { show(t); if (callbacks.onStep) callbacks.onStep(keep.t); };
  bStart.onclick = () => go(0);
  bBack.onclick = () => go(keep.t - 1);
  bStep.onclick = () => go(keep.t + 1);
  bEnd.onclick = () => go(n - 1);
  slider.oninput = () => go(parseInt(slider.value, 10));
  const stop = () => { if (keep.timer) { clearInterval(keep.timer); keep.timer = null; } setPlay(false); };
  bPlay.onclick = () => {
    if (keep.timer) { stop(); return; }
    if (keep.t >= n - 1) go(0);  // Play at the last step plays the decode again
    setPlay(true);
    // the timer stops on the tick that reaches the last step: no idle tick after it
    keep.timer = setInterval(() => { go(keep.t + 1); if (keep.t >= n - 1) stop(); }, 350);
  };
  stop();
  draw();
  return { go: show, n, step: () => keep.t, passesAt: (t) => S[t].passes, title: data.title || "", top: () => topAt(keep.t), redraw: draw };
}

// Two decodes of the same input side by side on one timeline of backbone passes (they take different
// numbers of steps): at pass p each shows its last step taken by then. Each keeps its own controls and maps.
function mountPair(root, a, b, callbacks) {
  root.replaceChildren();
  const box = miEl("div", { class: "mi-pair", "data-testid": "mv-pair" });
  box.style.cssText = "font-family: sans-serif; font-size: 13px; color: #222;";
  root.appendChild(box);
  const bar = miEl("div", { style: "display: flex; gap: 8px; align-items: center; margin: 4px 0 8px" });
  const label = miEl("span", { style: "font-weight: 600" }, "Both, by pass:");
  const slider = miEl("input", { type: "range", min: "1", value: "1", "data-testid": "mv-pair-slider", style: "flex: 1" });
  const counter = miEl("span", { "data-testid": "mv-pair-counter", style: "min-width: 120px; text-align: right" });
  const linkBox = miEl("label", { style: "white-space: nowrap" });
  const link = miEl("input", { type: "checkbox", "data-testid": "mv-pair-link" });
  link.checked = true;
  linkBox.append(link, miEl("span", {}, " step together"));
  // one colour scale for both halves (default), so equal colours mean equal values; unticked, each its own
  const scaleBox = miEl("label", { style: "white-space: nowrap", title: "Both halves' maps on one colour scale: the larger top of the two steps shown" });
  const oneScale = miEl("input", { type: "checkbox", "data-testid": "mv-pair-scale" });
  try { oneScale.checked = !(globalThis.localStorage && localStorage.getItem("mi-viz-own-scales") === "1"); } catch (e) { oneScale.checked = true; }
  scaleBox.append(oneScale, miEl("span", {}, " one colour scale"));
  bar.append(label, slider, counter, linkBox, scaleBox);
  box.appendChild(bar);
  // two columns that share the width (each scales its maps down), never one over the other
  const row = miEl("div", { style: "display: flex; gap: 16px; align-items: flex-start" });
  box.appendChild(row);
  const halves = [a, b].map(() => {
    const el = miEl("div", { style: "flex: 1 1 0; min-width: 0; overflow: hidden", "data-testid": "mv-half" });
    row.appendChild(el);
    return el;
  });
  let P = 1, va = null, vb = null;
  const stepAt = (v, p) => { let t = 0; for (let k = 0; k < v.n; k++) if (v.passesAt(k) <= p) t = k; return t; };
  const show = (p) => { slider.value = String(p); counter.textContent = `pass ${p} / ${P}`; };
  // stepping one moves the other to its last step by the same pass count, while linked
  // (a half that has finished stays where it is when stepped again: it never pulls the other back)
  const follow = (from, to) => (t) => {
    if (!link.checked || !to) return;
    const p = from().passesAt(t);
    if (t === from().n - 1 && p < to().passesAt(to().step())) return;
    to().go(stepAt(to(), p)); show(p);
  };
  root.__miHosts = root.__miHosts || [{}, {}];  // each half's step and focus, kept across a remount
  const scale = () => (oneScale.checked && va && vb ? Math.max(va.top(), vb.top()) : 0);
  const redraw = () => { if (va && vb && oneScale.checked) { va.redraw(); vb.redraw(); } };  // a half's step moves the shared top
  va = mountViewer(halves[0], a, {
    ...callbacks, onStep: (t) => { follow(() => va, () => vb)(t); redraw(); }, stateHost: root.__miHosts[0], scale,
  });
  vb = mountViewer(halves[1], b, {
    onGroundTruth: callbacks.onGroundTruthTwin, onStep: (t) => { follow(() => vb, () => va)(t); redraw(); },
    stateHost: root.__miHosts[1], scale,
  });
  oneScale.onchange = () => {
    try { localStorage.setItem("mi-viz-own-scales", oneScale.checked ? "0" : "1"); } catch (e) { /* no storage */ }
    va.redraw(); vb.redraw();
  };
  const last = (v) => v.passesAt(v.n - 1);
  P = Math.max(last(va), last(vb));
  slider.max = String(P);
  const go = (p) => { show(p); va.go(stepAt(va, p)); vb.go(stepAt(vb, p)); redraw(); };
  slider.oninput = () => go(parseInt(slider.value, 10));
  // a remount keeps each half's step (a ground truth joined: it is drawn where it was asked for); a half
  // that starts afresh (its sampler changed) is put on the other's pass, so the slider and both agree
  const fresh = (h) => h.__miState && h.__miState.t === 0 && h.__miState.fresh;
  if (!root.__miPairStarted) { go(1); root.__miPairStarted = true; }
  else if (fresh(root.__miHosts[1]) && link.checked) { const p = va.passesAt(va.step()); vb.go(stepAt(vb, p)); show(p); redraw(); }
  else if (fresh(root.__miHosts[0]) && link.checked) { const p = vb.passesAt(vb.step()); va.go(stepAt(va, p)); show(p); redraw(); }
  else { show(va.passesAt(va.step())); redraw(); }
  for (const h of root.__miHosts) if (h.__miState) h.__miState.fresh = false;  // synced once, then the user's
  return { go, passes: P };
}
