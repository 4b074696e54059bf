"""Copy the browser test's screenshots into docs/screenshots/: 256 colours, lossless WebP.

    python tools/update_screenshots.py            # after `make test` (test-artifacts/)
    python tools/update_screenshots.py --in-place # shrink what docs/screenshots/ holds now

Only names docs/screenshots/ already has are copied (the docs choose which pages to show).
UI screenshots have few colours: an adaptive 256-colour palette without dithering keeps text
and heatmaps crisp at about a third of the bytes, and lossless WebP stores that palette image
in 30 % fewer bytes than PNG (64 colours would save 20 % more but bands the colour bars), which
keeps the tree under its 35 MB line. Browsers and GitHub show WebP in Markdown.
"""

from __future__ import annotations

import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "screenshots"


def shrink(src: Path, dst: Path) -> tuple[int, int]:
    """src -> dst as a 256-colour lossless WebP; returns (bytes before, bytes after)."""
    from PIL import Image

    before = src.stat().st_size
    img = Image.open(src).convert("RGB").quantize(256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    tmp = dst.with_name(dst.name + ".tmp")
    img.save(tmp, format="WEBP", lossless=True, quality=100, method=6)
    tmp.replace(dst)
    return before, dst.stat().st_size


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--from", dest="src", default=str(ROOT / "test-artifacts"), help="the browser test's folder")
    ap.add_argument("--in-place", action="store_true", help="shrink docs/screenshots/ itself")
    a = ap.parse_args(argv)
    src = DOCS if a.in_place else Path(a.src)
    for dst in sorted(DOCS.glob("*.webp")):
        shot = src / (dst.stem + (".webp" if a.in_place else ".png"))  # the browser test saves PNG
        if not shot.exists():
            print(f"{dst.name}: not in {src}, kept")
            continue
        before, after = shrink(shot, dst)
        print(f"{dst.name}: {before:,} -> {after:,} bytes")


if __name__ == "__main__":
    main()
