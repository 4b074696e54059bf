"""`make app`: start the app with its heavy imports done and its first pages warm before the
first browser arrives.

`streamlit run app.py` imports torch, the library and the views on the first page request, which
the first visitor waits for (about 1.6 s of the first deep link on a 2-core machine:
docs/app.md, latency), and decodes the pages' default puzzle and rows on their first visit
(the comparison page's three decodes, 1.5 s). This launcher imports them first, in the server's
own process, then runs the pages a first visitor opens most (WARM) once, headless, so their
models are loaded and their default decodes sit in the process-wide caches every session reads
(kit.caches); then it hands over to Streamlit's own `run` with the same arguments. The warm-up
takes a few seconds before the server listens; MI_VIZ_WARM=0 skips it.

The pretrained backbones (AntiBERTy, Sapiens: transformers' import and their weights, 10-30 s on 2
cores) are built after that in a background thread (warm_backbones), with their MI heads and the
rate their ground truth is priced at, once a first visitor's page has run and the app is quiet: in
one process the thread would take the GIL and the cores from that visitor's first pages
(pages.kit.activity). A visitor who picks one before it is ready sees the spinner of its load, never
a second load (Streamlit's resource cache computes a key once)."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

from streamlit.web import cli

import pages.views  # noqa: F401  (torch, the library, every view: what the first request would import)
from pages.kit import activity, caches, models
from pages.views.antibody import first_state
from pages.views.protein_backbones import protein_backbones

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


def warm_backbones(labels: tuple[str, ...] | None = None) -> None:
    """Build the pretrained backbones (all of them, or those named), their shipped heads, and the rate
    each prices its ground truth at, printing what each took (the warm-up's own cost, reported). Each
    step waits until no visitor's page has run for a moment (pages.kit.activity): in one process the
    warm-up would take the GIL and the 2 cores from the first visitor's pages."""
    opts, start = protein_backbones(), time.perf_counter()
    for label in labels or tuple(k for k, b in opts.items() if b.domain == "antibody"):
        b, t0 = opts[label], time.perf_counter()
        try:
            activity.wait_quiet()
            models.backbone_model(b)
            for _, path in b.heads:
                activity.wait_quiet()
                models.head_model(path, f"{b.label} MI head")
            activity.wait_quiet()
            caches.seconds_per_pass(b, first_state("cdr3"), 1e-3)
        except Exception as e:  # noqa: BLE001 - a warm-up never stops the server; the page will say what is wrong
            print(f"warm: {label} failed ({type(e).__name__}: {e})", flush=True)
            continue
        print(f"warm: {label} in {time.perf_counter() - t0:.1f} s (in the background)", flush=True)
    print(f"warm: every backbone ready in {time.perf_counter() - start:.1f} s (in the background)", flush=True)


def main(argv: list[str] | None = None) -> None:
    if os.environ.get("MI_VIZ_WARM", "1") != "0":
        warm()
        activity.first_page.clear()  # the warm-up's own page runs are not a visitor's
        threading.Thread(target=warm_backbones, name="warm-backbones", daemon=True).start()
    sys.argv = ["streamlit", "run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    cli.main()


if __name__ == "__main__":
    main()
