"""The app under load: many browser sessions at once against one server, loopback only.

    python -m benchmarks.app_load [--sessions 20] [--seconds 60] | tee results/app/load.txt

One fresh server (this checkout); `--sessions` Playwright contexts in one headless Chromium
(Debian's), each opening the Sudoku decode page, choosing its own puzzle (session i: hard
test puzzle i) and then stepping through it in the in-browser viewer as fast as it repaints
for `--seconds` (back to the start at the end). Checked in every session after every step: no
exception on the page, the puzzle shown is the session's own and the step counter moved by
exactly one (sessions share cached models, never state).
At the end a new session reads the home page's count of models built in this server
process (they must load once). The server's resident memory is sampled every 0.2 s (peak
and last reported). Prints p50 / p95 step latency (click to the new counter) and, last, a
one-line JSON. Bounded: at most 50 sessions and 300 s, loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import sys
import threading
import time
from pathlib import Path

from benchmarks.app_server import ROOT, launch, start, stop
from mi_viz.core import strict_json
from mi_viz.core.cli_types import finite_float

IDLE = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class RssSampler(threading.Thread):
    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.peak, self.last, self.stop = pid, 0.0, 0.0, threading.Event()

    def run(self):
        while not self.stop.is_set():
            try:
                self.last = rss_mib(self.pid)
            except OSError:
                return
            self.peak = max(self.peak, self.last)
            time.sleep(0.2)


COUNTER = '[data-testid="mv-counter"]'  # the in-browser viewer's step counter


async def step_value(page) -> tuple[int, int]:
    """(step, steps) the viewer shows."""
    txt = await page.locator(COUNTER).inner_text()
    m = re.match(r"Step (\d+) / (\d+)", txt)
    assert m is not None, txt
    return int(m.group(1)), int(m.group(2))


async def session(browser, url: str, i: int, seconds: float, out: dict):
    """One user: open the decode page, pick hard test puzzle i, then step through its decode in
    the in-browser viewer (Step; at the end, back to the start) as fast as it repaints."""
    rec = out[i] = {"steps": [], "errors": [], "mismatches": 0}
    ctx = await browser.new_context(viewport={"width": 1300, "height": 1000})
    page = await ctx.new_page()
    try:
        await page.goto(url + "/sudoku_decode", timeout=600_000)
        await page.locator(COUNTER).wait_for(timeout=600_000)
        box = page.get_by_role("spinbutton", name="Index (0..999)")  # the field alone, not its help button
        await box.fill(str(i))
        await box.press("Enter")
        await page.get_by_text(f"#{i}", exact=False).first.wait_for(timeout=600_000)
        await page.wait_for_function(IDLE, timeout=600_000)
        await page.locator(COUNTER).wait_for(timeout=600_000)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            before, n = await step_value(page)
            button = "mv-step" if before < n else "mv-start"
            t0 = time.perf_counter()
            await page.get_by_test_id(button).click()
            for _ in range(2400):
                if (await step_value(page))[0] != before:
                    break
                await page.wait_for_timeout(5)
            rec["steps"].append(time.perf_counter() - t0)
            if await page.locator('[data-testid="stException"]').count():
                rec["errors"].append(await page.locator('[data-testid="stException"]').first.inner_text())
                break
            now, _ = await step_value(page)
            own = await page.get_by_text(f"#{i}", exact=False).count()
            if now != (before + 1 if before < n else 1) or own == 0:
                rec["mismatches"] += 1
    except Exception as e:  # noqa: BLE001 - a session's failure is reported, not fatal to the others
        rec["errors"].append(f"{type(e).__name__}: {e}"[:300])
    finally:
        await ctx.close()


async def run(url: str, sessions: int, seconds: float) -> tuple[dict, str]:
    from playwright.async_api import async_playwright

    out: dict = {}
    async with async_playwright() as p:
        browser = await launch(  # many sessions at once: none of them throttled as a background tab
            p.chromium,
            "--disable-background-timer-throttling",
            "--disable-renderer-backgrounding",
            "--disable-backgrounding-occluded-windows",
        )
        await asyncio.gather(*(session(browser, url, i, seconds, out) for i in range(sessions)))
        ctx = await browser.new_context()
        page = await ctx.new_page()
        await page.goto(url + "/", timeout=600_000)
        cap = page.get_by_text("Models built in this server process")
        await cap.first.wait_for(timeout=600_000)
        loads = await cap.first.inner_text()
        await browser.close()
    return out, loads


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--seconds", type=finite_float, default=60.0)
    ap.add_argument("--python", default=sys.executable)
    a = ap.parse_args(argv)
    if not (1 <= a.sessions <= 50 and 0 < a.seconds <= 300):
        raise SystemExit("--sessions must be 1..50 and --seconds at most 300")
    url, proc = start(ROOT, a.python)
    sampler = RssSampler(proc.pid)
    sampler.start()
    t0 = time.perf_counter()
    try:
        out, loads = asyncio.run(run(url, a.sessions, a.seconds))
    finally:
        sampler.stop.set()
        stop(proc)
    steps = sorted(s for r in out.values() for s in r["steps"])
    # the home page's "Models built ...: Sudoku MDM x1, Sudoku MDM MI head x1 (loaded once ...)"
    built = {name.strip(): int(n) for name, n in re.findall(r"([^,:]+?) x(\d+)", loads)}
    heads = [n for name, n in built.items() if name.endswith("MI head")]
    backbones = [n for name, n in built.items() if not name.endswith("MI head")]
    res = {
        "sessions": a.sessions,
        "seconds_each": a.seconds,
        "wall_s": round(time.perf_counter() - t0, 1),
        "steps": len(steps),
        "step_p50_s": round(statistics.median(steps), 3) if steps else None,
        "step_p95_s": round(steps[int(0.95 * (len(steps) - 1))], 3) if steps else None,
        "sessions_with_errors": sum(bool(r["errors"]) for r in out.values()),
        "state_mismatches": sum(r["mismatches"] for r in out.values()),
        "mdm_loads": max(backbones, default=None),  # the most any one backbone was built (1: shared)
        "head_loads": max(heads, default=None),
        "peak_rss_mib": round(sampler.peak, 1),
        "last_rss_mib": round(sampler.last, 1),
    }
    for i, r in sorted(out.items()):
        print(f"session {i:2d}: {len(r['steps']):3d} steps" + (f"  ERROR {r['errors'][0]}" if r["errors"] else ""))
    print(
        f"{res['steps']} steps in {a.sessions} sessions: p50 {res['step_p50_s']} s, p95 {res['step_p95_s']} s; "
        f"errors in {res['sessions_with_errors']} sessions, {res['state_mismatches']} state mismatches; "
        f"models built MDM x{res['mdm_loads']}, head x{res['head_loads']}; peak RSS {res['peak_rss_mib']} MiB"
    )
    print(strict_json.dumps(res))


if __name__ == "__main__":
    main()
