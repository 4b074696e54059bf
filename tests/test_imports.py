"""The import rule, checked on the source: data flows one way.

- mi_viz/core imports no domain, no app page, no training or benchmark script;
- nothing in mi_viz imports streamlit, the pages, training/ or benchmarks/;
- benchmarks/ never imports training/;
- no file anywhere edits sys.path.
"""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

APP_OR_SCRIPTS = ("streamlit", "pages", "app", "training", "benchmarks")


def _imports(path: Path, pkg: tuple[str, ...] | None = None) -> list[str]:
    """Absolute module names a file imports (relative imports resolved against its package, by
    default the folders between the repository and the file)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    pkg = pkg if pkg is not None else path.relative_to(ROOT).with_suffix("").parts[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[: len(pkg) - node.level + 1]
                mod = ".".join(base + ((node.module,) if node.module else ()))
                out += [mod] + ([f"{mod}.{a.name}" for a in node.names] if not node.module else [])
            else:
                out.append(node.module or "")
    return out


def _files(folder: str):
    return sorted((ROOT / folder).rglob("*.py"))


def test_core_imports_no_domain_app_or_scripts():
    bad = [
        (str(f.relative_to(ROOT)), m)
        for f in _files("mi_viz/core")
        for m in _imports(f)
        if m.startswith("mi_viz.domains") or m.split(".")[0] in APP_OR_SCRIPTS
    ]
    assert not bad, bad


def test_library_never_imports_the_app_or_scripts():
    bad = [
        (str(f.relative_to(ROOT)), m)
        for f in _files("mi_viz")
        for m in _imports(f)
        if m.split(".")[0] in APP_OR_SCRIPTS
    ]
    assert not bad, bad


def test_benchmarks_do_not_import_training():
    bad = [
        (str(f.relative_to(ROOT)), m)
        for f in _files("benchmarks")
        for m in _imports(f)
        if m.split(".")[0] == "training" or m.startswith(("train_", "make_"))
    ]
    assert not bad, bad


def test_nothing_edits_sys_path():
    files = [f for d in ("mi_viz", "pages", "training", "benchmarks", "tests") for f in _files(d)] + [ROOT / "app.py"]
    bad = [str(f.relative_to(ROOT)) for f in files if "sys.path" in f.read_text() and f.name != "test_imports.py"]
    assert not bad, bad


def test_the_rule_catches_a_violation(tmp_path):
    """The checker itself: a core file importing a domain is reported (relative form included)."""
    probe = tmp_path / "probe.py"  # read as if it sat in mi_viz/core (nothing is written into the package)
    probe.write_text("from ..domains import sudoku\nimport streamlit\n")
    got = _imports(probe, pkg=("mi_viz", "core"))
    assert "mi_viz.domains" in got and "streamlit" in got
