"""`make app`: start the app with its heavy imports done before the first browser arrives.

`streamlit run app.py` imports torch, the library and the views on the first page request, which
the first visitor waits for (about 1.6 s of the first deep link on a 2-core machine:
docs/app.md, latency). This launcher imports them first, in the server's own process, then
hands over to Streamlit's own `run` with the same arguments: nothing else changes."""

from __future__ import annotations

import sys
from pathlib import Path

from streamlit.web import cli

import pages.views  # noqa: F401  (torch, the library, every view: what the first request would import)

APP = Path(__file__).resolve().parents[1] / "app.py"


def main(argv: list[str] | None = None) -> None:
    sys.argv = ["streamlit", "run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    cli.main()


if __name__ == "__main__":
    main()
