"""AppTest for every page: renders without exceptions, stepping works, bad input -> message."""

import csv
import json
import os
import re

import numpy as np
import pytest
import test_antibody
from conftest import ROOT
from streamlit.testing.v1 import AppTest

from mi_viz.core.paths import open_text
from mi_viz.core.samplers import SamplerConfig
from mi_viz.domains.antibody import DOMAIN as ANTIBODY_DOMAIN
from mi_viz.domains.antibody.chains import read_chains

APP = str(ROOT / "app.py")


def _run(page=None, timeout=180, setup=None):
    """A page run (the decode pages' viewer runs JavaScript, which AppTest cannot: its data is
    checked instead, _viewer_data)."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    if setup:
        setup(at)
    if page:
        at.switch_page(page)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _metric(at, label):
    return next(m.value for m in at.metric if m.label == label)


def _viewer_data(at) -> dict:
    """The payload the in-browser viewer was mounted with (a components-v2 element)."""
    (el,) = [e for e in at.get("bidi_component") if e.proto.id.endswith("_viewer")]
    return json.loads(el.proto.json)


def _downloads(at) -> dict:
    return {b.label: b for b in at.get("download_button")}


def test_home_lists_checkpoints():
    at = _run()
    md = " ".join(m.value for m in at.markdown)
    assert "Sudoku MDM" in md and "Sudoku MDM MI head" in md and "small ESM-C" in md and "MiB" in md
    assert not at.error
    # metadata as readable tables (field / value), not collapsed JSON
    assert len(at.dataframe) >= 3 and not at.json
    fields = set(at.dataframe[0].value["field"])
    assert {"d_model", "n_layers"} <= fields


def test_decode_steps_and_batches_move():
    """The decode goes to the browser once: every pass's batch, over cells still blank before it;
    under the viewer the decode's own files (trace, final board) beside the viewer's HTML and GIF."""
    at = _run("pages/sudoku_decode.py")
    at.radio(key="dec_src").set_value("Hard test set (ours, 1,000)")
    at.selectbox(key="dec_sampler").set_value("eb").run()
    d = _viewer_data(at)
    assert d["sampler"]["name"] == "eb" and len(d["steps"]) > 2
    assert d["steps"][0]["sel"] != d["steps"][1]["sel"]  # the highlighted batch moves with the step
    assert [s["passes"] for s in d["steps"]] == list(range(1, len(d["steps"]) + 1))
    files = _downloads(at)
    trace = "The trace (JSON; with any ground truth computed)"
    assert {trace, "The final board (81 digits)"} <= set(files)
    assert any(k.startswith("The whole decode as one offline HTML page") for k in files)
    # the GIF: drawn on request, its cost on the button first, then a download kept for every session
    draw = at.button(key="dec_viewer_gif_make")
    assert re.search(r"\(\d+ frames, about \d+ s\)", draw.label), draw.label
    draw.click().run()
    assert not at.exception and any(k.startswith("The whole decode as an animated GIF") for k in _downloads(at))


def test_decode_ground_truth_on_demand(monkeypatch):
    """A step's ground truth asked for in the viewer (its trigger, stood in for here) is computed
    on the server and joins the payload at that step, with its cost; no other step gets one."""
    import base64

    from pages.kit import viewer

    mounted, real = [], viewer.decode_viewer

    def asking(data, key, ground_truth=True):
        mounted.append(data)
        real(data, key, ground_truth)
        return "main", 1  # "Compute the ground truth of this step" pressed at step 2

    monkeypatch.setattr(viewer, "decode_viewer", asking)
    at = _run("pages/sudoku_decode.py")
    assert not at.exception and not at.warning
    last = mounted[-1]
    assert set(last["gt"]) == {"1"} and "passes" in last["gtNote"]["1"] and last["secondsPerPass"] > 0
    M = len(last["steps"][1]["masked"])
    assert len(np.frombuffer(base64.b64decode(last["gt"]["1"]), dtype="<f2")) == M * (M - 1) // 2


@pytest.mark.parametrize(
    "text,needle",
    [
        ("12345", "needs 81 cells, got 5"),
        ("11" + "." * 79, "digit 1 twice in row 1"),
        ("x" * 81, "bad character 'x'"),
    ],
)
def test_decode_bad_paste_shows_error(text, needle):
    at = _run("pages/sudoku_decode.py")
    at.radio(key="dec_src").set_value("Paste your own").run()
    at.text_area(key="dec_paste").input(text).run()
    assert not at.exception
    assert any(needle in e.value for e in at.sidebar.error), [e.value for e in at.sidebar.error]
    assert any(needle in e.value for e in at.main.error), [e.value for e in at.main.error]  # beside the maps too


def test_decode_pasted_puzzle_runs():
    at = _run("pages/sudoku_decode.py")
    at.radio(key="dec_src").set_value("Paste your own").run()
    puzzle = "..8...5......3.....1.....96...49..21.7...8.....41..8.5.....73...9......83...869.."
    at.text_area(key="dec_paste").input(puzzle).run()
    assert not at.exception and not at.error
    assert sum(v < 0 for v in _viewer_data(at)["initial"]) == puzzle.count(".")  # its blanks, decoded


def test_corrupt_checkpoint_is_a_message(tmp_path, monkeypatch):
    (tmp_path / "bad.json").write_text("{}")
    (tmp_path / "bad.safetensors").write_bytes(b"junk")
    monkeypatch.setenv("MI_VIZ_MDM", str(tmp_path / "bad"))
    at = _run("pages/sudoku_decode.py")
    assert any("Cannot load the Sudoku MDM" in e.value and "format_version" in e.value for e in at.error)


def test_missing_head_disables_mi(tmp_path, monkeypatch):
    monkeypatch.setenv("MI_VIZ_HEAD", str(tmp_path / "absent"))
    at = _run("pages/sudoku_decode.py")
    assert any("MI head not available" in w.value for w in at.warning)
    assert "mi" not in at.selectbox(key="dec_sampler").options


def test_every_chart_saves_as_svg():
    """Every plotly chart of a page carries the toolbar whose camera writes an SVG (drawn by
    plotly.js in the browser, offline), named after the chart."""
    at = _run("pages/sudoku_comparison.py")
    charts = at.get("plotly_chart")
    assert len(charts) >= 3
    for c in charts:
        cfg = json.loads(c.proto.config)
        assert cfg["toImageButtonOptions"]["format"] == "svg" and cfg["toImageButtonOptions"]["filename"].startswith(
            "mi-viz_"
        )
        assert cfg.get("displayModeBar") is not False


def _timeline(at) -> dict:
    """{trace name: y values} of the comparison page's 'filled vs passes' chart."""
    for chart in at.get("plotly_chart"):
        fig = json.loads(chart.proto.spec)
        if (
            "vs passes" in json.dumps(fig["layout"].get("title", ""))
            and "pass" == fig["layout"]["xaxis"]["title"]["text"]
        ):
            return {t["name"]: t["y"] for t in fig["data"]}
    raise AssertionError("no timeline chart")


def test_sudoku_comparison_rows_and_sweep():
    def live_stars_on_5(a):
        a.session_state["sw_live_on"] = True
        a.session_state["sw_live"] = 5

    at = _run("pages/sudoku_comparison.py", setup=live_stars_on_5)
    table = at.dataframe[0].value
    names = list(table["sampler"])
    assert names[0] == "sequential" and names[1] == "eb gamma=0.0001" and names[2].startswith("mi gamma=")
    before = _timeline(at)
    at.select_slider(key="cmp_r1_eb_gamma").set_value(0.2).run()  # one row's slider
    assert not at.exception
    after_names = list(at.dataframe[0].value["sampler"])
    assert after_names[1] == "eb gamma=0.2" and after_names[0] == names[0] and after_names[2] == names[2]
    after = _timeline(at)
    assert after[names[0]] == before[names[0]] and after[names[2]] == before[names[2]]  # the others untouched
    assert after["eb gamma=0.2"] != before["eb gamma=0.0001"]  # this row's curve moved
    at.button(key="cmp_r0_rm").click().run()
    assert list(at.dataframe[0].value["sampler"])[0] == "eb gamma=0.2"
    at.selectbox(key="cmp_add_pick").set_value("top-k k=4").run()
    at.button(key="cmp_add").click().run()
    assert list(at.dataframe[0].value["sampler"])[-1] == "topk k=4"
    # grid text in: replaces the rows; bad text is a message
    at.text_input(key="cmp_grid_in").input("topk:kk=6").run()
    at.button(key="cmp_grid_go").click().run()
    assert any("unknown parameter 'kk'" in e.value for e in at.error)
    at.text_input(key="cmp_grid_in").input("topk:k=6; eb:gamma=0.05").run()
    at.button(key="cmp_grid_go").click().run()
    assert list(at.dataframe[0].value["sampler"]) == ["topk k=6", "eb gamma=0.05"]
    assert "topk:k=6; eb:gamma=0.05" in [c.value for c in at.code]  # and out again, as grid text
    # the sweep tab: a star per row at its current setting, on 5 puzzles
    stars = [c for c in at.get("plotly_chart") if "(now, 5 puzzles)" in c.proto.spec]
    assert stars and "topk k=6 (now, 5 puzzles)" in stars[0].proto.spec
    at.slider(key="sw_n").set_value(5)
    at.text_input(key="sw_grid").input("topk:k=4,8").run()
    at.button(key="sw_run").click().run()
    assert not at.exception
    src, n, out, _, partial = at.session_state["sw_result"]
    assert partial is None  # every setting finished
    assert len(out) == 2 and n == 5
    # its cost was stated first: a sequential row's passes are the blanks of those 5 puzzles
    blanks = sum(
        r["puzzle"].count(".") for r in list(csv.DictReader(open_text(ROOT / "data/sudoku/test_hard.csv.gz")))[:5]
    )
    assert any(f"up to {blanks:,} backbone passes a setting" in c.value for c in at.caption)
    # the decode order of each setting, averaged over the 5 puzzles: a 9 x 9 board each, shares in (0, 1]
    order = next(json.loads(c.proto.spec) for c in at.get("plotly_chart") if "Decode order, averaged" in c.proto.spec)
    boards = [t for t in order["data"] if t["type"] == "heatmap"]
    z = boards[1]["z"]  # topk k=8, as plotly sends it: a typed array
    z = np.frombuffer(__import__("base64").b64decode(z["bdata"]), z["dtype"]).reshape(9, 9)
    assert len(boards) == 2 and boards[0]["z"]["shape"] == "9, 9"
    assert np.nanmin(z) > 0 and np.nanmax(z) <= 1
    assert "_revealed" not in at.dataframe[-1].value.columns  # not a column of the table or the CSV
    for grid, want in (
        ("nonsense:k=1", "unknown sampler 'nonsense'"),
        ("eb:gama=0.1", "it takes gamma"),
        ("  ;  ", "the grid is empty"),
    ):
        at.text_input(key="sw_grid").input(grid).run()
        at.button(key="sw_run").click().run()
        assert not at.exception and any(want in e.value for e in at.error), grid


def test_mi_estimator_page():
    at = _run("pages/mi_estimator.py")
    at.radio(key="mie_src").set_value("Compute now").run()
    at.slider(key="mie_n").set_value(2)
    at.button(key="mie_run").click().run()
    assert not at.exception
    assert any(m.label == "Pearson" for m in at.metric)
    # the truth's bound, computed from the pairs on the page (the compute-now report has hmin)
    assert any("can exceed min(H_i, H_j)" in c.value for c in at.caption)
    # DEMASK's TV head below, its committed report's figures
    tv = json.loads((ROOT / "results" / "sudoku" / "demask" / "tv_report.json").read_text())
    assert f"{tv['pearson']:.3f}" in [m.value for m in at.metric if m.label == "Pearson"]
    assert any(
        "sudoku_tv_head" in c.value and f"{tv['pearson_baseline_separation']:.3f}" in c.value for c in at.caption
    )


def test_head_picker_reads_the_users_head_everywhere(tmp_path, monkeypatch):
    """The sidebar's MI head (app.py) is the one the pages read: a head of the user's own, named in
    MI_VIZ_HEADS, is listed beside the shipped one; on the estimator page the committed report's
    states are re-read by it (a random head scores otherwise than the shipped one's recorded
    Pearson); the decode page runs it."""
    import csv

    from conftest import save_user_head

    monkeypatch.setenv("MI_VIZ_HEADS", save_user_head(tmp_path))
    shipped = next(csv.DictReader(open(ROOT / "results" / "sudoku" / "head_scores.csv")))
    at = _run()  # the entry point draws the picker in the sidebar of every page
    pick = at.sidebar.selectbox(key="mi_head")
    assert pick.value == "shipped" and list(pick.options) == ["shipped", "my_head"]
    # AppTest reruns page files without the entry point's sidebar (a browser keeps it: test_browser.py),
    # so the choice is handed over as the widget's state
    at = _run(setup=lambda t: t.session_state.__setitem__("mi_head", "my_head"))
    assert at.sidebar.selectbox(key="mi_head").value == "my_head"
    assert any("0 mix blocks; not scored yet" in c.value for c in at.sidebar.caption)
    at = _run("pages/mi_estimator.py", setup=lambda t: t.session_state.__setitem__("mi_head", "my_head"))
    assert not at.error
    assert any("read by the head chosen in the sidebar" in c.value for c in at.caption)
    assert _metric(_run("pages/mi_estimator.py"), "Pearson") == f"{float(shipped['pearson']):.3f}"
    assert _metric(at, "Pearson") != f"{float(shipped['pearson']):.3f}"
    at = _run("pages/sudoku_decode.py", setup=lambda t: t.session_state.__setitem__("mi_head", "my_head"))
    assert not at.exception and not at.error


def test_each_sampler_keeps_its_own_parameters():
    at = _run("pages/sudoku_decode.py")
    at.selectbox(key="dec_sampler").set_value("mi").run()
    at.select_slider(key="dec_mi_gamma").set_value(0.1).run()
    at.selectbox(key="dec_sampler").set_value("eb").run()
    at.select_slider(key="dec_eb_gamma").set_value(0.5).run()
    at.selectbox(key="dec_sampler").set_value("mi").run()
    assert at.select_slider(key="dec_mi_gamma").value == 0.1  # not EB's 0.5
    assert not at.exception


def test_protein_decode_instant_viewer_carries_the_whole_decode():
    """The default view sends every step to the browser once: the viewer's data agrees with the
    decode step by step (batches, masked positions, the estimated maps over them)."""
    import base64

    import numpy as np

    at = _run("pages/protein_decode.py")
    at.number_input(key="pdec_len").set_value(30).run()
    d = _viewer_data(at)
    assert d["kind"] == "track" and len(d["labels"]) == 30 and d["sampler"]["name"] == "mi"
    masked = set(range(30))
    for st in d["steps"]:
        assert set(st["masked"]) == masked and set(st["sel"]) <= masked and len(st["H"]) == len(st["masked"])
        M = len(st["masked"])
        if M > 1:
            tri = np.frombuffer(base64.b64decode(st["mi"]), dtype="<f2")
            assert len(tri) == M * (M - 1) // 2 and (tri >= 0).all()
        masked -= set(st["sel"])
    assert not masked  # the decode ends with nothing masked
    assert any(b.label.startswith("The whole decode as one offline HTML page") for b in at.get("download_button"))


def test_side_by_side_names_both_settings_and_exports_both_halves():
    """Issue 59: the caption names both settings (left, right), and each half has its own trace and
    FASTA, under a line naming its setting, with file names of its own setting."""
    at = _run("pages/protein_decode.py")
    at.number_input(key="pdec_len").set_value(16).run()
    at.toggle(key="pdec_twin_on").set_value(True).run()
    d = _viewer_data(at)
    assert d["twin"]["title"] and d["title"] != d["twin"]["title"]
    assert any("(left) beside" in c.value and "(right)" in c.value for c in at.caption)
    heads = [c.value for c in at.caption if c.value.startswith("The ") and "half's files" in c.value]
    assert len(heads) == 2 and d["title"] in heads[0] and d["twin"]["title"] in heads[1]
    traces = [b for b in at.get("download_button") if b.label.startswith("The trace")]
    fastas = [b for b in at.get("download_button") if b.label == "The decoded sequence (FASTA)"]
    assert len(traces) == 2 and len(fastas) == 2
    assert not at.exception


def test_sudoku_decode_instant_viewer_carries_the_whole_decode():
    at = _run("pages/sudoku_decode.py")
    d = _viewer_data(at)
    assert d["kind"] == "board" and len(d["labels"]) == 81 and d["symbols"] == [str(k) for k in range(1, 10)]
    filled = {p for p, v in enumerate(d["initial"]) if v >= 0}
    for st in d["steps"]:
        assert not filled & set(st["masked"]) and set(st["sel"]) <= set(st["masked"])
        filled |= set(st["sel"])
    assert len(filled) == 81


def test_protein_decode_steps_and_reports_bad_input():
    at = _run("pages/protein_decode.py")
    at.number_input(key="pdec_len").set_value(24).run()
    d = _viewer_data(at)
    assert len(d["labels"]) == 24 and len(d["steps"][0]["masked"]) == 24
    assert d["steps"][0]["sel"] != d["steps"][1]["sel"]
    assert "The decoded sequence (FASTA)" in _downloads(at)
    at.radio(key="pdec_mode").set_value("A prompt (residues kept, '_' generated)").run()
    # nothing typed yet: a neutral hint, not an error box (issue 48)
    assert any("Type a prompt" in i.value for i in at.info) and not at.error
    for text, want in (
        ("MKBV__", "'B' at position 3"),
        ("MKVLL", "no masked position"),
        ("A" * 301 + "_", "decodes up to 300"),
        (">p1\nMKV__JL\n", "'J' at position 6"),
    ):
        at.text_area(key="pdec_prompt").set_value(text).run()
        assert any(want in e.value for e in at.error), (text, [e.value for e in at.error])
        assert not at.exception
    at.text_area(key="pdec_prompt").set_value("MKV__LLA_").run()
    d = _viewer_data(at)
    assert not at.error and len(d["labels"]) == 9 and sorted(d["steps"][0]["masked"]) == [3, 4, 8]


def test_protein_ground_truth_states_its_cost():
    """Every step of the payload carries its ground truth's passes (counted on its marginals) and
    the page one measured pass: the viewer prices each step's button before it is pressed."""
    at = _run("pages/protein_decode.py")
    at.number_input(key="pdec_len").set_value(12).run()
    d = _viewer_data(at)
    assert d["secondsPerPass"] > 0 and d["gtCap"] > 0
    assert all(s["gtPasses"] > len(s["masked"]) for s in d["steps"] if len(s["masked"]) > 1)


def test_protein_comparison_and_sweep():
    at = _run("pages/protein_comparison.py")
    at.number_input(key="pcmp_len").set_value(20).run()
    assert not at.exception and len(at.dataframe) == 1
    table = at.dataframe[0].value
    assert list(table["sampler"])[:3] == ["sequential", "topk k=4", "eb gamma=8"]  # + MI at its default
    assert table["passes"].iloc[0] == 20 and table["passes"].iloc[1] == 5  # one per pass; four per pass
    at.slider(key="pcmp_r1_topk_k").set_value(10).run()
    table = at.dataframe[0].value
    assert list(table["sampler"])[1] == "topk k=10" and table["passes"].iloc[1] == 2
    at.slider(key="psw_n").set_value(5)
    at.text_input(key="psw_grid").input("sequential; topk:k=8").run()
    at.button(key="psw_run").click().run()
    assert not at.exception
    _, n, out, _, _ = at.session_state["psw_result"]
    assert n == 5 and [o["sampler"] for o in out] == ["sequential", "topk"] and all(0 <= o["jsd"] <= 1 for o in out)
    at.text_input(key="psw_grid").input("eb:gama=2").run()
    at.button(key="psw_run").click().run()
    assert any("unknown parameter 'gama'" in e.value for e in at.error)


def test_mi_estimator_protein_view():
    at = _run("pages/mi_estimator.py")
    at.radio(key="mie_domain").set_value("Proteins").run()
    assert not at.exception
    committed = (ROOT / "results" / "protein" / "mi_report.json").exists()
    assert any(m.label == "Pearson" for m in at.metric) == committed
    if not committed:
        assert any("No committed protein MI report" in i.value for i in at.info)


FAMILY = "family PF00595 · PDZ"


def test_family_decode_shows_contacts_and_refuses_bad_rows():
    at = _run("pages/protein_decode.py")
    at.selectbox(key="pdec_backbone").set_value(FAMILY).run()
    assert not at.exception and not at.error
    d = _viewer_data(at)
    width = len(d["labels"])
    assert width == 95 and len(d["steps"][0]["masked"]) == 95 and d["contacts"]  # the structure's, as dots
    assert any("Red circles: residue contacts" in c.value for c in at.caption)
    at.radio(key="pdec_fmode").set_value("The structure's sequence, a share of its columns masked").run()
    assert not at.exception and len(_viewer_data(at)["steps"][0]["masked"]) == round(0.3 * width)
    at.radio(key="pdec_fmode").set_value("A row of your own ('_' = masked)").run()
    # nothing typed yet: a neutral hint, not an error box (issue 48)
    assert any("Type a row of" in i.value for i in at.info) and not at.error
    for text, want in (("LA_", "has 3 columns"), ("L" * 94 + "7", "column 95: '7'"), ("L" * 95, "no masked column")):
        at.text_area(key="pdec_frow").set_value(text).run()
        assert any(want in e.value for e in at.error), (text, [e.value for e in at.error])
        assert not at.exception


def test_family_page_tables_and_training_errors():
    at = _run("pages/protein_families.py")
    assert not at.exception
    from mi_viz.domains.family import unbuilt_families

    for fam in unbuilt_families():  # a family kept out of the tree: not offered, its make target named
        assert not any(fam in o for o in at.selectbox(key="fam_pick").options)
        assert any(f"`make family-{fam}`" in c.value for c in at.caption), fam
    if (ROOT / "results" / "family" / "PF00595" / "contact_classes.json").exists():
        at.selectbox(key="fam_pick").set_value(FAMILY).run()
        table = at.dataframe[0].value  # every predictor by separation class, the structure-free choice marked
        assert {"MIp", "plmDCA", "arDCA", "conditional MI"} <= set(table["predictor"])
        assert list(table["chosen"]).count("✓") == 1
        assert {"long top-L", "medium top-L/5", "short top-L/5"} <= set(table.columns)
        # every committed map can be drawn, each with what it is
        assert {"Jacobian, held-out rows", "plmDCA", "attention (DAWN's map)"} <= set(at.radio(key="fam_kind").options)
        at.radio(key="fam_kind").set_value("plmdca").run()
        assert not at.exception and any(c.value.startswith("plmDCA: plmDCA (package pydca)") for c in at.caption)
        # the generation tab: every set on one set of terms, the natural half first, the anchors with them
        ceiling = next(d.value for d in at.dataframe if "set" in d.value.columns)
        assert ceiling["set"].iloc[0] == "natural (held-out half A)" and "plmDCA (its package)" in set(ceiling["set"])
    at.button(key="fam_train").click().run()
    assert any("Upload an alignment first" in e.value for e in at.error)


def test_family_comparison_side_by_side():
    at = _run("pages/protein_comparison.py")
    at.selectbox(key="pcmp_backbone").set_value(FAMILY).run()
    assert not at.exception
    table = at.dataframe[0].value
    assert table["passes"].iloc[0] == 95 and table["passes"].iloc[1] == 24  # sequential; top-k 4


def test_family_sweep_scores_pair_statistics_against_the_held_out_rows():
    """The one sweep tab (kit.sweeps) on a family: its own widgets (fsw_*), the domain's judge
    (pair statistics against the alignment's held-out rows), the natural floor kept beside it."""
    at = _run("pages/protein_comparison.py")
    at.selectbox(key="pcmp_backbone").set_value(FAMILY).run()
    if not any("Alignment:" in c.value for c in at.caption) and not os.environ.get("CI"):  # CI has ../shared
        pytest.skip("the family's alignment is not on this machine (../shared/data/protein_families)")
    at.slider(key="fsw_n").set_value(20)
    at.text_input(key="fsw_grid").input("topk:k=8").run()
    at.button(key="fsw_run").click().run()
    assert not at.exception and not at.error
    tag, n, out, floor, _ = at.session_state["fsw_result"]
    assert (tag, n) == ("PF00595", 20) and 0 < out[0]["pair_corr_pearson"] < 1
    assert out[0]["avg_passes"] == 12  # 95 columns, 8 a pass
    assert any("Natural vs natural" in c.value and f"{floor['pair_corr_pearson']:.3f}" in c.value for c in at.caption)


def test_user_strings_are_escaped_in_the_exports():
    """A FASTA header or file name with markup reaches the offline exports as text, never as markup."""
    from mi_viz.core.samplers import StepRecord, Trace
    from mi_viz.core.viewer import Layout, offline_viewer_html, viewer_payload

    evil = '<script>alert("x")</script>'
    rec = StepRecord(0, [9, 9], [True, True], [0.5, 0.4], [[0.5] * 2, [0.5] * 2], None, [0, 1], [1, 2], 1)
    payload = viewer_payload(
        Trace({"name": "topk"}, [9, 9], [1, 2], [rec]), Layout("track", [evil, "b"], ["A", "B"], [1, 2], 9), title=evil
    )
    html_page = offline_viewer_html(payload, evil)
    assert evil not in html_page  # in the data as JSON (</ escaped), in the title escaped
    assert "<\\/script>" in html_page and "&lt;script&gt;" in html_page


def test_colour_blind_marks_reach_every_figure_and_the_viewer():
    """The sidebar's palette toggle (on every page, remembered): the viewer outlines the batch in
    Okabe-Ito blue instead of orange."""
    from mi_viz.core.plots import MARKS

    at = _run("pages/sudoku_decode.py")
    assert _viewer_data(at)["marks"] == MARKS["classic"]
    at.toggle(key="look_palette").set_value(True).run()
    assert not at.exception and _viewer_data(at)["marks"] == MARKS["safe"]
    at.switch_page("pages/sudoku_comparison.py").run()  # another page keeps the choice
    assert at.toggle(key="look_palette").value is True


ANTIBERTY = "AntiBERTy · antibodies (pretrained, 26 M)"  # pages/views/protein_backbones.py ANTIBERTY_LABEL
FIRST_NATURAL = read_chains(ROOT / "data" / "antibody" / "natural" / "sabdab_test.tsv.gz")[0][1]  # the page's first
needs_antiberty = pytest.mark.skipif(  # CI installs it (make setup): there the tests must run
    __import__("importlib").util.find_spec("antiberty") is None and not os.environ.get("CI"),
    reason="antiberty==0.1.3 not installed (make setup)",
)


@needs_antiberty
def test_antibody_decode_marks_regions_and_refuses_bad_chains():
    at = _run("pages/protein_decode.py")
    at.selectbox(key="pdec_backbone").set_value(ANTIBERTY).run()
    assert not at.exception and not at.error
    masked = lambda: len(_viewer_data(at)["steps"][0]["masked"])  # noqa: E731
    n3 = len(FIRST_NATURAL.junction) - 2  # the first natural test chain's CDR3 (SAbDab 7e7y: 19 residues)
    assert masked() == n3 and any(f"cdr3 masked ({n3})" in c.value for c in at.caption)
    default = SamplerConfig("mi", **ANTIBODY_DOMAIN.sampler_defaults["mi"]).label()
    assert any(default in c.value for c in at.caption)  # the antibody default, not the protein one
    assert any("heavy chain, human, IGHV3-53" in c.value for c in at.caption)  # the numbering's calls
    # the design beside the native region, both scored; samples of the same chain as a logo
    shown = next(c.value for c in at.code if c.value.startswith("native  "))
    assert FIRST_NATURAL.junction[1:-1] in shown  # the native CDR3 (its junction less the Cys and Trp)
    labels = {m.label for m in at.metric}
    assert "recovery of the native" in labels
    for judge in ("AntiBERTy", "Sapiens VH (did not generate)"):  # the backbone, and the judge that did not generate
        assert any(x.startswith("PLL of the design · ") and judge in x for x in labels), (judge, labels)
        assert any(x.startswith("PLL of the native · ") and judge in x for x in labels), (judge, labels)
    at.slider(key="pdec_nsamples").set_value(2)
    at.button(key="pdec_sample").click().run()
    assert not at.exception and any("2 infills, passes" in c.value for c in at.caption)
    at.selectbox(key="pdec_region").set_value("cdr1").run()
    assert masked() != n3 and not at.exception  # another region, another decode
    assert any("cdr1 masked" in c.value for c in at.caption)
    at.radio(key="pdec_src").set_value("Paste or upload your own V domain").run()
    assert any("Paste a heavy or light chain" in i.value for i in at.info)
    # a chain pasted as deposited, CH1 after its V domain (SAbDab 5i1e): trimmed, and said
    deposited = test_antibody.DEPOSITED
    at.text_area(key="pdec_text").set_value(deposited).run()
    assert not at.exception and not at.error
    assert any("residues after IMGT 128 trimmed: the constant region (IGHG1" in i.value for i in at.info)
    for text, want in (("EVQLVESGGGLJQPGG", "'J'"), ("ACGTACGTACGTACGTACGTACGTACGT", "nucleotide")):
        at.text_area(key="pdec_text").set_value(text).run()
        assert any(want in e.value for e in at.error), (text, [e.value for e in at.error])
        assert not at.exception


@needs_antiberty
def test_antibody_comparison_sweep_and_estimator():
    at = _run("pages/protein_comparison.py")
    at.selectbox(key="pcmp_backbone").set_value(ANTIBERTY).run()
    assert not at.exception and len(at.dataframe) >= 1
    assert any("Cost before you run" in c.value and "ms a pass" in c.value for c in at.caption)  # priced first
    at.slider(key="asw_n").set_value(2)
    at.text_input(key="asw_grid").input("sequential; topk:k=4").run()
    at.button(key="asw_run").click().run()
    assert not at.exception
    mask, n, out, _, _ = at.session_state["asw_result"]
    assert (n, mask) == (2, "cdr3") and [o["sampler"] for o in out] == ["sequential", "topk"]
    assert all(-10 < o["pll"] < 0 for o in out) and out[1]["avg_passes"] < out[0]["avg_passes"]
    # the tab is shared by the protein pages' backbones: the small ESM-C neither shows nor unpacks this result
    at.selectbox(key="pcmp_backbone").set_value(at.selectbox(key="pcmp_backbone").options[0]).run()
    assert not at.exception and not any("this sweep" in str(c.value) for c in at.caption)
    est = _run("pages/mi_estimator.py")
    est.radio(key="mie_domain").set_value("Proteins").run()
    est.radio(key="pmie_backbone").set_value("AntiBERTy (antibody CDRs)").run()
    assert not est.exception
    report = json.loads((ROOT / "results" / "antibody" / "mi_report.json").read_text())
    assert _metric(est, "Pearson") == f"{report['pearson']:.3f}"  # the page shows the committed report's figure
    assert any(f"{report['pearson_baseline_separation']:.3f}" in c.value for c in est.caption)  # and its baselines
    # every antibody head's committed report: AntiBERTy's and Sapiens VH's, MI and DEMASK's TV
    from pages.views.antibody import HEAD_REPORTS

    for model, heads in HEAD_REPORTS.items():
        for measure, (name, command, _) in heads.items():
            est.radio(key="pmie_abmodel").set_value(model).run()
            est.radio(key="pmie_abmeasure").set_value(measure).run()
            assert not est.exception
            path = ROOT / "results" / "antibody" / name
            if not path.exists():  # a report not yet made says which command makes it
                assert any(command in i.value for i in est.info), (model, measure)
                continue
            rep = json.loads(path.read_text())
            assert _metric(est, "Pearson") == f"{rep['pearson']:.3f}", (model, measure)
            assert any(f"{rep['mae']:.4f}" in c.value for c in est.caption), (model, measure)
            assert any(
                ("total-variation" in c.value) == (measure != "MI") for c in est.caption if "mean abs" in c.value
            )


@needs_antiberty
def test_antibody_instant_viewer_carries_the_infill_with_its_regions():
    """The in-browser viewer (the default view) on AntiBERTy: the first test chain, only its CDR3
    masked, the IMGT regions in the position labels, every step's maps over what is still masked."""
    at = _run("pages/protein_decode.py")
    at.selectbox(key="pdec_backbone").set_value(ANTIBERTY).run()
    assert not at.exception and not at.error
    d = _viewer_data(at)
    assert d["kind"] == "track" and len(d["labels"]) == len(FIRST_NATURAL.sequence)  # its V domain, CH1 trimmed
    masked = set(d["steps"][0]["masked"])
    assert len(masked) == len(FIRST_NATURAL.junction) - 2 and all(d["labels"][i].endswith("CDR3") for i in masked)
    for st in d["steps"]:
        assert set(st["masked"]) == masked and set(st["sel"]) <= masked
        masked -= set(st["sel"])
    assert not masked


def test_the_launcher_warms_the_first_pages(capsys):
    """pages/serve.py runs the pages a first visitor opens at their defaults before it serves: their
    decodes land in the process-wide caches the sessions read (a later visit finds them)."""
    from pages import serve
    from pages.kit import caches

    serve.warm(("pages/sudoku_decode.py",))
    assert "warm: pages/sudoku_decode.py in" in capsys.readouterr().out
    assert caches._stores().get("trace") and caches._stores().get("payload")
    n = len(caches._stores()["trace"])
    _run("pages/sudoku_decode.py")  # the first visit: nothing decoded again
    assert len(caches._stores()["trace"]) == n


def test_a_bug_is_shown_as_a_bug_with_its_traceback(monkeypatch):
    """Issue 58: an exception that is no UserError reaches app.py, which says it is a bug and keeps the
    traceback in an expander (bad input is a message where it is read, tested page by page)."""
    import pages.kit.runtime as runtime

    def planted():
        raise RuntimeError("a planted bug")

    monkeypatch.setattr(runtime, "through_app", planted)  # the home page calls it first (its file is re-read)
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception  # caught and shown, not raised to Streamlit's own red box
    assert any("this is a bug, not a problem with your input" in e.value for e in at.error)
    assert any("planted bug" in c.value and "Traceback" in c.value for c in at.code)


def test_the_decode_page_draws_demask_tv_beside_mi():
    """Issue 57: the decode page's maps in either measure: the MI (the default), or DEMASK's expected
    TV influence, estimated by a TV head where the backbone has one (else off, said) and exact on demand
    from the same passes; the viewer names the measure and its unit, never the MI's under TV's name."""
    at = _run("pages/sudoku_decode.py")
    mi = _viewer_data(at)
    assert "measure" not in mi and any(st.get("mi") for st in mi["steps"])  # the MI head's maps
    at.radio(key="dec_measure").set_value("TV influence (DEMASK)").run()
    assert not at.exception
    tv = _viewer_data(at)
    assert tv["measure"] == {"name": "TV influence (DEMASK)", "unit": "TV"}
    from mi_viz.core.models import head_path
    from mi_viz.domains import get_domain

    if head_path(get_domain("sudoku"), "tv") is None:  # no TV head shipped: no estimated map, and said so
        assert not any(st.get("mi") for st in tv["steps"])
        assert any("No TV influence (DEMASK) head for this backbone" in i.value for i in at.info)
    else:
        assert any(st.get("mi") for st in tv["steps"]) and tv["steps"][0]["mi"] != mi["steps"][0]["mi"]


def test_a_masked_lm_folder_is_a_backbone_and_a_folder_that_is_not_one_is_named(tmp_path):
    """Issue 59: a Hugging Face masked LM folder chosen in the app decodes (no MI head: said); a path
    that is no folder, and a folder without config.json, get a message naming what is wrong."""
    from test_antibody import _esm_dir

    at = _run("pages/protein_decode.py")
    at.selectbox(key="pdec_backbone").set_value("A masked LM folder on this machine ...").run()
    assert any("Type the path of a masked LM folder" in i.value for i in at.info) and not at.exception
    at.text_input(key="pdec_lmdir").input(str(tmp_path / "nowhere")).run()
    assert any("is not a directory" in e.value for e in at.error) and not at.exception
    (tmp_path / "empty").mkdir()
    at.text_input(key="pdec_lmdir").input(str(tmp_path / "empty")).run()
    assert any("has no config.json" in e.value for e in at.error) and not at.exception
    d = _esm_dir(tmp_path, layers=6)  # deeper than the small ESM-C the page starts on
    at.text_input(key="pdec_lmdir").input(str(d)).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    # the attention map starts on this backbone's last block, not on the block the last backbone ended on
    assert _viewer_data(at)["attName"] == "block 6 of 6, mean of its heads"
    assert any("MiB" in c.value and ("first load" in c.value or "last load" in c.value) for c in at.caption)
    assert any("No MI head for this backbone" in i.value for i in at.info)
    at.number_input(key="pdec_len").set_value(12).run()
    assert len(_viewer_data(at)["labels"]) == 12


def test_the_attention_map_reads_the_block_and_head_chosen():
    """Issue 59: the viewer's attention map is the chosen block's chosen head (recomputed for it on
    the server, the only one sent), named in the payload; the default is the last block's mean."""
    at = _run("pages/sudoku_decode.py")
    d = _viewer_data(at)
    assert "attName" in d and d["attName"].endswith("mean of its heads") and d["attName"].startswith("block 6 of 6")
    default = [s.get("att") for s in d["steps"]]
    next(w for w in at.select_slider if w.label == "block").set_value(1).run()
    next(w for w in at.selectbox if w.label == "head").set_value("head 2").run()
    d = _viewer_data(at)
    assert d["attName"] == "block 1 of 6, head 2" and not at.exception
    assert [s.get("att") for s in d["steps"]] != default


def test_edit_a_step_and_decode_from_there():
    """Issue 59: a cell set at a step and decoded from there (the decode replaced, said, undone by a
    button); a digit its row already holds is refused by name and nothing changes."""
    at = _run("pages/sudoku_decode.py")
    d = _viewer_data(at)
    first = d["steps"][0]
    at.number_input(key="dec_edit_t").set_value(0).run()
    pos = at.selectbox(key="dec_edit_pos").value
    row = [p for p in range(81) if p // 9 == pos // 9 and d["initial"][p] >= 0]
    clash = str(d["initial"][row[0]] + 1)  # a digit its row holds already
    at.selectbox(key="dec_edit_val").set_value(clash).run()
    at.button(key="dec_edit_go").click().run()
    assert any("breaks the rules" in e.value for e in at.error) and not at.exception
    assert _viewer_data(at)["steps"][0] == first  # nothing changed
    sel = first["sel"][0]  # the digit the decode wrote first, fixed there now: a legal edit
    val = str(first["val"][0] + 1)
    at.selectbox(key="dec_edit_pos").set_value(sel).run()
    at.selectbox(key="dec_edit_val").set_value(val).run()
    at.button(key="dec_edit_go").click().run()
    assert not at.exception and any("Decoding an edited state" in i.value for i in at.info)
    d2 = _viewer_data(at)
    assert d2["initial"][sel] == first["val"][0] and sel not in d2["steps"][0]["masked"]
    at.button(key="dec_edit_undo").click().run()
    assert _viewer_data(at)["steps"][0] == first and not any("Decoding an edited" in i.value for i in at.info)


def test_an_antibody_step_edited_keeps_the_native_beside_it():
    """Issue 59: a CDR3 residue the decode wrote at step 1, masked again and decoded from there: the
    edited chain decodes (one more masked than the decode had left), the native region still read; a
    residue set by hand: the design judged over the whole region still, the residue set marked."""
    at = _run("pages/protein_decode.py")
    at.selectbox(key="pdec_backbone").set_value(ANTIBERTY).run()
    d = _viewer_data(at)
    sel = d["steps"][0]["sel"][0]
    at.number_input(key="pdec_edit_t").set_value(1).run()
    at.selectbox(key="pdec_edit_pos").set_value(sel).run()
    at.selectbox(key="pdec_edit_val").set_value("(mask it again)").run()
    at.button(key="pdec_edit_go").click().run()
    assert not at.exception and not at.error and any("Decoding an edited state" in i.value for i in at.info)
    d2 = _viewer_data(at)
    assert sel in d2["steps"][0]["masked"] and len(d2["steps"][0]["masked"]) == len(d["steps"][1]["masked"]) + 1
    assert any(c.value.startswith("native  ") for c in at.code)
    region = len(d["steps"][0]["masked"])  # the whole CDR3: what the design is judged over, before and after
    n_of = lambda: next(m.value for m in at.metric if m.label == "masked region")  # noqa: E731
    assert n_of() == f"{region} residues"
    # a residue set by hand: the design is still judged over the whole region, that residue marked ^
    at.button(key="pdec_edit_undo").click().run()
    at.number_input(key="pdec_edit_t").set_value(1).run()
    other = d["steps"][1]["sel"][0]
    at.selectbox(key="pdec_edit_pos").set_value(other).run()
    at.selectbox(key="pdec_edit_val").set_value("W").run()
    at.button(key="pdec_edit_go").click().run()
    assert not at.exception and not at.error
    assert n_of() == f"{region} residues"
    text = next(c.value for c in at.code if c.value.startswith("native  "))
    assert text.splitlines()[-1].startswith("yours   ") and text.splitlines()[-1].count("^") == 1, text


def test_the_comparison_page_starts_with_a_demask_row_where_a_tv_head_is():
    """Issue 57: on Sapiens VH (a TV head shipped) the comparison page's rows start with DEMASK beside
    the MI rule, its tau a slider of that row; on the small ESM-C (no TV head) there is no DEMASK row."""
    at = _run("pages/protein_comparison.py")
    assert not any(w.value == "demask" for w in at.selectbox if w.label == "sampler")
    sapiens = next(o for o in at.selectbox(key="pcmp_backbone").options if o.startswith("Sapiens VH"))
    at.selectbox(key="pcmp_backbone").set_value(sapiens).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    names = [w.value for w in at.selectbox if w.label == "sampler"]
    assert "demask" in names and "mi" in names, names
    tau = [w for w in [*at.slider, *at.select_slider] if "demask" in (w.key or "") and "tau" in w.label]
    assert len(tau) == 1, [w.key for w in [*at.slider, *at.select_slider]]  # its row's own tau
    table = at.dataframe[0].value
    assert any(str(v).startswith("demask") for v in table.iloc[:, 0]), table.iloc[:, 0].tolist()


def test_demask_is_offered_where_a_tv_head_is_and_decodes_with_it():
    """Issue 57: on Sapiens VH (a TV head beside its MI head) the decode page offers DEMASK and decodes
    with its TV head, the TV map estimated by it; on the small ESM-C (an MI head, no TV head) DEMASK is
    not offered."""
    at = _run("pages/protein_decode.py")
    assert "demask" not in at.selectbox(key="pdec_sampler").options and "mi" in at.selectbox(key="pdec_sampler").options
    sapiens = next(o for o in at.selectbox(key="pdec_backbone").options if o.startswith("Sapiens VH"))
    at.selectbox(key="pdec_backbone").set_value(sapiens).run()
    assert "demask" in at.selectbox(key="pdec_sampler").options
    at.selectbox(key="pdec_sampler").set_value("demask").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    d = _viewer_data(at)
    assert d["sampler"]["name"] == "demask" and len(d["steps"]) >= 1
    at.radio(key="pdec_measure").set_value("TV influence (DEMASK)").run()
    d = _viewer_data(at)
    assert d["measure"]["name"].startswith("TV") and any(s.get("mi") for s in d["steps"])  # the TV head's maps


@needs_antiberty
def test_the_estimator_shows_what_its_results_file_holds(tmp_path, monkeypatch):
    """A test that compares the page with the committed file cannot catch the page reading a wrong one:
    a value planted in a temporary copy of each report the estimator reads (Sudoku's TV head, AntiBERTy's
    MI head) is what the page shows."""
    import shutil

    import pages.views.antibody as antibody_view
    import pages.views.sudoku_estimator as sudoku_view

    results = tmp_path / "results"
    for rel in ("sudoku/demask/tv_report.json", "antibody/mi_report.json"):
        (results / rel).parent.mkdir(parents=True, exist_ok=True)
        rep = json.loads((ROOT / "results" / rel).read_text())
        rep["pearson"] = 0.123 if rel.startswith("sudoku") else 0.456
        (results / rel).write_text(json.dumps(rep))
    shutil.copytree(ROOT / "results" / "sudoku", results / "sudoku", dirs_exist_ok=True,
                    ignore=lambda d, names: [n for n in names if n == "tv_report.json"])  # fmt: skip
    monkeypatch.setattr(sudoku_view, "RESULTS", results)
    monkeypatch.setattr(antibody_view, "RESULTS", results)
    at = _run("pages/mi_estimator.py")
    assert not at.exception
    assert "0.123" in [m.value for m in at.metric if m.label == "Pearson"]
    at.radio(key="mie_domain").set_value("Antibodies").run()  # the antibodies' own entry: their heads' reports
    assert not at.exception and _metric(at, "Pearson") == "0.456"
    at.radio(key="mie_domain").set_value("Proteins").run()
    at.radio(key="pmie_backbone").set_value("AntiBERTy (antibody CDRs)").run()
    assert not at.exception and _metric(at, "Pearson") == "0.456"
    assert not any("Estimated vs ground-truth" in c.proto.spec for c in at.get("plotly_chart"))  # no pairs kept
    assert any("--pairs mi_report_pairs.npz" in c.value for c in at.caption)
    # a pairs file beside the report: the scatter of head against truth and the means by separation, from it
    from mi_viz.core.mi_report import PairTable, write_report

    cols = ([0, 0], [1, 2], [2, 5], [0.3, 0.02], [0.25, 0.04], [0.0, 0.0], [0, 0], [1.0, 1.0], [1.0, 1.0])
    pt = PairTable(*(np.array(v) for v in cols))  # state, i, j, truth, head, asymmetry, relation, hmin, hgeo
    write_report({}, pt, np.zeros((1, 8)), tmp_path / "unused.json", results / "antibody" / "mi_report_pairs.npz")
    at.run()
    figs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    scatter = next(f for f in figs if "Estimated vs ground-truth MI" in json.dumps(f["layout"]["title"]))
    import base64

    def values(v):  # plotly sends arrays as typed binary
        return sorted(np.frombuffer(base64.b64decode(v["bdata"]), v["dtype"]).round(4)) if "bdata" in v else sorted(v)

    assert values(scatter["data"][0]["x"]) == [0.02, 0.3] and values(scatter["data"][0]["y"]) == [0.04, 0.25]
    assert any("Mean MI by sequence separation" in json.dumps(f["layout"]["title"]) for f in figs)


@needs_antiberty
def test_antibody_pages_carry_the_model_and_the_chain_and_judge_both_halves():
    """Antibodies have pages of their own: the model picked and the chain pasted on Antibody decode are
    there on Antibody comparison and back; side by side judges each half (recovery, both judges' PLL,
    the native beside); the comparison table shows each row's infilled region with its IMGT span,
    recovery and PLL."""
    chain = ("EVQLVESGGGLVQPGGSLRLSCAASGFTFSSYAMSWVRQAPGKGLEWVSAISGSGGSTYYADSVKGRFTISRDNSKNTLYLQMNSLRAEDTAVYYC"
             "AKDRGYSSGWYFDYWGQGTLVTVSS")  # fmt: skip
    at = _run("pages/antibody_decode.py")
    assert not at.exception
    at.radio(key="ab_src_adec").set_value("Paste or upload your own V domain").run()
    at.text_area(key="ab_text_adec").set_value(chain).run()
    models = at.selectbox(key="ab_backbone_adec").options
    assert [m for m in models if "AntiBERTy" in m] and not [m for m in models if "ESM-C" in m]  # antibody LMs only
    sapiens = next(m for m in models if "Sapiens VH" in m)
    at.selectbox(key="ab_backbone_adec").set_value(sapiens).run()
    assert not at.exception and any("chain1, heavy chain (your chain)" in c.value for c in at.caption)
    at.switch_page("pages/antibody_comparison.py").run()
    assert not at.exception
    assert at.selectbox(key="ab_backbone_acmp").value == sapiens and at.text_area(key="ab_text_acmp").value == chain
    table = at.dataframe[0].value
    assert {"recovery", "PLL · Sapiens VH"} <= set(table.columns) and any("IMGT 105-117" in c for c in table.columns)
    assert any(c.startswith("PLL · AntiBERTy") for c in table.columns)  # the judge that did not generate
    at.switch_page("pages/antibody_decode.py").run()
    assert at.radio(key="ab_src_adec").value.startswith("Paste") and at.text_area(key="ab_text_adec").value == chain
    next(t for t in at.toggle if t.label.startswith("Side by side")).set_value(True).run()
    assert not at.exception and any(s.value == "Each half's design beside the native chain" for s in at.subheader)
    judged = at.dataframe[0].value
    assert list(judged.columns)[-1] == "native" and len(judged.columns) == 4  # the rows' names, left, right, native
    assert judged.iloc[0, 0] == "recovery of the native" and any("did not generate" in r for r in judged.iloc[:, 0])


@needs_antiberty
def test_several_chains_pasted_offer_a_picker_and_name_the_one_that_cannot_be_numbered():
    """A heavy chain, a light chain and a fragment pasted at once: the two V domains are offered in a
    picker (one decoded at a time, and the page says why a VH/VL pair is two decodes), the fragment named
    in a warning; nothing else lost, no traceback."""
    heavy = ("EVQLVESGGGLVQPGGSLRLSCAASGFTFSSYAMSWVRQAPGKGLEWVSAISGSGGSTYYADSVKGRFTISRDNSKNTLYLQMNSLRAEDTAVYYC"
             "AKDRGYSSGWYFDYWGQGTLVTVSS")  # fmt: skip
    light = (
        "DIQMTQSPSSLSASVGDRVTITCRASQSISSYLNWYQQKPGKAPKLLIYAASSLQSGVPSRFSGSGSGTDFTLTISSLQPEDFATYYCQQSYSTPLTFGQGTKVEIK"
    )
    at = _run("pages/antibody_decode.py")
    at.radio(key="ab_src_adec").set_value("Paste or upload your own V domain").run()
    at.text_area(key="ab_text_adec").set_value(f">vh\n{heavy}\n>frag\nACDEFGHIKL\n>vl\n{light}").run()
    assert not at.exception
    pick = at.selectbox(key="ab_pick_adec")
    assert pick.options == ["vh", "vl"] and pick.label.startswith("Chain to decode (2 of 3")
    assert any("frag" in w.value for w in at.warning) and not any("vh (" in w.value for w in at.warning)
    assert any("VH/VL pair is two decodes" in c.value for c in at.caption)
    pick.set_value("vl").run()
    assert not at.exception and any("vl, kappa chain (your chains)" in c.value for c in at.caption)


@needs_antiberty
def test_a_masked_position_s_attention_to_the_whole_chain():
    """Below the viewer, one masked position's attention over every position of the chain (the viewer's
    map reads the masked ones alone): a bar a position of the V domain, any step and masked position."""
    import json

    at = _run("pages/antibody_decode.py")
    assert not at.exception

    def bars() -> list:
        figs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
        return [t for f in figs for t in f["data"] if t.get("type") == "bar" and "attention" in str(f["layout"])]

    pos = at.selectbox(key="adec_attw_pos")
    assert at.slider(key="adec_attw_step").value == 1 and len(pos.options) > 1
    first = bars()
    assert len(first) == 1 and len(first[0]["x"]) > 100  # the whole V domain, not the masked CDR3 alone
    pos.set_value(pos.options[-1]).run()
    at.slider(key="adec_attw_step").set_value(2).run()
    assert not at.exception and bars()[0]["y"] != first[0]["y"]


def test_a_sudoku_decode_ends_on_its_verdict():
    """The decode page says whether the board is solved (and each half's, side by side)."""
    at = _run("pages/sudoku_decode.py")
    assert not at.exception
    assert any(s.value.startswith("solved in ") for s in at.success) or any("not solved:" in e.value for e in at.error)


@needs_antiberty
def test_the_per_residue_track_is_priced_then_drawn():
    """Along the whole chain, on request: the button says its passes (two a residue: design and native)
    first; the track then shows both and their means, the infilled region's apart."""
    at = _run("pages/antibody_decode.py")
    button = at.button(key="adec_track")
    assert "passes" in button.label and not any(c.value.startswith("Mean over the chain") for c in at.caption)
    button.click().run()
    assert not at.exception
    assert any(c.value.startswith("Mean over the chain: design ") and "infilled region" in c.value for c in at.caption)
