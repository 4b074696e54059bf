"""Paths as the files the project writes record them: relative to the repository (results and
checkpoints travel between machines; an absolute path names only the machine that wrote it),
and text files read whether or not they are stored compressed."""

from __future__ import annotations

import gzip
import lzma
import os
from pathlib import Path
from typing import IO

REPO = Path(__file__).resolve().parents[2]


def portable(path: str | Path | None, repo: Path = REPO) -> str | None:
    """path relative to the repository (POSIX separators; '../shared/...' for a sibling folder),
    or None for None. A relative path is taken as it is. Outside the checkout the path is read as
    written, never through its symlinks: with ../shared a link (a common set-up) its files stay
    '../shared/...', not a climb to wherever the link points, which no other machine has."""
    if path is None:
        return None
    p = Path(path)
    if not p.is_absolute():
        return p.as_posix()
    real = p.resolve()
    if real.is_relative_to(repo):  # inside the checkout, however the caller reached it
        return real.relative_to(repo).as_posix()
    return Path(os.path.relpath(os.path.normpath(p), repo)).as_posix()


def open_text(path: str | Path) -> IO[str]:
    """A text file for reading, UTF-8; NAME.gz and NAME.xz are decompressed as they are read
    (the tree stores its larger data sets gzip-compressed to stay small)."""
    p = Path(path)
    if p.suffix == ".gz":
        return gzip.open(p, "rt", encoding="utf-8")
    if p.suffix == ".xz":
        return lzma.open(p, "rt", encoding="utf-8")
    return open(p, encoding="utf-8")


def read_text(path: str | Path) -> str:
    """A text file's whole content, decompressed where its name says so (open_text)."""
    with open_text(path) as f:
        return f.read()


def write_text(path: str | Path, text: str) -> None:
    """Write a text file, gzip-compressed when its name ends in .gz; the gzip header holds no time and
    no name, so the same text always makes the same bytes (a committed result regenerates identical)."""
    p = Path(path)
    if p.suffix != ".gz":
        p.write_text(text, encoding="utf-8")
        return
    with open(p, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as f:
        f.write(text.encode("utf-8"))


def stored_name(path: str | Path) -> str:
    """The name a result records for an input file: its file name, a compression suffix (.gz)
    left out, so that storing the file compressed does not change any result's identity."""
    return Path(path).name.removesuffix(".gz")
