"""`make app`: start the app with its heavy imports done and its first pages warm before the
first browser arrives.

`streamlit run app.py` imports torch, the library and the views on the first page request, which
the first visitor waits for (about 1.6 s of the first deep link on a 2-core machine:
docs/app.md, latency), and decodes the pages' default puzzle and rows on their first visit
(the comparison page's three decodes, 1.5 s). This launcher imports them first, in the server's
own process, then runs the pages a first visitor opens most (WARM) once, headless, so their
models are loaded and their default decodes sit in the process-wide caches every session reads
(kit.caches); then it hands over to Streamlit's own `run` with the same arguments. The warm-up
takes a few seconds before the server listens; MI_VIZ_WARM=0 skips it."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from streamlit.web import cli

import pages.views  # noqa: F401  (torch, the library, every view: what the first request would import)

APP = Path(__file__).resolve().parents[1] / "app.py"
WARM = ("pages/sudoku_decode.py", "pages/sudoku_comparison.py")  # the first pages of most visits


def warm(pages: tuple[str, ...] = WARM) -> None:
    """Each page run once at its defaults, as a first visitor would open it (Streamlit's AppTest
    runs it in this process without a browser): what it computes stays in the shared caches."""
    from streamlit.testing.v1 import AppTest

    for page in pages:
        t0 = time.perf_counter()
        at = AppTest.from_file(str(APP), default_timeout=300)
        at.switch_page(page)
        at.run()
        failed = f" (failed: {[e.value for e in at.exception]})" if at.exception else ""
        print(f"warm: {page} in {time.perf_counter() - t0:.1f} s{failed}", flush=True)


def main(argv: list[str] | None = None) -> None:
    if os.environ.get("MI_VIZ_WARM", "1") != "0":
        warm()
    sys.argv = ["streamlit", "run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    cli.main()


if __name__ == "__main__":
    main()
