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
    (after a backbone is retrained or stored in another dtype, its results are re-run), or one
    whose weights left the tree and whose JSON half records them (family.BUILT_HERE)."""
    import csv

    from mi_viz.core.checkpoints import fingerprint
    from mi_viz.domains.family import BUILT_HERE
    from mi_viz.lm.masked_lm import lm_weights

    shipped = {fingerprint(p) for p in (ROOT / "checkpoints").glob("*.safetensors*")}
    shipped |= {fingerprint(ROOT / "checkpoints" / f"family_{f}{h}.json") for f in BUILT_HERE for h in ("", "_mi_head")}
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
    page = ROOT / "mi-viz-viewer.html"  # outside a notebook, show() writes the viewer here and says so
    scope: dict = {}
    try:
        exec(compile(block, "README.md (Python API)", "exec"), scope)  # noqa: S102 - our own README
        assert page.exists()
        assert scope["res"].passes.item() < 57 and "<iframe" in scope["mi_viz"].show(scope["trace"])._repr_html_()
    finally:
        page.unlink(missing_ok=True)


def test_every_figure_in_the_readme_and_docs_matches_its_source():
    """make test runs the sources check on the documents themselves (not only on a copy): a figure of a
    marked paragraph its files do not hold, or one that names its own cell and differs from it, fails."""
    from benchmarks.tables import DOCS, sources

    assert [bad for doc in DOCS for bad in sources.check(doc)] == []


def _antibody_paragraph() -> str:
    readme = (ROOT / "README.md").read_text()
    return next(p for p in readme.split("\n\n") if "results/antibody/sabdab_test/sweep.csv sequential pll -->" in p)


@pytest.mark.parametrize(
    "cell,wrong",
    [
        ("sequential pll", "-1.459"),
        ("sequential avg_passes", "14.36"),
        ("budgets/2.5/vs_sequential/pll/diff", "-0.245"),
    ],
)
def test_a_figure_planted_wrong_in_the_antibody_paragraph_fails(tmp_path, cell, wrong):
    """Each figure of the README's antibody paragraph names its file and cell: one typed wrong (digits
    swapped, as a slip makes them) is caught there, however many other numbers its files hold."""
    import re

    from benchmarks.tables import sources

    para = _antibody_paragraph()
    m = re.search(r"([-+]?[\d.]+)(<!--= results/antibody/sabdab_test/\S+ " + re.escape(cell) + " -->)", para)
    assert m, cell
    doc = tmp_path / "README.md"
    doc.write_text(f"# x\n\n{para}\n")
    assert sources.check(doc) == []
    doc.write_text(f"# x\n\n{para.replace(m.group(0), wrong + m.group(2))}\n")
    bad = sources.check(doc)
    assert len(bad) == 1 and repr(wrong) in bad[0] and cell in bad[0] and "the file holds" in bad[0]


def test_a_figure_whose_source_is_missing_names_the_figure_file_and_key(tmp_path):
    from benchmarks.tables import sources

    doc = tmp_path / "results-x.md"
    doc.write_text(
        "A figure 0.908<!--= results/antibody/mi_report.json no_such_key -->.\n\n"
        "Another 1.5<!--= results/antibody/no_such.json pearson -->.\n\n"
        "A row 2.5<!--= results/antibody/sabdab_test/sweep.csv no_such_row pll -->, unmarked 0.731.\n"
    )
    bad = sources.check(doc)
    assert any("'0.908'" in b and "mi_report.json has no key 'no_such_key'" in b for b in bad)
    assert any("'1.5'" in b and "no_such.json does not exist" in b for b in bad)
    assert any("'2.5'" in b and "0 rows labelled 'no_such_row'" in b for b in bad)
    assert any("without their own source" in b and "0.731" in b for b in bad)


def test_a_json_key_with_spaces_is_named_with_underscores(tmp_path, monkeypatch):
    """A setting's label is a JSON key with spaces (fronts' controls, diversity's settings): a mark names
    it with `_` for each space, and the one key it means is read (a wrong one still named)."""
    import json

    from benchmarks.tables import sources

    monkeypatch.setattr(sources, "ROOT", tmp_path)
    (tmp_path / "r.json").write_text(json.dumps({"settings": {"mi gamma=6 lam=1": {"x": 0.25}}}))
    assert sources.cell("r.json settings/mi_gamma=6_lam=1/x") == 0.25
    with pytest.raises(sources.SourceError, match="stops at 'mi_gamma=8_lam=1'"):
        sources.cell("r.json settings/mi_gamma=8_lam=1/x")
