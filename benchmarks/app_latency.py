"""First contact with the app in a real browser (Debian's Chromium via Playwright), timed.

    python -m benchmarks.app_latency [--before PATH_TO_AN_OLDER_CHECKOUT] [--rounds 3]

For each app (this checkout, and --before when given: both served at once, measured in
alternation so that the machine's drift hits both alike), per round, on a server started
fresh for that round: the first page load by deep link (/sudoku_decode) until its step
counter shows; a step (click to repaint: the median of 5, timed inside Chromium for the
in-browser viewer, by wall clock for the server-side step view of older apps); a new Sudoku
decode (another puzzle) and a new length-100 protein decode, until their counters show; a
protein step; the comparison page's first load in a new session. Medians over rounds. Prints
a table and, last, a one-line JSON.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from mi_viz.core import strict_json

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def start(checkout: Path, python: str):
    port = free_port()
    env = dict(os.environ, STREAMLIT_BROWSER_GATHER_USAGE_STATS="false", PYTHONPATH=str(checkout))
    # as `make app` starts it: its launcher (pages/serve.py: the imports done before the first
    # request) where the checkout has one, else `streamlit run`
    launcher = (
        ["-m", "pages.serve"]
        if (checkout / "pages" / "serve.py").exists()
        else ["-m", "streamlit", "run", str(checkout / "app.py")]
    )
    proc = subprocess.Popen(
        [
            python,
            *launcher,
            "--server.headless",
            "true",
            "--server.port",
            str(port),
            "--server.fileWatcherType",
            "none",
        ],
        cwd=checkout,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(240):
        try:
            urllib.request.urlopen(url + "/_stcore/health", timeout=1)
            return url, proc
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit(f"the app in {checkout} did not start")


def wait_idle(page, timeout=300_000):
    page.wait_for_timeout(300)
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout)


VIEWER = '[data-testid="mv-counter"]'  # the in-browser viewer's step counter (absent in older apps)


def _step_shown(page) -> str:
    """The step counter's text, whichever view the app has: the viewer's, or the server view's metric."""
    if page.locator(VIEWER).count():
        return page.locator(VIEWER).inner_text()
    m = page.locator('[data-testid="stMetric"]', has_text="Step").first
    return m.locator('[data-testid="stMetricValue"]').inner_text()


def _time_step(page) -> float:
    """Click Step, return the seconds until the counter shows the next step (timed in Chromium's own
    clock for the viewer, where no server is involved; by wall clock for the server view)."""
    if page.locator(VIEWER).count():
        return page.evaluate(
            """() => new Promise(done => {
                 const root = [...document.querySelectorAll('*')].map(e => e.shadowRoot).filter(Boolean)
                   .map(s => s.querySelector('[data-testid="mv-step"]')).find(Boolean)
                   || document.querySelector('[data-testid="mv-step"]');
                 const counter = root.getRootNode().querySelector('[data-testid="mv-counter"]');
                 const before = counter.textContent, t0 = performance.now();
                 root.click();
                 const check = () => counter.textContent !== before ? done((performance.now() - t0) / 1000)
                                                                    : requestAnimationFrame(check);
                 check(); })"""
        )
    before = _step_shown(page)
    t0 = time.perf_counter()
    page.get_by_role("button", name="Step", exact=True).click()
    for _ in range(2400):
        page.wait_for_timeout(25)
        if _step_shown(page) != before:
            break
    wait_idle(page)
    return time.perf_counter() - t0


def _wait_decode(page):
    page.wait_for_function(
        """() => !!([...document.querySelectorAll('*')].map(e => e.shadowRoot).filter(Boolean)
                    .map(s => s.querySelector('[data-testid="mv-counter"]')).find(Boolean)
                 || document.querySelector('[data-testid="mv-counter"]')
                 || [...document.querySelectorAll('[data-testid="stMetric"]')]
                      .find(m => m.textContent.includes('Step')))""",
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


def one_round(browser, url) -> dict:
    out = {}
    ctx = browser.new_context(viewport={"width": 1500, "height": 1100})
    page = ctx.new_page()
    t0 = time.perf_counter()
    page.goto(url + "/sudoku_decode")
    _wait_decode(page)
    out["first_deep_link_s"] = time.perf_counter() - t0
    out["sudoku_step_s"] = statistics.median(_time_step(page) for _ in range(5))
    box = page.get_by_label("Index (0..999)")
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
    page.get_by_text("Loaded checkpoints").first.wait_for(timeout=300_000)
    wait_idle(page)
    t0 = time.perf_counter()
    page.get_by_role("link", name="Sampler comparison").click()
    page.get_by_text("Cells filled vs passes").first.wait_for(timeout=300_000)
    wait_idle(page)
    out["comparison_first_load_s"] = time.perf_counter() - t0
    slider = page.get_by_role("slider", name="gamma (budget, nats)")
    if slider.count():  # apps with a row of sliders per sampler (issue 32): one move of EB's gamma
        out["comparison_slider_s"] = statistics.median(_time_slider(page, slider.first) for _ in range(3))
    ctx.close()
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", default=None, help="an older checkout to time beside this one")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    apps = {"this checkout": ROOT} | ({"before": Path(a.before).resolve()} if a.before else {})
    runs = {name: [] for name in apps}
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--no-first-run",
                "--disable-dev-shm-usage",
            ],
        )
        for _ in range(a.rounds):
            for name, checkout in apps.items():  # alternating: drift hits both alike
                url, proc = start(checkout, a.python)
                try:
                    runs[name].append(one_round(browser, url))
                finally:
                    proc.terminate()
                    proc.wait(20)
        browser.close()
    res = {name: {k: round(statistics.median(r[k] for r in rs), 2) for k in rs[0]} for name, rs in runs.items()}
    res["rounds"] = a.rounds
    for name in apps:
        print(f"{name:14s} " + "  ".join(f"{k} {v:6.2f}" for k, v in res[name].items()))
    print(strict_json.dumps(res))


if __name__ == "__main__":
    main()
