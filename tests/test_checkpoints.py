import json

import pytest
import torch
from safetensors.torch import save_file

from mi_viz.core.checkpoints import FORMAT_VERSION, CheckpointError, checkpoint_paths, save_checkpoint
from mi_viz.core.mi_head import load_head
from mi_viz.domains.sudoku.mdm import load_mdm, save_mdm


def test_round_trip(tmp_path, tiny_mdm):
    save_mdm(tmp_path / "m", tiny_mdm, step=7, metrics={"val_solved": 0.5})
    for name in ("m", "m.json", "m.safetensors"):
        model, meta = load_mdm(tmp_path / name)
        assert meta["step"] == 7 and meta["format_version"] == FORMAT_VERSION
        assert meta["metrics"]["val_solved"] == 0.5
        for k, v in tiny_mdm.state_dict().items():
            assert torch.equal(v, model.state_dict()[k])
    assert not list(tmp_path.glob("*.tmp"))  # atomic writes leave nothing behind


def _edit_json(path, fn):
    _, j = checkpoint_paths(path)
    meta = json.loads(j.read_text())
    fn(meta)
    j.write_text(json.dumps(meta))


def test_missing_files(tmp_path, tiny_mdm):
    with pytest.raises(CheckpointError, match="not found"):
        load_mdm(tmp_path / "nothing")
    save_mdm(tmp_path / "m", tiny_mdm)
    (tmp_path / "m.safetensors").unlink()
    with pytest.raises(CheckpointError, match=r"not found: .*m\.safetensors"):
        load_mdm(tmp_path / "m")


def test_bad_json_version_and_kind(tmp_path, tiny_mdm):
    save_mdm(tmp_path / "m", tiny_mdm)
    _edit_json(tmp_path / "m", lambda m: m.update(format_version=99))
    with pytest.raises(CheckpointError, match="format_version 99"):
        load_mdm(tmp_path / "m")
    save_mdm(tmp_path / "m", tiny_mdm)
    with pytest.raises(CheckpointError, match="holds a 'sudoku-mdm' checkpoint, expected 'mi-head'"):
        load_head(tmp_path / "m")
    (tmp_path / "m.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="not valid JSON"):
        load_mdm(tmp_path / "m")


def test_bad_config(tmp_path, tiny_mdm):
    save_mdm(tmp_path / "m", tiny_mdm)
    _edit_json(tmp_path / "m", lambda m: m["config"].update(n_heads=3))
    with pytest.raises(CheckpointError, match="not divisible"):
        load_mdm(tmp_path / "m")


def test_configs_of_older_releases_still_load(tmp_path, tiny_mdm):
    """Before 0.4 the Sudoku config said n_layer / n_head; esm's n_layers / n_heads now, both read."""
    save_mdm(tmp_path / "m", tiny_mdm)
    _edit_json(
        tmp_path / "m",
        lambda m: m.update(
            config={{"n_layers": "n_layer", "n_heads": "n_head"}.get(k, k): v for k, v in m["config"].items()}
        ),
    )
    model, meta = load_mdm(tmp_path / "m")
    assert "n_layer" in meta["config"] and model.config.n_layers == tiny_mdm.config.n_layers


def test_missing_unexpected_and_misshaped_keys_are_named(tmp_path, tiny_mdm):
    sd = dict(tiny_mdm.state_dict())
    save_mdm(tmp_path / "m", tiny_mdm)
    w, _ = checkpoint_paths(tmp_path / "m")
    bad = dict(sd)
    bad.pop("head.bias")
    bad["extra.weight"] = torch.zeros(2)
    bad["tok_emb.weight"] = torch.zeros(3, 3)
    save_file({k: v.contiguous() for k, v in bad.items()}, str(w))
    with pytest.raises(CheckpointError) as e:
        load_mdm(tmp_path / "m")
    msg = str(e.value)
    assert "missing keys ['head.bias']" in msg
    assert "unexpected keys ['extra.weight']" in msg
    assert "tok_emb.weight: checkpoint (3, 3) vs model (10, 32)" in msg


def test_corrupt_weights(tmp_path, tiny_mdm):
    save_mdm(tmp_path / "m", tiny_mdm)
    (tmp_path / "m.safetensors").write_bytes(b"\x00garbage" * 10)
    with pytest.raises(CheckpointError, match="not a readable safetensors file"):
        load_mdm(tmp_path / "m")


def test_shipped_checkpoints_load():
    from mi_viz.domains import get_domain

    model, meta = load_mdm(get_domain("sudoku").default_model)
    assert meta["kind"] == "sudoku-mdm" and model.n_params() > 1_000_000


def test_float16_storage_loads_into_float32(tmp_path, tiny_mdm):
    """training/ship_float16.py: half the bytes, the same module upcast; the JSON names the source."""
    import importlib.util

    from conftest import ROOT

    from mi_viz.core.checkpoints import fingerprint

    spec = importlib.util.spec_from_file_location("ship_float16", ROOT / "training" / "ship_float16.py")
    ship = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ship)
    save_mdm(tmp_path / "m32", tiny_mdm, step=3)
    ship.ship_float16(tmp_path / "m32", tmp_path / "m16")
    w32, w16 = checkpoint_paths(tmp_path / "m32")[0], checkpoint_paths(tmp_path / "m16")[0]
    assert w16.stat().st_size < 0.6 * w32.stat().st_size
    model, meta = load_mdm(tmp_path / "m16")
    assert meta["step"] == 3 and meta["extra"]["stored_dtype"] == "float16"
    assert meta["extra"]["float32_sha"] == fingerprint(tmp_path / "m32")
    for k, v in tiny_mdm.state_dict().items():
        got = model.state_dict()[k]
        assert got.dtype == v.dtype and torch.equal(got, v.half().to(v.dtype) if v.is_floating_point() else v)
    ship.ship_float16(tmp_path / "m16", tmp_path / "m16")  # halving again changes nothing, keeps the source's sha
    assert load_mdm(tmp_path / "m16")[1]["extra"]["float32_sha"] == fingerprint(tmp_path / "m32")


def test_compressed_weights_load_the_same_and_keep_their_fingerprint(tmp_path, tiny_mdm):
    """NAME.safetensors.xz (how the shipped checkpoints are stored): the same tensors, the same
    sha as the plain file (results record it), `xz -d` gives the plain file back; a corrupt .xz
    is named; saving over it writes a plain file and removes the stale .xz."""
    import lzma

    from mi_viz.core.checkpoints import compress_weights, fingerprint, weights_header

    save_mdm(tmp_path / "m", tiny_mdm, step=3)
    plain = (tmp_path / "m.safetensors").read_bytes()
    sha, (header, size) = fingerprint(tmp_path / "m"), weights_header(tmp_path / "m")
    out = compress_weights(tmp_path / "m")
    assert out.name == "m.safetensors.xz" and not (tmp_path / "m.safetensors").exists()
    assert lzma.decompress(out.read_bytes()) == plain and size == len(plain)
    assert fingerprint(tmp_path / "m") == fingerprint(out) == sha
    assert weights_header(tmp_path / "m.json") == (header, size)
    for name in ("m", "m.json", "m.safetensors.xz"):
        model, meta = load_mdm(tmp_path / name)
        assert meta["step"] == 3
        assert all(torch.equal(v, model.state_dict()[k]) for k, v in tiny_mdm.state_dict().items())
    out.write_bytes(out.read_bytes()[:200])  # truncated
    with pytest.raises(CheckpointError, match=r"m\.safetensors\.xz is not a readable"):
        load_mdm(tmp_path / "m")
    save_mdm(tmp_path / "m", tiny_mdm, step=4)
    assert (tmp_path / "m.safetensors").exists() and not out.exists()
    assert load_mdm(tmp_path / "m")[1]["step"] == 4


@pytest.mark.slow
def test_processes_filling_one_cold_cache_at_once_all_load():
    """Three processes load the shipped Sudoku models at one signal on an empty cache, twice: none fails
    (each writes its own temporary file and renames it; benchmarks/cache_race.py runs the 12 rounds)."""
    from benchmarks.cache_race import race

    assert race(rounds=2, processes=3) == []


def test_weights_header_reads_the_header_alone(tmp_path, monkeypatch):
    """The size comes from the tensors' offsets: no byte past the header is decompressed."""
    import lzma as _lzma

    from mi_viz.core import checkpoints

    save_checkpoint(tmp_path / "m", {"a": torch.zeros(1000), "b": torch.ones(3, 4)}, "mdm", {})
    plain, size = checkpoints.weights_header(tmp_path / "m")
    assert size == (tmp_path / "m.safetensors").stat().st_size
    checkpoints.compress_weights(tmp_path / "m")
    read = []
    real = _lzma.open

    class Counting:
        def __init__(self, f):
            self.f = f

        def read(self, n=-1):
            b = self.f.read(n)
            read.append(len(b))
            return b

        def __enter__(self):
            return self

        def __exit__(self, *e):
            self.f.close()

    monkeypatch.setattr(checkpoints.lzma, "open", lambda *a, **k: Counting(real(*a, **k)))
    header, xz_size = checkpoints.weights_header(tmp_path / "m")
    assert header == plain and xz_size == size and sum(read) < size // 2
