"""The one kind of error that is the user's to fix: bad input (a puzzle, a sequence, an
alignment, a structure), a checkpoint that is missing, corrupt or of another kind, an optional
model that is not on this machine. The CLI turns it into `error: ...` and exit status 2, the app
into a message; anything else is a bug and keeps its traceback.

Each domain's own error subclasses it (BoardError, SequenceError, AlignmentError, ...), keeping
the built-in base it had (ValueError, RuntimeError) so that older `except` clauses still hold.
"""

from __future__ import annotations

import sys
from collections.abc import Callable


class UserError(Exception):
    """Bad input or an absent / unusable file or model: the message says what and how to fix it."""


class InputError(UserError, ValueError):
    """A value the user handed over that cannot be used: a grid, a sampler's parameter, an index."""


class MissingFileError(UserError, FileNotFoundError):
    """A file the user named that is not there."""


def exit_on_user_error(main: Callable[[], object]) -> None:
    """A script's entry point (training/*.py): main(), with a UserError turned into `error: ...` on
    stderr and exit status 2, as the CLI does."""
    try:
        main()
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None
