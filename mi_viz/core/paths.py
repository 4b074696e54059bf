"""Paths as the files the project writes record them: relative to the repository (results and
checkpoints travel between machines; an absolute path names only the machine that wrote it)."""

from __future__ import annotations

import os
from pathlib import Path

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
