"""The project's stored files: .npz with LZMA members (an ordinary .npz to np.load, smaller than deflate, never
pickled) and gzip text that regenerates byte-identical."""

import numpy as np
import pytest

from mi_viz.core.npz import save_npz


def test_save_npz_round_trips_and_beats_deflate(tmp_path):
    rng = np.random.default_rng(0)
    arrays = {
        "gt": rng.gamma(0.3, 0.01, size=20_000).astype(np.float32),  # MI-like: many tiny values
        "i": rng.integers(0, 81, size=20_000),
        "about": np.array('{"note": "text"}'),
    }
    save_npz(tmp_path / "a.npz", **arrays)
    np.savez_compressed(tmp_path / "b.npz", **arrays)
    z = np.load(tmp_path / "a.npz")  # allow_pickle stays False
    assert z.files == list(arrays)
    for k, v in arrays.items():
        assert z[k].dtype == v.dtype and np.array_equal(z[k], v)
    assert (tmp_path / "a.npz").stat().st_size < (tmp_path / "b.npz").stat().st_size
    assert not list(tmp_path.glob("*.tmp"))


def test_save_npz_refuses_objects_and_leaves_nothing(tmp_path):
    with pytest.raises(ValueError):
        save_npz(tmp_path / "a.npz", x=np.array([{"a": 1}], dtype=object))
    assert not list(tmp_path.iterdir())


def test_gzip_text_is_the_same_bytes_every_time(tmp_path):
    """A committed .json.gz regenerates byte-identical: no time or name in the gzip header."""
    import time

    from mi_viz.core.paths import read_text, write_text

    text = '{"a": [1.5, 2.25]}\n' * 100
    write_text(tmp_path / "a.json.gz", text)
    time.sleep(1.1)
    write_text(tmp_path / "b.json.gz", text)
    assert (tmp_path / "a.json.gz").read_bytes() == (tmp_path / "b.json.gz").read_bytes()
    assert read_text(tmp_path / "a.json.gz") == text and (tmp_path / "a.json.gz").stat().st_size < len(text) / 5
    write_text(tmp_path / "c.json", text)  # a plain name stays plain text
    assert (tmp_path / "c.json").read_text() == text
