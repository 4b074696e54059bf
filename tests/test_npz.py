"""The project's .npz writer: an ordinary .npz to np.load, smaller than deflate, never pickled."""

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
