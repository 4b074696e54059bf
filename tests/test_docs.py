"""The README and docs/ stay true to results/: generated tables current, the README a map."""

import pytest
from conftest import ROOT


def test_generated_tables_match_the_results_files():
    from benchmarks import tables

    for doc in tables.DOCS:
        text = doc.read_text()
        assert tables.render(text) == text, f"{doc.name}: run python -m benchmarks.tables --write"
    assert "<!-- tables:headline -->" in (ROOT / "README.md").read_text()


def test_a_figure_in_a_sentence_that_disagrees_with_its_file_fails_the_check(tmp_path, monkeypatch, capsys):
    """Issue 49: a figure quoted in prose (<!-- v:NAME -->) is checked like a table; plant a wrong
    one (the PDZ backbone's training time, once typed as RRM's 50 minutes) and --check fails."""
    from benchmarks import tables

    doc = tmp_path / "results-family.md"
    line = next(x for x in (ROOT / "docs" / "results-family.md").read_text().splitlines() if "v:pdz_training" in x)
    text = f"Some prose.\n{line}\nMore.\n"  # the docs' own sentence
    assert "<!-- v:pdz_training -->26 minutes" in text
    doc.write_text(text)
    monkeypatch.setattr(tables, "DOCS", [doc])
    assert tables.main(["--check"]) == 0
    doc.write_text(text.replace("<!-- v:pdz_training -->26 minutes", "<!-- v:pdz_training -->50 minutes"))
    assert tables.main(["--check"]) == 1 and "stale" in capsys.readouterr().err
    tables.main(["--write"])
    assert doc.read_text() == text  # --write puts the file's figure back


def test_a_marked_paragraph_quoting_a_figure_its_file_lacks_fails_the_check(tmp_path, monkeypatch, capsys):
    """A paragraph opening with `<!-- from: FILE -->` (sources.py) passes with the README's own
    figures, fails when one is typed wrong, and says which figure and file."""
    from benchmarks import tables

    para = next(p for p in (ROOT / "README.md").read_text().split("\n\n") if "from: results/sudoku/mi_report.json" in p)
    shown = tables.sources.figures(para)[0][0]
    doc = tmp_path / "results-sudoku.md"
    doc.write_text(f"# Title\n\n{para}\n")
    monkeypatch.setattr(tables, "DOCS", [doc])
    assert tables.main(["--check"]) == 0
    doc.write_text(f"# Title\n\n{para.replace(shown, '0.123456', 1)}\n")
    assert tables.main(["--check"]) == 1
    err = capsys.readouterr().err
    assert "'0.123456' is not in results/sudoku/mi_report.json" in err
    doc.write_text("<!-- from: results/sudoku/no_such.json -->\nA figure 0.5.\n")
    with pytest.raises(FileNotFoundError, match="no_such.json"):
        tables.main(["--check"])


def test_readme_is_a_map():
    lines = (ROOT / "README.md").read_text().splitlines()
    # a map of four domains (Sudoku, proteins, families, antibodies); the narratives live in docs/
    assert len(lines) <= 270
    for cmd in ("make app", "make test"):
        assert any(line.startswith(cmd) for line in lines), cmd


def test_every_committed_sweep_row_was_decoded_by_shipped_weights():
    """A results row names the sha of the backbone and head that produced it: each must be a
    checkpoint in checkpoints/ now, so that no table reads numbers of weights users cannot load
    (after a backbone is retrained or stored in another dtype, its results are re-run)."""
    import csv

    from mi_viz.core.checkpoints import fingerprint
    from mi_viz.domains.protein.masked_lm import lm_weights

    shipped = {fingerprint(p) for p in (ROOT / "checkpoints").glob("*.safetensors*")}
    for wheel in ("antiberty", "sapiens-vh", "sapiens-vl"):  # installed from their wheels (make setup), not shipped
        shipped.add(fingerprint(lm_weights(wheel)))
    sweeps = sorted((ROOT / "results").rglob("sweep.csv"))
    assert len(sweeps) >= 10
    for path in sweeps:
        for row in csv.DictReader(open(path)):
            used = {row["mdm_sha"]} | ({row["head_sha"]} if row.get("head_sha") else set())
            assert used <= shipped, f"{path.relative_to(ROOT)}: {row['sampler']} decoded by {used - shipped}"


def test_every_path_the_docs_name_exists():
    """A file the docs point to (`results/...`, `benchmarks/....py`) is in the tree, unless the
    line says at which git revision it lives (archived code: `git show 3082bdc:PATH`) or the
    path is one a documented command makes and git ignores."""
    import re

    # make mi-data, make protein-mi-data, make data
    generated = (
        "data/sudoku/mi_states.safetensors",
        "data/protein/mi_states.safetensors",
        "data/sudoku/generated",
        "runs/",
    )
    top = ("results/", "checkpoints/", "data/", "benchmarks/", "training/", "mi_viz/", "experiments/", "docs/")
    revision = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b|git history")
    placeholder = re.compile(r"[*{}]|\.\.\.|NAME|FILE|PATH")
    missing = []
    for doc in [ROOT / "README.md", ROOT / "data" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for n, line in enumerate(doc.read_text().splitlines(), 1):
            for path in re.findall(r"`([\w./-]+)`", line):
                if not path.startswith(top) or placeholder.search(path) or path.startswith(generated):
                    continue
                p = ROOT / path.rstrip("/")
                if p.exists() or any(p.parent.glob(p.name + ".*")) or revision.search(line):
                    continue
                missing.append(f"{doc.relative_to(ROOT)}:{n}: {path}")
    assert not missing, "the docs name files the tree does not have:\n" + "\n".join(missing)


def test_the_readme_python_api_runs_as_written(monkeypatch):
    """The README's Python API block, executed as a user would paste it (from the checkout): it
    decodes a shipped puzzle, computes its exact maps and draws the viewer for a notebook."""
    import re

    text = (ROOT / "README.md").read_text()
    block = re.search(r"## Python API\n\n```python\n(.*?)```", text, re.S).group(1)
    monkeypatch.chdir(ROOT)
    scope: dict = {}
    exec(compile(block, "README.md (Python API)", "exec"), scope)  # noqa: S102 - our own README
    assert scope["res"].passes.item() < 57 and "<iframe" in scope["mi_viz"].show(scope["trace"])._repr_html_()
