"""The app served in a subprocess, and the browser that drives it: for the app benchmarks
(app_latency, app_load) and the browser test. One start and one launch, so that what the
benchmarks time is the server and the browser the test checks.

    url, proc = start()            # `make app`'s launcher (pages/serve.py) on a free port
    browser = launch(playwright.chromium)
    ...
    stop(proc)
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"  # Debian's (make chromium), never a downloaded one
# headless on a bare container, and quiet: nothing reaches the network by itself
CHROMIUM_ARGS = ("--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage")  # fmt: skip


# JavaScript: the element a CSS selector names, in the page or in any open shadow root (the viewer's
# component draws inside one): `(${FIND})('[data-testid="mv-counter"]')` in a page.evaluate
FIND = """(s) => [...document.querySelectorAll('*')].map(e => e.shadowRoot).filter(Boolean)
                .map(r => r.querySelector(s)).find(Boolean) || document.querySelector(s)"""


def launch(chromium, *extra_args: str):
    """Debian's Chromium through Playwright's browser type (sync or async: under async, await it)."""
    return chromium.launch(executable_path=CHROMIUM, headless=True, args=[*CHROMIUM_ARGS, *extra_args])


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start(
    checkout: Path = ROOT,
    python: str = sys.executable,
    warm: bool = True,
    log_path: Path | None = None,
    **env_extra: str,
):
    """A server for `checkout` on a free port, once it answers its health check: (url, process).
    warm: as `make app` starts it, its launcher (pages/serve.py: the imports done and the first
    pages run before the first request) where the checkout has one; else `streamlit run`, the
    first request paying for both (what the browser test wants: its first page decides the mode).
    The server's output goes to a file (a pipe nobody reads would fill and stall the server): a
    temporary one, or log_path for a caller that reads what the warm-up printed; read back to name
    the cause when it does not start."""
    port = free_port()
    env = dict(os.environ, STREAMLIT_BROWSER_GATHER_USAGE_STATS="false", PYTHONPATH=str(checkout), **env_extra)
    serve = warm and (checkout / "pages" / "serve.py").exists()
    launcher = ["-m", "pages.serve"] if serve else ["-m", "streamlit", "run", str(checkout / "app.py")]
    flags = ["--server.headless", "true", "--server.port", str(port), "--server.address", "127.0.0.1"]
    log = open(log_path, "w+b") if log_path else tempfile.TemporaryFile()  # noqa: SIM115 - the server holds it
    proc = subprocess.Popen(
        [python, *launcher, *flags, "--server.fileWatcherType", "none"],
        cwd=checkout,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(240):
        try:
            urllib.request.urlopen(url + "/_stcore/health", timeout=1)
            return url, proc
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.5)
    proc.kill()
    log.seek(0)
    raise RuntimeError(f"the app in {checkout} did not start: " + log.read().decode(errors="replace")[-2000:])


def stop(proc: subprocess.Popen) -> None:
    """Stop a server; a busy one may take a while to exit, and is killed after 30 s."""
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)
