"""Protein command-line verbs (filled in by the protein issues)."""

COMMANDS: tuple[str, ...] = ()
