"""Progress bars on stderr for the command line (tqdm), so a long verb never waits without a word.

Bars draw only when stderr is a terminal (tqdm's disable=None): logs and CI stay clean, and stdout's
last line stays the verb's one-line JSON summary."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def callback(desc: str, unit: str = "it") -> Callable[..., None]:
    """A progress callback (done, total, *anything) drawing one bar; it closes itself when done."""
    from tqdm import tqdm

    bar: dict = {}

    def cb(done: int, total: int, *_: object) -> None:
        if "b" not in bar:
            bar["b"] = tqdm(total=total, desc=desc, unit=unit, leave=False, disable=None)
        bar["b"].n = done
        bar["b"].refresh()
        if done >= total:
            bar["b"].close()

    return cb


def iterate(items: Iterable[T], desc: str, total: int | None = None, unit: str = "it") -> Iterator[T]:
    """items, with a bar."""
    from tqdm import tqdm

    yield from tqdm(items, desc=desc, total=total, unit=unit, leave=False, disable=None)
