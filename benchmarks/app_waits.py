"""The waits an antibody researcher meets in the app (docs/app.md names the targets), in Debian's Chromium.

    python -m benchmarks.app_waits [--out results/app/waits.json]

One server as `make app` starts it (pages/serve.py: the first pages warm, then the pretrained
backbones, their heads and their ground-truth rate built in a background thread once a first visitor's
page has run and the app is quiet); the home page is visited once, the warm-up's own times are read
from the server's output and reported. Once it is done, in one browser session:

- first AntiBERTy decode: AntiBERTy picked on the protein decode page, until the viewer shows the
  first test chain's CDR3 infill (target <= 5 s after the warm-up), and until the page is complete
  (`_page_s`: the native beside the design and their PLL, drawn under the viewer, included);
- a step of that decode, click to repaint, timed in Chromium's own clock: the median over its steps
  (target <= 50 ms);
- a pasted chain: a second natural chain typed into the paste box, until its infill is shown
  (target <= 2 s; and `_page_s`, the page complete);
- the ground truth of the viewer's first step (the whole CDR3 masked): click until its progress bar
  and Cancel are visible
  (target <= 1 s), then Cancel (until the page says nothing was kept);
- the same ground-truth click on the Sudoku decode page (its truth may finish before a Cancel is
  needed: then the time to its map's note is what is reported).

Wall seconds around Playwright's waits (it polls on animation frames), so each figure includes the
browser's own repaint. The figures are only meaningful on an idle machine: run it with nothing else
on the cores (`make` jobs paused). Prints a table and, last, a one-line JSON.
"""

from __future__ import annotations

import argparse
import gzip
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.app_latency import _time_step
from benchmarks.app_server import FIND, ROOT, launch, start, stop
from benchmarks.report import save, show

STATUS = '[data-testid="stStatusWidget"]'  # Streamlit's "running" badge: present while a script runs
TARGETS = {"first_antiberty_decode_s": 5.0, "pasted_chain_s": 2.0, "step_ms": 50.0,
           "antiberty_gt_cancel_visible_s": 1.0, "sudoku_gt_cancel_or_map_s": 1.0}  # fmt: skip


def settle(page, action, shown=None, timeout=300_000) -> float:
    """Seconds from `action()` until the script run it starts is over (the running badge came and
    went; a run too short to show it counts as over) and `shown` (a locator) is visible."""
    t0 = time.perf_counter()
    action()
    try:
        page.wait_for_selector(STATUS, state="attached", timeout=3_000)
    except Exception:  # noqa: BLE001 - Playwright's TimeoutError: the run ended before the badge showed
        pass
    page.wait_for_selector(STATUS, state="detached", timeout=timeout)
    if shown is not None:
        shown.first.wait_for(timeout=timeout)
    return time.perf_counter() - t0


COUNTER_TEXT = f"""() => {{ const c = ({FIND})('[data-testid="mv-counter"]'); return c ? c.textContent : null; }}"""


def shown_and_settled(page, action, settled_by=None) -> tuple[float, float]:
    """(seconds until the viewer shows a decode other than the one on screen, seconds until the run
    is over): what a researcher sees first (the decode, stepping at once), and the page complete
    (what is drawn under it: the native beside the design, its PLL)."""
    before = page.evaluate(COUNTER_TEXT)
    t0 = time.perf_counter()
    shown: list[float] = []

    def act():
        action()
        page.wait_for_function(f"(b) => {{ const t = ({COUNTER_TEXT})(); return t !== null && t !== b; }}",
                               arg=before, polling="raf", timeout=300_000)  # fmt: skip
        shown.append(time.perf_counter() - t0)

    whole = settle(page, act, settled_by)
    return shown[0], whole


def first_visit(browser, url: str) -> None:
    """The home page opened once, as a first visitor would (the launcher's backbone warm-up starts
    after a visitor's first page: pages.kit.activity)."""
    ctx = browser.new_context()
    page = ctx.new_page()
    page.goto(url + "/", wait_until="networkidle")
    page.get_by_text("Start here").first.wait_for(timeout=300_000)
    ctx.close()


def warmed(log: Path, timeout: float = 600) -> dict:
    """The server's warm-up lines ("warm: PAGE in X s", "warm: BACKBONE in X s (in the background)"),
    once it says every pretrained backbone is built (or failed: the page will say why): {what: s}."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        text = log.read_text(errors="replace")
        got = {m[1]: float(m[2]) for m in re.finditer(r"warm: (.+?) in ([\d.]+) s", text)}
        if "warm: every backbone ready" in text:
            return got
        time.sleep(1)
    raise RuntimeError(f"the warm-up did not finish in {timeout} s:\n{log.read_text()[-2000:]}")


def second_chain() -> str:
    """The second natural test chain's V domain (the page opens on the first)."""
    with gzip.open(ROOT / "data" / "antibody" / "natural" / "sabdab_test.tsv.gz", "rt") as f:
        header, _, row = next(f).rstrip("\n").split("\t"), next(f), next(f).rstrip("\n").split("\t")
    return row[header.index("sequence")]


def ground_truth_click(page) -> float:
    """Seconds from the viewer's ground-truth click until its Cancel and progress bar are visible,
    or its map's note says it is done (a truth faster than a Cancel)."""
    t0 = time.perf_counter()
    page.get_by_test_id("mv-gt-button").click()
    page.wait_for_function(
        f"""() => {{ const progress = document.querySelector('[data-testid="stProgress"]');
                   const cancel = [...document.querySelectorAll('button')]
                     .find(b => b.innerText.includes('Cancel the ground truth'));
                   const note = ({FIND})('[data-testid="mv-gt-note"]');
                   return (progress && cancel) || (note && note.textContent.includes('passes,')); }}""",
        polling="raf",
        timeout=300_000,
    )
    return time.perf_counter() - t0


def say(what: str) -> None:
    """Where the benchmark is, on stderr (a wait that hangs is named)."""
    print(f"app_waits: {what}", file=sys.stderr, flush=True)


def measure(browser, url: str) -> dict:
    out: dict = {}
    ctx = browser.new_context(viewport={"width": 1500, "height": 1100})
    page = ctx.new_page()
    page.goto(url + "/protein_decode", wait_until="networkidle")
    page.get_by_test_id("mv-counter").wait_for(timeout=300_000)
    settle(page, lambda: None)

    def pick():
        page.locator('[data-testid="stSelectbox"]', has_text="Protein backbone").click()
        page.get_by_role("option", name=re.compile("AntiBERTy")).click()

    say("first AntiBERTy decode")
    out["first_antiberty_decode_s"], out["first_antiberty_page_s"] = shown_and_settled(
        page, pick, page.get_by_text(re.compile(r"cdr3 masked \(\d+\)"))
    )
    page.get_by_test_id("mv-counter").wait_for()
    say("a step")
    page.get_by_test_id("mv-start").click()  # the viewer opens on the decode's last step
    counter = re.match(r"Step \d+ / (\d+)", page.get_by_test_id("mv-counter").inner_text())
    if counter is None:
        raise RuntimeError(f"the viewer's counter reads {page.get_by_test_id('mv-counter').inner_text()!r}")
    steps = int(counter[1])
    out["steps"] = steps
    out["step_ms"] = round(1000 * statistics.median([_time_step(page) for _ in range(steps - 1)]), 1)
    say("AntiBERTy ground truth")
    page.get_by_test_id("mv-start").click()  # the first step, the whole region masked (its last may hold one)
    out["antiberty_gt_cancel_visible_s"] = ground_truth_click(page)
    cancel = page.get_by_role("button", name="Cancel the ground truth")
    if cancel.count():
        out["antiberty_gt_cancel_s"] = settle(
            page, cancel.click, page.get_by_text("Ground truth cancelled: nothing of it was kept.")
        )
    say("a pasted chain")
    settle(page, lambda: page.get_by_text("Paste or upload your own V domain").click())
    box = page.get_by_label("A heavy or light V domain (amino acids; FASTA works too)")
    box.fill(second_chain())
    out["pasted_chain_s"], out["pasted_chain_page_s"] = shown_and_settled(page, lambda: box.press("Control+Enter"))
    say("Sudoku ground truth")
    page.goto(url + "/sudoku_decode", wait_until="networkidle")
    page.get_by_test_id("mv-counter").wait_for(timeout=300_000)
    settle(page, lambda: None)
    out["sudoku_gt_cancel_or_map_s"] = ground_truth_click(page)
    ctx.close()
    return {k: round(v, 2) if k.endswith("_s") else v for k, v in out.items()}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=None, help="e.g. results/app/waits.json")
    a = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    log = Path(tempfile.mkdtemp()) / "server.log"
    t0 = time.perf_counter()
    url, proc = start(warm=True, log_path=log)
    try:
        with sync_playwright() as p:
            browser = launch(p.chromium)
            first_visit(browser, url)  # the backbones' warm-up waits for a visitor's first page
            warm = warmed(log)
            row: dict = {"warm_up": warm, "warm_up_wall_s": round(time.perf_counter() - t0, 1)}
            row.update(measure(browser, url))
            browser.close()
    finally:
        stop(proc)
    row["targets"] = TARGETS
    row["met"] = {k: row[k] <= v for k, v in TARGETS.items() if k in row}
    show({k: v for k, v in row.items() if k not in ("warm_up", "targets", "met")})
    save(row, a.out)


if __name__ == "__main__":
    main()
