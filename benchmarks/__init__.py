"""Benchmarks: each module measures one thing and writes its results file under results/
(`python -m benchmarks.NAME`); tables/ renders the README's and docs' tables from those files.
They read the library, never training/ or the app (import-linter)."""
