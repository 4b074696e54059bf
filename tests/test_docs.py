"""The README and docs/ stay true to results/: generated tables current, the README a map."""

from conftest import ROOT


def test_generated_tables_match_the_results_files():
    import importlib.util

    spec = importlib.util.spec_from_file_location("tables", ROOT / "benchmarks" / "tables.py")
    tables = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tables)
    for doc in tables.DOCS:
        text = doc.read_text()
        assert tables.render(text) == text, f"{doc.name}: run python benchmarks/tables.py --write"
    assert "<!-- tables:headline -->" in (ROOT / "README.md").read_text()


def test_readme_is_a_map():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 285  # a map of three domains (Sudoku, proteins, families); the narratives live in docs/
    for cmd in ("make app", "make test"):
        assert any(line.startswith(cmd) for line in lines), cmd
