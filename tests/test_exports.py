"""The decode exports (issue 42): the animated GIF drawn from the viewer's payload, the side-by-side
pair in the offline page, and their bad inputs."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from mi_viz.core.animation import EmptyDecode, decode_gif, frame_count
from mi_viz.core.samplers import StepRecord, Trace
from mi_viz.core.viewer import Layout, ViewerMaps, offline_viewer_html, viewer_payload


def payload(passes: list[int], L: int = 6, title: str = "toy") -> dict:
    """A toy track decode: step k unmasks position k at pass passes[k], an MI map at every step."""
    steps, tokens = [], [9] * L
    for k, p in enumerate(passes):
        masked = [t == 9 for t in tokens]
        rng = np.random.default_rng(k)
        mi = rng.random((L, L))
        steps.append(StepRecord(k, tokens[:], masked, [0.5] * L, [[0.5, 0.5]] * L, (mi + mi.T).tolist(), [k], [1], p))
        tokens[k] = 1
    trace = Trace({"name": "topk"}, [9] * L, tokens, steps)
    return viewer_payload(trace, Layout("track", list("abcdef"[:L]), ["A", "B"], [0, 1], 9), title=title)


def _trace(L: int = 3) -> Trace:
    """A toy decode of L positions, one a pass, values 4 and 5 (mask 9)."""
    steps, tokens = [], [9] * L
    for k in range(L):
        masked = [t == 9 for t in tokens]
        steps.append(StepRecord(k, tokens[:], masked, [0.5] * L, [[0.5, 0.5]] * L, None, [k], [4 + k % 2], k + 1))
        tokens[k] = 4 + k % 2
    return Trace({"name": "sequential"}, [9] * L, tokens, steps)


def gif_frames(data: bytes) -> int:
    im = Image.open(io.BytesIO(data))
    assert im.format == "GIF"
    return im.n_frames


def test_the_gif_has_a_frame_per_pass():
    p = payload([1, 2, 3, 4])
    data = decode_gif(p)
    assert data[:6] == b"GIF89a" and gif_frames(data) == 4 == frame_count(p)


def test_side_by_side_shares_the_timeline():
    """Two decodes of 4 and 3 steps at passes {1,2,3,4} and {1,3,5}: one frame per pass either
    takes a step at (1, 2, 3, 4, 5); the offline page mounts the pair."""
    pair = {**payload([1, 2, 3, 4], title="one"), "twin": payload([1, 3, 5], title="two")}
    assert frame_count(pair) == 5 and gif_frames(decode_gif(pair)) == 5
    page = offline_viewer_html(pair, "pair")
    assert "if (d.twin) mountPair(r, d, d.twin, {})" in page and '"twin":{' in page


def test_mi_and_tv_of_a_step_are_packed_side_by_side():
    """A second measure's maps (the TV head's, same passes) ride beside the MI ones, each step's over its
    own masked pairs, named so the viewer titles and scales it apart; a step with one masked position
    has no pair to draw."""
    L = 4
    steps, tokens = [], [9] * L
    for k in range(L):
        masked = [t == 9 for t in tokens]
        steps.append(StepRecord(k, tokens[:], masked, [0.5] * L, [[0.5, 0.5]] * L, None, [k], [1], k + 1))
        tokens[k] = 1
    trace = Trace({"name": "topk"}, [9] * L, tokens, steps)
    mi = [np.full((L, L), 0.2) for _ in range(L)]
    tv = [np.full((L, L), 0.7) for _ in range(L)]
    layout = Layout("track", list("abcd"), ["A", "B"], [0, 1], 9)
    got = viewer_payload(trace, layout, ViewerMaps(est=mi, beside=("tv", tv)))
    assert got["beside"] == {"name": "TV influence (DEMASK)", "unit": "TV"} and "measure" not in got
    assert [("mi2" in s) for s in got["steps"]] == [True, True, True, False]  # the last step: one masked position
    assert got["steps"][0]["mi2"] != got["steps"][0]["mi"]  # its own values, not the MI's
    plain = viewer_payload(trace, layout, ViewerMaps(est=mi))
    assert "beside" not in plain and not any("mi2" in s for s in plain["steps"])


def test_an_empty_decode_is_refused():
    empty = viewer_payload(
        Trace({"name": "topk"}, [1, 1], [1, 1], []), Layout("track", ["a", "b"], ["A", "B"], [0, 1], 9)
    )
    assert frame_count(empty) == 0
    with pytest.raises(EmptyDecode, match="no step"):
        decode_gif(empty)


def test_a_long_map_is_pooled_to_its_level_of_detail():
    """Past MAX_CELLS masked positions a map is sent pooled: each cell the largest MI between two
    distinct positions of its two runs (brute force here), read back exactly by the GIF's decoder;
    at or under it, one cell a position and no cut."""
    from mi_viz.core.animation import _square
    from mi_viz.core.viewer import cuts, pooled, upper

    assert cuts(256, 256) is None
    rng = np.random.default_rng(0)
    M, C = 600, 256
    a = rng.random((M, M))
    mi = (a + a.T) / 2  # (M, M)
    pos = np.arange(M)
    cut = cuts(M, C)
    assert cut is not None and len(cut) == C + 1 and cut[0] == 0 and cut[-1] == M and min(np.diff(cut)) >= 1
    want = np.zeros((C, C))
    for x in range(C):
        for y in range(C):
            block = mi[cut[x] : cut[x + 1], cut[y] : cut[y + 1]].copy()
            if x == y:
                np.fill_diagonal(block, -1)
            want[x, y] = block.max()
    got = pooled(mi, pos, cut)
    assert np.array_equal(got, want)
    back = _square(upper(mi, pos, C), M, cut)
    assert back is not None and back.shape == (C, C)
    np.testing.assert_allclose(back, want.astype(np.float16), rtol=0, atol=0)
    # a short decode keeps one cell a position, its diagonal empty
    small = _square(upper(mi, pos[:10]), 10)
    assert small is not None
    np.testing.assert_allclose(small, (mi[:10, :10] * (1 - np.eye(10))).astype(np.float16), atol=0)


def test_a_trace_with_its_meta_is_drawn_in_a_notebook(tmp_path, monkeypatch, capsys):
    """A trace file carries its vocabulary, positions and backbone (trace_meta), so `mi_viz.show(path)`
    draws the same in-browser viewer in a notebook cell (an iframe running the page's own script);
    outside a notebook, where nothing would draw it, it writes the page and prints where; a trace
    without them is refused by name."""
    import json

    import mi_viz
    from mi_viz.core.errors import InputError
    from mi_viz.core.viewer import MadeBy, trace_meta

    tr = _trace()
    made = MadeBy(input="three positions", backbone="toy", weights_fingerprint="0123456789ab")
    tr.meta = trace_meta(kind="track", labels=["a", "b", "c"], symbols=["X", "Y"], value_tokens=[4, 5], mask_id=9,
                         made_by=made)  # fmt: skip
    path = tmp_path / "t.json"
    path.write_text(tr.to_json())
    meta = json.loads(path.read_text())["meta"]
    assert meta["vocabulary"] == {"4": "X", "5": "Y"} and meta["weights_fingerprint"] == "0123456789ab"
    monkeypatch.chdir(tmp_path)
    shown = mi_viz.show(path)  # a test is not a notebook: the page is written, its path said
    assert (tmp_path / "mi-viz-viewer.html").read_text() == shown.page
    assert str(tmp_path / "mi-viz-viewer.html") in capsys.readouterr().out
    cell = shown._repr_html_()
    assert cell.startswith("<iframe srcdoc=") and "mountViewer" in cell and "three positions" in cell
    assert "&lt;script&gt;" in cell  # the page is escaped into the attribute: its script runs inside the iframe
    assert shown.save(tmp_path / "t.html").read_text().startswith("<!DOCTYPE html>")
    bare = _trace()
    with pytest.raises(InputError, match="carries no kind, labels, vocabulary, mask_id"):
        mi_viz.show(bare)


def test_a_computed_ground_truth_is_kept_in_the_trace_and_drawn_from_it(tmp_path, monkeypatch):
    """What was paid for is kept: a step's ground truth (MI and TV over its masked positions, its cost)
    goes into the exported trace's meta, and mi_viz.show draws it from the file without recomputing."""
    import json

    import mi_viz
    from mi_viz.core.viewer import ground_truth_entry, ground_truth_record, trace_meta, truths_of

    tr = _trace()
    tr.meta = trace_meta(kind="track", labels=["a", "b", "c"], symbols=["X", "Y"], value_tokens=[4, 5], mask_id=9)
    mi = np.array([[0.0, 0.25, 0.125], [0.25, 0.0, 0.5], [0.125, 0.5, 0.0]])
    gt = {"mi": mi, "tv": mi / 2, "passes": 7, "seconds": 0.5, "dropped": 1e-4}
    tr.meta["ground_truth"] = {"0": ground_truth_record(gt, tr.steps[0].masked, 1e-3)}
    back = json.loads(tr.to_json())["meta"]["ground_truth"]["0"]
    assert back["positions"] == [0, 1, 2] and back["tv"][1][2] == 0.25 and back["passes"] == 7
    kept = truths_of(mi_viz.core.samplers.Trace.from_json(tr.to_json()))
    assert kept == {"0": ground_truth_entry(mi, [0, 1, 2])}
    monkeypatch.chdir(tmp_path)
    page = mi_viz.show(tr).page
    assert ground_truth_entry(mi, [0, 1, 2]) in page  # the offline page carries the kept map
