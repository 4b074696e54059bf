"""First contact with the app in a real browser (Debian's Chromium via Playwright), timed.

    python -m benchmarks.app_latency [--before PATH_TO_AN_OLDER_CHECKOUT] [--rounds 3]

For each app (this checkout, and --before when given: both served at once, measured in
alternation so that the machine's drift hits both alike), per round, on a server started
fresh for that round: the first page load by deep link (/sudoku_decode) until its step
counter shows; a step (click to repaint: the median of 5, timed inside Chromium: the
in-browser viewer, so --before takes a checkout that has one); a new Sudoku
decode (another puzzle) and a new length-100 protein decode, until their counters show; a
protein step; the comparison page's first load in a new session; where the app has antibody pages,
Antibody decode's side by side with both halves judged (from the toggle to the judged table).
Medians over rounds. Prints a table and, last, a one-line JSON.

    python -m benchmarks.app_latency --viewer [--out results/app/viewer.json]

The decode viewer alone, offline pages opened from disk (no server): a step's repaint (click to
the next frame painted, timed in Chromium, every step visited for the first time so its maps are
decoded too) on track decodes of L = 100, 300 and 1,024 positions (eight steps, made-up maps:
the repaint depends on the map's size, not its values), this viewer beside the previous one
(commit 26d7c1c's parent: a fillRect per pair, every position a cell) on the same decodes; the
whole decode of hard puzzle #0 (sequential, the longest: a step a cell; head and attention
maps) as an offline page and a GIF, sizes in bytes; the side-by-side pair (sequential beside
the Sudoku default `mi`) stepped on its shared pass slider. The viewer's targets: a step and a
side-by-side step <= 50 ms, an L = 1,024 map <= 200 ms, the page <= 6 MB, the GIF <= 5 MB.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from benchmarks.app_server import FIND, ROOT, launch, start, stop
from benchmarks.report import save
from mi_viz.core import models, strict_json
from mi_viz.core.animation import decode_gif
from mi_viz.core.reading import read_steps
from mi_viz.core.samplers import StepRecord, Trace, config_for, decode
from mi_viz.core.viewer import JS, MAX_CELLS, Layout, ViewerMaps, offline_viewer_html, viewer_payload
from mi_viz.domains import get_domain
from mi_viz.domains.sudoku.board import read_puzzle_file


def wait_idle(page, timeout=300_000):
    page.wait_for_timeout(300)
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout)


VIEWER = '[data-testid="mv-counter"]'  # the in-browser viewer's step counter (absent in older apps)


def _time_step(page) -> float:
    """Click the viewer's Step, return the seconds until its counter shows the next step, timed in
    Chromium's own clock (no server is involved: the in-browser viewer; the server's step view of
    apps before it, which this once timed by wall clock, is gone)."""
    return page.evaluate(
        f"""() => new Promise(done => {{
             const root = ({FIND})('[data-testid="mv-step"]');
             const counter = root.getRootNode().querySelector('[data-testid="mv-counter"]');
             const before = counter.textContent, t0 = performance.now();
             root.click();
             const check = () => counter.textContent !== before ? done((performance.now() - t0) / 1000)
                                                                : requestAnimationFrame(check);
             check(); }})"""
    )


def _wait_decode(page):
    page.wait_for_function(
        f"""() => !!({FIND})('[data-testid="mv-counter"]')""",
        timeout=300_000,
    )
    wait_idle(page)


def _time_slider(page, slider) -> float:
    """One step of a comparison row's slider until the page is idle again with the sampler's new
    curve drawn (that row re-decodes on the server; every other row is cached)."""
    title = "Cells filled"
    names = """(t) => { const gd = [...document.querySelectorAll('.js-plotly-plot')]
                   .find(g => JSON.stringify((g.layout || {}).title || '').includes(t));
                 return gd ? gd.data.map(d => d.name).join('|') : ''; }"""
    before = page.evaluate(names, title)
    slider.focus()
    t0 = time.perf_counter()
    slider.press("ArrowRight")
    page.wait_for_function(f"(b) => ({names})('{title}') !== b", arg=before, timeout=300_000)
    seconds = time.perf_counter() - t0
    wait_idle(page)  # settled before the next move
    return seconds


def _antibody_side_by_side(browser, url) -> float:
    """Antibody decode's side by side, each half judged (recovery, both judges' PLL, the native
    beside): seconds from the toggle's click until the judged table shows and the page is idle (the
    second decode, its maps and both halves' judges; the page's first decode is not counted)."""
    ctx = browser.new_context(viewport={"width": 1500, "height": 1100})
    page = ctx.new_page()
    page.goto(url + "/antibody_decode")
    _wait_decode(page)
    t0 = time.perf_counter()
    page.get_by_text("Side by side: a second sampler").click()
    page.get_by_text("Each half's design beside the native chain").first.wait_for(timeout=300_000)
    page.get_by_test_id("stDataFrame").first.wait_for(timeout=300_000)
    wait_idle(page)
    seconds = time.perf_counter() - t0
    ctx.close()
    return seconds


def one_round(browser, url, antibodies: bool = False) -> dict:
    """One fresh server's figures; antibodies: the app has the antibody pages (older checkouts do not)."""
    out = {}
    ctx = browser.new_context(viewport={"width": 1500, "height": 1100})
    page = ctx.new_page()
    t0 = time.perf_counter()
    page.goto(url + "/sudoku_decode")
    _wait_decode(page)
    out["first_deep_link_s"] = time.perf_counter() - t0
    out["sudoku_step_s"] = statistics.median(_time_step(page) for _ in range(5))
    box = page.get_by_role("spinbutton", name="Index (0..999)")  # the field alone, not its help button
    t0 = time.perf_counter()
    box.fill("7")
    box.press("Enter")
    page.get_by_text("#7").first.wait_for(timeout=300_000)
    _wait_decode(page)
    out["new_sudoku_decode_s"] = time.perf_counter() - t0
    page.goto(url + "/protein_decode")
    _wait_decode(page)
    length = page.get_by_label("Length (1..300)")
    t0 = time.perf_counter()
    length.fill("100")
    length.press("Enter")
    page.wait_for_timeout(200)
    _wait_decode(page)
    out["new_protein_decode_len100_s"] = time.perf_counter() - t0
    out["protein_step_s"] = statistics.median(_time_step(page) for _ in range(5))
    ctx.close()
    ctx = browser.new_context(viewport={"width": 1500, "height": 1100})
    page = ctx.new_page()
    page.goto(url + "/")
    page.get_by_text(re.compile("Loaded checkpoints|Start here")).first.wait_for(timeout=300_000)  # then and now
    wait_idle(page)
    t0 = time.perf_counter()
    page.get_by_role("link", name="Sampler comparison").click()
    page.get_by_text("Cells filled vs passes").first.wait_for(timeout=300_000)
    wait_idle(page)
    out["comparison_first_load_s"] = time.perf_counter() - t0
    slider = page.get_by_role("slider", name="gamma (budget, nats)")
    if slider.count():  # apps with a row of sliders per sampler: one move of EB's gamma
        out["comparison_slider_s"] = statistics.median(_time_slider(page, slider.first) for _ in range(3))
    if antibodies:
        out["antibody_side_by_side_judged_s"] = _antibody_side_by_side(browser, url)
    ctx.close()
    return out


PREVIOUS_VIEWER = "26d7c1c~1"  # the viewer before the level of detail and the image repaint

STEP_JS = """async (sel) => {
  const el = document.querySelector(sel), t0 = performance.now();
  if (el.type === "range") { el.value = String(parseInt(el.value, 10) + 1); el.dispatchEvent(new Event("input")); }
  else el.click();
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));  // until the frame is painted
  return performance.now() - t0;
}"""


def _track(L: int, steps: int = 8):
    """A made-up decode over L positions: step k unmasks the next L / steps positions; every state
    an estimated and an attention map (uniform noise with a few strong pairs)."""
    rng = np.random.default_rng(L)
    order, tokens, recs, est = rng.permutation(L), [20] * L, [], []
    for k, chunk in enumerate(np.array_split(order, steps)):
        masked = [t == 20 for t in tokens]
        probs = rng.dirichlet(np.ones(20), L)
        H = (-(probs * np.log(probs)).sum(1) * np.array(masked)).tolist()
        a = rng.random((L, L)) * 0.05
        a[rng.integers(0, L, 40), rng.integers(0, L, 40)] = 1.0
        est.append((a + a.T) / 2)
        sel = [int(p) for p in chunk]
        recs.append(StepRecord(k, tokens[:], masked, H, probs.tolist(), None, sel, [1] * len(sel), k + 1))
        for p in sel:
            tokens[p] = 1
    return Trace({"name": "topk"}, [20] * L, tokens, recs), est


def _track_page(trace, est, max_cells: int) -> str:
    """A made-up track decode as the offline page, its maps at the given level of detail."""
    L = len(trace.initial)
    aa = [chr(ord("A") + k) for k in range(20)]
    layout = Layout("track", [f"{k + 1}" for k in range(L)], aa, list(range(20)), 20)
    payload = viewer_payload(trace, layout, ViewerMaps(est=est, att=est), max_cells=max_cells)
    return offline_viewer_html(payload)


def _open_html(browser, text: str):
    path = Path(tempfile.mkdtemp()) / "decode.html"
    path.write_text(text)
    ctx = browser.new_context(viewport={"width": 1500, "height": 1100})
    ctx.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort())
    page = ctx.new_page()
    page.goto(path.as_uri())
    page.locator(VIEWER).first.wait_for(timeout=60_000)
    return ctx, page


def _repaints(browser, html_text: str, sel: str, n: int) -> list[float]:
    """Milliseconds of n successive steps (each a step not seen before)."""
    ctx, page = _open_html(browser, html_text)
    out = [page.evaluate(STEP_JS, sel) for _ in range(n)]
    ctx.close()
    return out


def viewer_measures(browser) -> dict:
    show = ["git", "show", f"{PREVIOUS_VIEWER}:mi_viz/core/viewer.js"]
    previous_js = subprocess.run(show, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    res: dict = {"long": {}}
    for L in (100, 300, 1024):
        trace, est = _track(L)
        now = _track_page(trace, est, MAX_CELLS)
        old = _track_page(trace, est, 10**6)  # the previous viewer's decode: one cell a position (no level of detail)
        old = old.replace(JS.read_text(), previous_js)
        ms_now = _repaints(browser, now, '[data-testid="mv-step"]', 7)
        ms_old = _repaints(browser, old, '[data-testid="mv-step"]', 7)
        res["long"][str(L)] = {
            "step_ms": round(statistics.median(ms_now), 1),
            "step_ms_max": round(max(ms_now), 1),
            "previous_step_ms": round(statistics.median(ms_old), 1),
            "page_bytes": len(now.encode()),
            "previous_page_bytes": len(old.encode()),
        }
    dom = get_domain("sudoku")
    model, head = models.load_models(dom, need_head=True)
    x = dom.encode([read_puzzle_file(ROOT / "data" / "sudoku" / "test_hard.txt").puzzles[0]])  # (1, 81)

    def packed(name: str) -> dict:
        traces = decode(model, x, config_for(name, dom.sampler_defaults), head=head, record=True).traces
        assert traces is not None  # record=True
        tr = traces[0]
        est, att = read_steps(model, [s.tokens for s in tr.steps], head, attention=True)
        assert est is not None and att is not None
        layout = Layout(
            "board",
            [dom.position_name(i) for i in range(81)],
            [str(d) for d in range(1, 10)],
            model.value_tokens.tolist(),
            dom.mask_id,
        )
        maps = ViewerMaps(est=[m.numpy() for m in est], att=[m.numpy() for m in att])
        return viewer_payload(tr, layout, maps, title=name)

    with torch.inference_mode():
        seq, mi = packed("sequential"), packed("mi")
    page = offline_viewer_html(seq)
    pair = {**seq, "twin": mi}
    res["sudoku"] = {
        "steps": len(seq["steps"]),
        "page_bytes": len(page.encode()),
        "gif_bytes": len(decode_gif(seq)),
        "pair_page_bytes": len(offline_viewer_html(pair).encode()),
        "pair_gif_bytes": len(decode_gif(pair)),
        "step_ms": round(statistics.median(_repaints(browser, page, '[data-testid="mv-step"]', 10)), 1),
        "pair_step_ms": round(
            statistics.median(_repaints(browser, offline_viewer_html(pair), '[data-testid="mv-pair-slider"]', 10)), 1
        ),
    }
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--viewer", action="store_true", help="the viewer alone: long maps, exports, side by side")
    ap.add_argument("--out", default=str(ROOT / "results" / "app" / "viewer.json"), help="with --viewer")
    ap.add_argument("--before", default=None, help="an older checkout to time beside this one")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    if a.viewer:
        with sync_playwright() as p:
            browser = launch(p.chromium)
            res = viewer_measures(browser)
            browser.close()
        for L, r in res["long"].items():
            was = r["previous_step_ms"]
            print(f"L={L:>5}: step {r['step_ms']:7.1f} ms (before {was:7.1f}), page {r['page_bytes'] / 1e6:.2f} MB")
        print("sudoku: " + "  ".join(f"{k} {v}" for k, v in res["sudoku"].items()))
        save(res, a.out)
        return
    apps = {"this checkout": ROOT} | ({"before": Path(a.before).resolve()} if a.before else {})
    runs = {name: [] for name in apps}
    with sync_playwright() as p:
        browser = launch(p.chromium)
        for _ in range(a.rounds):
            for name, checkout in apps.items():  # alternating: drift hits both alike
                url, proc = start(checkout, a.python)
                try:
                    runs[name].append(one_round(browser, url, (checkout / "pages" / "antibody_decode.py").exists()))
                finally:
                    stop(proc)
        browser.close()
    res = {name: {k: round(statistics.median(r[k] for r in rs), 2) for k in rs[0]} for name, rs in runs.items()}
    res["rounds"] = a.rounds
    for name in apps:
        print(f"{name:14s} " + "  ".join(f"{k} {v:6.2f}" for k, v in res[name].items()))
    print(strict_json.dumps(res))


if __name__ == "__main__":
    main()
