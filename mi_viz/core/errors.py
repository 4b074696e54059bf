"""The one kind of error that is the user's to fix: bad input (a puzzle, a sequence, an
alignment, a structure), a checkpoint that is missing, corrupt or of another kind, an optional
model that is not on this machine. The CLI turns it into `error: ...` and exit status 2, the app
into a message; anything else is a bug and keeps its traceback.

Each domain's own error subclasses it (BoardError, SequenceError, AlignmentError, ...), keeping
the built-in base it had (ValueError, RuntimeError) so that older `except` clauses still hold.
"""

from __future__ import annotations


class UserError(Exception):
    """Bad input or an absent / unusable file or model: the message says what and how to fix it."""
