"""What a new user met (issue 39), below the browser: non-finite parameters, strict JSON, an
unknown family backbone, a puzzle file's garbage lines, upload limits and the app's settings.
The browser-side items (a ground-truth map that follows the user, sliders that forget, Play's
extra tick, the bar's icons) are in tests/test_browser.py."""

import ast
import json
import math

import pytest
from conftest import ROOT

from mi_viz.cli import main
from mi_viz.core import strict_json
from mi_viz.core.samplers import SamplerConfig
from mi_viz.core.sweep import parse_grid
from mi_viz.domains.sudoku.board import read_puzzle_file

GOOD = "..8...5......3.....1.....96...49..21.7...8.....41..8.5.....73...9......83...869.."


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "1e400", "NaN"])
def test_non_finite_parameters_are_bad_input(text, tmp_path, capsys):
    with pytest.raises(ValueError, match="finite"):
        SamplerConfig("eb", gamma=float(text))
    with pytest.raises(ValueError, match="finite"):
        parse_grid(f"mi:gamma=0.1:lam={text}")
    with pytest.raises(SystemExit) as e:  # the CLI's float flags refuse them before any work
        main(["bench", "sudoku", "--puzzles", str(tmp_path / "p.txt"), "--sampler", "eb", f"--gamma={text}",
              "--out", str(tmp_path / "o.csv")])  # fmt: skip
    assert e.value.code == 2 and "finite number" in capsys.readouterr().err
    assert not (tmp_path / "o.csv").exists()


def test_every_json_the_project_writes_is_strict():
    assert strict_json.dumps({"a": float("nan"), "b": [1.0, float("inf")], "c": (2, 3)}) == (
        '{"a": null, "b": [1.0, null], "c": [2, 3]}'
    )
    doc = {"x": 0.1, "y": [1, 2.5], "z": "s"}
    assert strict_json.dumps(doc, indent=1) == json.dumps(doc, indent=1)  # finite documents: the same bytes
    # nothing in the tree writes JSON past the strict writer
    offenders = []
    for folder in ("mi_viz", "training", "benchmarks", "pages"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name == "strict_json.py":
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                f = getattr(node, "func", None)
                if (
                    isinstance(f, ast.Attribute)
                    and f.attr in ("dump", "dumps")
                    and getattr(f.value, "id", "") == "json"
                ):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, offenders


def test_an_unknown_family_backbone_names_the_ones_there_are(tmp_path, capsys):
    code = main(
        ["contacts", "--backbone", "NOPE", "--msa", str(tmp_path / "a.fasta"), "--out", str(tmp_path / "c.json")]
    )
    err = capsys.readouterr().err
    assert code == 2 and "unknown family backbone 'NOPE'" in err and "PF00595" in err
    assert not (tmp_path / "c.json").exists()


def test_a_puzzle_file_names_its_garbage_lines_whole(tmp_path):
    f = tmp_path / "p.txt"
    f.write_text(f"hello world this is junk\n{GOOD} a rating field\n{GOOD[:80]}x\n")
    res = read_puzzle_file(f)
    assert len(res.puzzles) == 1 and len(res.errors) == 2
    assert res.errors[0].startswith("line 1: 'hello world this is junk' is not a puzzle")
    assert res.errors[1].startswith("line 3:") and "bad character 'x'" in res.errors[1]


def test_the_app_settings_a_user_gets():
    """make app's Streamlit settings (.streamlit/config.toml): no file watcher (it flooded the
    terminal walking .venv), no usage statistics (a blocked fetch in every console), and the
    upload limit the pages' widgets state."""
    import tomllib

    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert cfg["server"]["fileWatcherType"] == "none"
    assert cfg["browser"]["gatherUsageStats"] is False
    limit = cfg["server"]["maxUploadSize"]
    # every file_uploader states its own limit, never Streamlit's default 200 MB
    for path in (ROOT / "pages").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            f = getattr(node, "func", None)
            if isinstance(f, ast.Attribute) and f.attr == "file_uploader":
                kw = {k.arg for k in node.keywords}
                assert "max_upload_size" in kw, f"{path.name}:{node.lineno}"
    assert math.isfinite(limit) and limit <= 20
