"""Paths as the files the project writes record them: relative to the repository (results and
checkpoints travel between machines; an absolute path names only the machine that wrote it)."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def portable(path: str | Path | None) -> str | None:
    """path relative to the repository (POSIX separators; '../shared/...' for a sibling folder),
    or None for None. A relative path is taken as it is."""
    if path is None:
        return None
    p = Path(path)
    if not p.is_absolute():
        return p.as_posix()
    return Path(os.path.relpath(p.resolve(), REPO)).as_posix()
