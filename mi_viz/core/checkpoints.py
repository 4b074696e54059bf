"""Self-describing checkpoints: safetensors weights + a JSON config, loaded strictly.

A checkpoint NAME is two files, NAME.safetensors (tensors only: nothing is ever
unpickled) and NAME.json:

    {"format_version": 1, "kind": "sudoku-mdm", "config": {...}, "step": 1234,
     "metrics": {...}, "extra": {...}}

The weights may also be stored as NAME.safetensors.xz: the same safetensors file, xz-compressed
(`xz -d` gives it back byte for byte). The shipped checkpoints are stored so (a tenth smaller:
the tree carries to a GPU lease in 64 MiB). The first read decompresses it once into a cache
keyed by the weights' sha256 (MI_VIZ_CACHE, else ~/.cache/mi-viz, else beside the checkpoint);
every later read, in any process, memory-maps the cached file. The JSON half records that sha256
(`weights_sha256`, of the decompressed bytes) at save time, so a fingerprint (what every sweep row
records) is read, never recomputed: the same value as hashing the bytes, so every row stays valid.

Writes are atomic (temporary file + os.replace), so a crash mid-save leaves the
previous checkpoint intact. Loading checks the kind, the format version, and
that the weights match the model built from the config exactly: missing,
unexpected and mis-shaped keys are all named in the error.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import os
import tempfile
from pathlib import Path
from typing import IO, Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from . import strict_json
from .errors import UserError

FORMAT_VERSION = 1


class CheckpointError(UserError, RuntimeError):
    """A checkpoint that cannot be used; the message says exactly why."""


XZ = ".xz"  # a compressed weights file: NAME.safetensors.xz


def checkpoint_paths(path: str | os.PathLike) -> tuple[Path, Path]:
    """NAME, NAME.json, NAME.safetensors or NAME.safetensors.xz -> (weights, NAME.json); the
    weights are NAME.safetensors, or NAME.safetensors.xz where only the compressed file is there."""
    p = Path(path)
    if p.name.endswith(".safetensors" + XZ):
        p = p.with_suffix("")
    if p.suffix in (".json", ".safetensors"):
        p = p.with_suffix("")
    w = p.with_name(p.name + ".safetensors")
    xz = w.with_name(w.name + XZ)
    return (xz if xz.exists() and not w.exists() else w), p.with_name(p.name + ".json")


def _open_weights(path: Path) -> IO[bytes]:
    """A weights file for reading its safetensors bytes: decompressed on the fly when it is .xz."""
    return lzma.open(path, "rb") if path.suffix == XZ else open(path, "rb")


def fingerprint(path: str | os.PathLike) -> str:
    """First 12 hex digits of the sha256 of a checkpoint's weights (NAME, NAME.json or
    NAME.safetensors; of the decompressed bytes when stored as .xz), or of any other weights file
    named as it is (ESM-C 300M's .pth, AntiBERTy's .bin): which weights produced a result row (so a
    resumed sweep never mixes two heads' numbers). Read from the JSON half where it recorded it."""
    p = Path(path)
    if p.is_file() and p.suffix not in (".json", ".safetensors", XZ):
        return _file_sha256(p)[:12]
    return weights_sha256(p)[:12]


def _file_sha256(p: Path) -> str:
    """A weights file with no JSON half (a wheel's AntiBERTy .bin, 104 MB: seconds to hash): hashed once,
    the sha kept in the cache under the file's path, size and modification time (a changed file misses)."""
    st = p.stat()
    key = hashlib.sha256(f"{p.resolve()}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()[:32]
    try:
        memo = cache_dir(p) / f"sha-{key}.txt"
    except CheckpointError:
        return _sha256(p)
    if memo.exists():
        sha = memo.read_text().strip()
        if len(sha) == 64:
            return sha
    sha = _sha256(p)
    try:
        _atomic_write_bytes(memo, sha.encode())
    except OSError:
        pass  # a cache that cannot be written costs a hash next time, nothing else
    return sha


def weights_sha256(path: str | os.PathLike) -> str:
    """The sha256 of a checkpoint's (decompressed) weights: recorded in its JSON at save time, else hashed."""
    wpath, jpath = checkpoint_paths(path)
    if jpath.exists():
        try:
            sha = json.loads(jpath.read_text()).get("weights_sha256")
        except (json.JSONDecodeError, UnicodeDecodeError):
            sha = None
        if isinstance(sha, str) and len(sha) == 64:
            return sha
    return _sha256(wpath)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with _open_weights(path) as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def record_weights_sha(path: str | os.PathLike) -> str:
    """Write the weights' sha256 into a checkpoint's JSON half if it lacks it (checkpoints saved before
    it was recorded); the hash of the decompressed bytes, as fingerprint always took it."""
    wpath, jpath = checkpoint_paths(path)
    meta = json.loads(jpath.read_text())
    if not (isinstance(meta.get("weights_sha256"), str) and len(meta["weights_sha256"]) == 64):
        meta["weights_sha256"] = _sha256(wpath)
        _atomic_write_bytes(jpath, strict_json.dumps(meta, indent=1).encode())
    return meta["weights_sha256"]


def cache_dir(near: Path) -> Path:
    """Where decompressed weights are kept: MI_VIZ_CACHE, else ~/.cache/mi-viz (XDG_CACHE_HOME), else a
    .cache folder beside the checkpoint; the first that can be written."""
    env = os.environ.get("MI_VIZ_CACHE")
    home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mi-viz"
    for d in ([Path(env)] if env else []) + [home, near.parent / ".cache"]:
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(d, os.W_OK):
            return d
    raise CheckpointError(f"no writable cache for decompressed weights (tried MI_VIZ_CACHE, {home}, beside {near})")


def decompressed(wpath: Path) -> Path:
    """A .xz weights file's decompressed twin in the cache (made once, atomically), keyed by the sha256
    of its bytes; verified against the JSON's recorded sha when it has one."""
    jpath = checkpoint_paths(wpath)[1]
    want = None
    if jpath.exists():
        try:
            want = json.loads(jpath.read_text()).get("weights_sha256")
        except (json.JSONDecodeError, UnicodeDecodeError):
            want = None
    # the recorded sha and the compressed file's size: a copy that changed on disk (truncated, replaced)
    # misses the cache and is read, and named if it is corrupt
    key = f"{want}-{wpath.stat().st_size}" if want else "xz-" + hashlib.sha256(wpath.read_bytes()).hexdigest()
    out = cache_dir(wpath) / f"{key}.safetensors"
    if out.exists():
        return out
    try:
        with lzma.open(wpath, "rb") as f:
            raw = f.read()
    except (OSError, EOFError, lzma.LZMAError) as e:
        raise CheckpointError(f"{wpath} is not a readable xz file ({e})") from None
    if want and hashlib.sha256(raw).hexdigest() != want:
        raise CheckpointError(f"{wpath} does not hold the weights its JSON names (sha256 {want[:12]}): a corrupt copy")
    _atomic_write_bytes(out, raw)
    return out


def weights_header(path: str | os.PathLike) -> tuple[dict, int]:
    """A checkpoint's safetensors header (names, dtypes, shapes; no tensor read) and the size in
    bytes of its safetensors file (decompressed: what loading holds in memory). Only the header is
    read (of an .xz, only its first bytes decompressed): the size follows from the tensors' offsets."""
    w = checkpoint_paths(path)[0]
    with _open_weights(w) as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
    ends = [v["data_offsets"][1] for k, v in header.items() if k != "__metadata__"]
    return header, 8 + n + max(ends, default=0)


def compress_weights(path: str | os.PathLike) -> Path:
    """NAME.safetensors -> NAME.safetensors.xz (xz preset 9e, aligned to the numbers; atomic), the plain file removed.
    Reading, fingerprints and strict loading are unchanged (the same bytes inside)."""
    w = checkpoint_paths(path)[0]
    if w.suffix == XZ:
        return w
    raw = w.read_bytes()
    out = w.with_name(w.name + XZ)
    _atomic_write_bytes(out, min((_xz(raw, width) for width in (2, 4)), key=len))
    if lzma.decompress(out.read_bytes()) != raw:  # never trade a checkpoint for a corrupt copy
        out.unlink()
        raise CheckpointError(f"compressing {w} did not round-trip")
    w.unlink()
    return out


def _xz(raw: bytes, width: int) -> bytes:
    """xz (preset 9e) tuned for little-endian numbers `width` bytes wide: no literal context
    (lc=0) and literal / match positions aligned to the number (lp = pb = log2 width). Float
    weights are near noise byte for byte but their sign-exponent bytes repeat at a fixed stride;
    this saves 4-9 % over the default on our checkpoints, and any xz reader reads it."""
    bits = width.bit_length() - 1
    lzma2 = {"id": lzma.FILTER_LZMA2, "preset": 9 | lzma.PRESET_EXTREME, "lc": 0, "lp": bits, "pb": bits}
    return lzma.compress(raw, format=lzma.FORMAT_XZ, filters=[lzma2])


def _temporary(path: Path) -> Path:
    """A fresh file beside path, named for it and unique to this writer: several processes filling one
    cache at once each write their own and rename it over path (the last rename wins, every reader
    sees a whole file); a fixed NAME.tmp let one writer rename another's away mid-write."""
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    return Path(name)


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    tmp = _temporary(path)
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def save_checkpoint(
    path: str | Path,
    tensors: dict[str, torch.Tensor],
    kind: str,
    config: dict,
    step: int = 0,
    metrics: dict | None = None,
    extra: dict | None = None,
) -> Path:
    """Write NAME.safetensors and NAME.json atomically; returns the weights path."""
    wpath, jpath = checkpoint_paths(path)
    wpath.parent.mkdir(parents=True, exist_ok=True)
    if wpath.suffix == XZ:  # a new checkpoint over a compressed one: written plain, the old file goes
        wpath = wpath.with_suffix("")
    tmp = _temporary(wpath)
    try:
        save_file({k: v.detach().contiguous().cpu() for k, v in tensors.items()}, str(tmp))
        os.replace(tmp, wpath)
    finally:
        tmp.unlink(missing_ok=True)
    wpath.with_name(wpath.name + XZ).unlink(missing_ok=True)
    meta = {
        "format_version": FORMAT_VERSION,
        "kind": kind,
        "config": config,
        "step": int(step),
        "metrics": metrics or {},
        "extra": extra or {},
        "weights_sha256": _sha256(wpath),  # what fingerprints read, and the decompression cache's key
    }
    _atomic_write_bytes(jpath, strict_json.dumps(meta, indent=1).encode())
    return wpath


def read_meta(path: str | Path, kind: str | None = None) -> dict:
    """The JSON half, validated: exists, parses, right format version and kind."""
    wpath, jpath = checkpoint_paths(path)
    for p in (jpath, wpath):
        if not p.exists():
            raise CheckpointError(f"checkpoint file not found: {p}")
    try:
        meta = json.loads(jpath.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CheckpointError(f"{jpath} is not valid JSON ({e})") from None
    if not isinstance(meta, dict) or "format_version" not in meta:
        raise CheckpointError(f"{jpath} has no format_version: not an mi_viz checkpoint")
    if meta["format_version"] != FORMAT_VERSION:
        raise CheckpointError(
            f"{jpath} has format_version {meta['format_version']}; this mi_viz reads version {FORMAT_VERSION}"
        )
    if kind is not None and meta.get("kind") != kind:
        raise CheckpointError(f"{jpath} holds a {meta.get('kind')!r} checkpoint, expected {kind!r}")
    if not isinstance(meta.get("config"), dict):
        raise CheckpointError(f"{jpath} has no config object")
    return meta


def read_tensors(path: str | Path) -> dict[str, torch.Tensor]:
    """A checkpoint's tensors, memory-mapped from the safetensors file (a .xz one's decompressed twin)."""
    wpath, _ = checkpoint_paths(path)
    if not wpath.exists():
        raise CheckpointError(f"checkpoint file not found: {wpath}")
    plain = decompressed(wpath) if wpath.suffix == XZ else wpath
    try:
        return load_file(str(plain))
    except (SafetensorError, OSError, ValueError) as e:
        raise CheckpointError(f"{wpath} is not a readable safetensors file ({e})") from None


def load_state_strict(module: torch.nn.Module, tensors: dict[str, torch.Tensor], where: str = "checkpoint") -> None:
    """load_state_dict, but every mismatch is named before anything is loaded."""
    own = module.state_dict()
    missing = sorted(set(own) - set(tensors))
    unexpected = sorted(set(tensors) - set(own))
    shapes = [
        f"{k}: checkpoint {tuple(tensors[k].shape)} vs model {tuple(own[k].shape)}"
        for k in sorted(set(own) & set(tensors))
        if tensors[k].shape != own[k].shape
    ]
    problems = []
    if missing:
        problems.append(f"missing keys {missing[:8]}{' ...' if len(missing) > 8 else ''}")
    if unexpected:
        problems.append(f"unexpected keys {unexpected[:8]}{' ...' if len(unexpected) > 8 else ''}")
    if shapes:
        problems.append(f"mis-shaped keys {shapes[:8]}")
    if problems:
        raise CheckpointError(f"{where} does not match the model: " + "; ".join(problems))
    module.load_state_dict(tensors, strict=True)


def save_module(
    path: str | Path,
    module: torch.nn.Module,
    kind: str,
    step: int = 0,
    metrics: dict | None = None,
    extra: dict | None = None,
) -> Path:
    """Save a module that carries a `config` dataclass with to_dict()."""
    config = module.config.to_dict()  # type: ignore[union-attr, operator]  # our modules carry a config dataclass
    return save_checkpoint(path, module.state_dict(), kind, config, step, metrics, extra)


def load_module(
    path: str | Path, kind: str, config_cls: Any, module_cls: Any, device: str = "cpu", ignore_prefix: str | None = None
) -> tuple[Any, dict]:
    """Build module_cls(config_cls(**config)) from the JSON half, load the weights strictly.

    ignore_prefix drops keys that a training checkpoint adds on purpose (optimizer
    state, 'opt.'), so that `last` and `best` checkpoints both load."""
    meta = read_meta(path, kind)
    try:
        config = config_cls(**meta["config"])
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"bad {kind} config in checkpoint {path}: {e}") from None
    module = module_cls(config)
    tensors = read_tensors(path)
    if ignore_prefix:
        tensors = {k: v for k, v in tensors.items() if not k.startswith(ignore_prefix)}
    load_state_strict(module, tensors, where=f"checkpoint {path}")
    return module.to(device).eval(), meta


# --- optimizer state as plain tensors (for resumable training without pickle) ---------


def optimizer_to_tensors(opt: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], dict]:
    """Flatten an optimizer's state into named tensors plus JSON-able scalars."""
    sd = opt.state_dict()
    tensors, scalars = {}, {}
    for pid, st in sd["state"].items():
        for k, v in st.items():
            if torch.is_tensor(v):
                tensors[f"opt.{pid}.{k}"] = v
            else:
                scalars[f"{pid}.{k}"] = v
    return tensors, {"param_groups": sd["param_groups"], "scalars": scalars}


def optimizer_from_tensors(opt: torch.optim.Optimizer, tensors: dict[str, torch.Tensor], meta: dict) -> None:
    state: dict = {}
    for name, v in tensors.items():
        if not name.startswith("opt."):
            continue
        _, pid, k = name.split(".", 2)
        state.setdefault(int(pid), {})[k] = v
    for key, v in meta.get("scalars", {}).items():
        pid, k = key.split(".", 1)
        state.setdefault(int(pid), {})[k] = v
    opt.load_state_dict({"state": state, "param_groups": meta["param_groups"]})
