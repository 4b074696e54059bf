"""Whether a visitor's page is running in this server: the background warm-up waits for a quiet moment.

Why: the launcher (pages/serve.py) builds the pretrained antibody backbones in a thread of the server's
own process, so that their pages open warm. On 2 cores that thread took the CPU and the GIL from the
first visitor's pages (the first Sudoku deep link 3.8 s against 2.4 s before the warm-up existed,
measured by benchmarks.app_latency): every page run is marked here, and the warm-up starts after the
first visitor's first page and does each of its steps only once the app has been quiet for 5 s (a
reader's pause, longer than the gaps between the clicks of someone at work: a step that starts
anyway, AntiBERTy's build, delays one click by a second or two).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

_lock = threading.Lock()
_running = 0
_last = 0.0  # time.monotonic() when the last page run ended (0: none yet)
first_page = threading.Event()  # set when a visitor's first page run has ended


@contextlib.contextmanager
def page_run() -> Iterator[None]:
    """Around one page run (app.py): counted while it runs, its end time kept."""
    global _running, _last
    with _lock:
        _running += 1
    try:
        yield
    finally:
        with _lock:
            _running -= 1
            _last = time.monotonic()
        first_page.set()


def wait_quiet(seconds: float = 5.0, poll: float = 0.25) -> None:
    """Return once a visitor's first page has run and no page has run for `seconds` since."""
    first_page.wait()
    while True:
        with _lock:
            busy = _running > 0 or time.monotonic() - _last < seconds  # _last is set: a page has run
        if not busy:
            return
        time.sleep(poll)
