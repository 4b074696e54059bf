"""Ground-truth MI data sets on disk: shards, one merged file, or one packed file.

A shard holds states (tokens (N, L)) with their exact MI maps (N, L, L), written atomically
by a training/make_*_mi_dataset.py run. A packed file keeps only the tokens and the upper
triangles of the masked pairs (fp16): about 1.2 kB a Sudoku state instead of 26 kB, read back
bit for bit. Why: ground truth costs about half a second a state on 2 CPU cores, so a data
set made once is worth keeping beside the code.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file, save_file

from .errors import UserError
from .mi import MIRun, ground_truth_mi
from .protocol import MaskedModel

log = logging.getLogger(__name__)


def merge(folder: Path) -> None:
    """Every shard of a folder -> FOLDER/merged.safetensors (atomic)."""
    shards = sorted(Path(folder).glob("shard_*.safetensors"))
    if not shards:
        raise MIDataError(f"no shards in {folder}")
    parts = [load_file(str(s)) for s in shards]
    merged = {k: torch.cat([p[k] for p in parts]) for k in parts[0]}
    tmp = folder / "merged.safetensors.tmp"
    save_file(merged, str(tmp))
    os.replace(tmp, folder / "merged.safetensors")
    log.info("merged %d shards: %d states -> %s", len(shards), merged["tokens"].shape[0], folder / "merged.safetensors")


PACKED_FORMAT = "mi-pairs-1"  # safetensors metadata "format" of a packed file
SUDOKU_MASK = 9  # files written before the "mask_id" field existed are Sudoku's


class MIDataError(UserError, ValueError):
    """An MI data file or folder that cannot be read; the message says which and why."""


def masked_upper_pairs(tokens: torch.Tensor, mask_id: int) -> torch.Tensor:
    """(N, L) tokens -> (N, L, L) bool: pairs i < j of two masked positions, the only entries of a
    map that are not zero or a mirror by definition."""
    m = tokens == mask_id  # (N, L)
    L = tokens.shape[1]
    return m[:, :, None] & m[:, None, :] & torch.ones(L, L, dtype=torch.bool).triu(1)


def pack(folder: Path, out: Path, mask_id: int, max_mb: float = 0.0) -> None:
    """A folder's states -> one compact file: tokens (N, L) uint8 and the maps' masked upper
    triangles (P,) fp16, state by state, row-major (boolean indexing order). max_mb > 0 keeps
    the first states that fit in that many MiB (a GPU lease returns files of 16 MiB at most)."""
    d = load_mi_dataset(folder)
    tokens, mi, tv = d["tokens"].to(torch.uint8), d["mi"], d.get("tv")
    maps = 2 if tv is not None else 1  # DEMASK's TV map beside the MI where the shards hold it
    if max_mb > 0:
        per_state = 2 * maps * masked_upper_pairs(tokens.long(), mask_id).sum((1, 2)) + tokens.shape[1]  # (N,) bytes
        n = int((per_state.cumsum(0) <= max_mb * 2**20 - 4096).sum())  # 4 kB for the header
        if n < len(tokens):
            log.info("keeping the first %d of %d states to fit %.1f MiB", n, len(tokens), max_mb)
        tokens, mi, tv = tokens[:n], mi[:n], None if tv is None else tv[:n]
    upper = masked_upper_pairs(tokens.long(), mask_id)
    values = mi.half()[upper]  # (P,)
    tensors = {"tokens": tokens.contiguous(), "mi_pairs": values.contiguous()}
    if tv is not None:
        tensors["tv_pairs"] = tv.half()[upper].contiguous()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    save_file(
        tensors,
        str(tmp),
        metadata={"format": PACKED_FORMAT, "source": str(folder), "mask_id": str(mask_id)},
    )
    os.replace(tmp, out)
    log.info(
        "packed %d states (%d masked pairs) -> %s (%.1f MiB)", len(tokens), len(values), out, out.stat().st_size / 2**20
    )


def unpack(path: Path) -> dict[str, torch.Tensor]:
    """A packed file -> {tokens (N, L) uint8, mi (N, L, L) fp16, and tv (N, L, L) where it was
    packed}: symmetric, zero off the masked pairs."""
    try:
        with safe_open(str(path), "pt") as f:
            meta = f.metadata() or {}
            fmt = meta.get("format")
            if fmt != PACKED_FORMAT:
                raise MIDataError(f"{path} is not a packed MI data set (format {fmt!r}, expected {PACKED_FORMAT!r})")
            tokens, values = f.get_tensor("tokens"), f.get_tensor("mi_pairs")
            tv_values = f.get_tensor("tv_pairs") if "tv_pairs" in f.keys() else None
            mask_id = int(meta.get("mask_id", SUDOKU_MASK))
    except (SafetensorError, OSError) as e:
        raise MIDataError(f"{path} is not a readable packed MI data set ({e})") from None
    upper = masked_upper_pairs(tokens.long(), mask_id)  # (N, L, L)
    if int(upper.sum()) != len(values):
        raise MIDataError(f"{path} is corrupt: {len(values)} values for {int(upper.sum())} masked pairs")
    out = {"tokens": tokens}
    for name, v in (("mi", values), ("tv", tv_values)):
        if v is None:
            continue
        m = torch.zeros(upper.shape, dtype=torch.float16)
        m[upper] = v
        out[name] = m + m.transpose(1, 2)  # the lower triangle is zero: the sum mirrors exactly
    return out


def load_mi_dataset(folder: str | Path) -> dict[str, torch.Tensor]:
    """All states of a data folder (merged file if present, else every shard), or of a packed file."""
    folder = Path(folder)
    if folder.is_file():
        return unpack(folder)
    if (folder / "merged.safetensors").exists():
        return load_file(str(folder / "merged.safetensors"))
    parts = [load_file(str(s)) for s in sorted(folder.glob("shard_*.safetensors"))]
    if not parts:
        raise MIDataError(f"no MI data in {folder}")
    return {k: torch.cat([p[k] for p in parts]) for k in parts[0]}


# --------------------------------------------------------------------------- the shard runner


@dataclass(frozen=True)
class ShardRun:
    """Where a data run writes its shards and how it splits the work (training/shards.py builds one
    from the make_*_mi_dataset.py flags): jobs per shard, this process's rank among world, only its
    first max_shards shards (0: all), and a budget in minutes checked between shards (0: none)."""

    out: Path
    shard_size: int
    rank: int = 0
    world: int = 1
    max_shards: int = 0
    max_minutes: float = 0.0


def run_shards(
    a: ShardRun,
    jobs: list,
    make_shard: Callable[[list], dict],
    describe: Callable[[dict], str] | None = None,
) -> int:
    """This rank's share of the jobs (every world-th), in shards of a.shard_size (the first
    a.max_shards), each made by make_shard(jobs) -> {tokens, mi, ...} and written atomically
    to OUT/shard_RANK_K.safetensors. A shard already there is skipped, so the same command run
    again resumes; a.max_minutes stops between shards. Returns the number of new states."""
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    mine = [j for n, j in enumerate(jobs) if n % a.world == a.rank]
    shards = [mine[s : s + a.shard_size] for s in range(0, len(mine), a.shard_size)]
    if a.max_shards:
        shards = shards[: a.max_shards]
    t0, total = time.time(), 0
    for k, shard_jobs in enumerate(shards):
        path = out / f"shard_{a.rank:03d}_{k:05d}.safetensors"
        if path.exists():
            continue
        if a.max_minutes and time.time() - t0 > a.max_minutes * 60:
            print("time budget reached; run the same command again to continue", flush=True)
            break
        data = make_shard(shard_jobs)
        tmp = path.with_name(path.name + ".tmp")
        save_file(data, str(tmp))
        os.replace(tmp, path)
        n = int(data["tokens"].shape[0])
        total += n
        print(
            f"shard {k + 1}/{len(shards)}: {n} states ({time.time() - t0:.0f} s)"
            + (describe(data) if describe else ""),
            flush=True,
        )
    print(f"rank {a.rank}: {total} new states in {time.time() - t0:.0f}s -> {out}", flush=True)
    return total


def right_padded(states: list[torch.Tensor], length: int, pad: int) -> torch.Tensor:
    """States of any lengths <= length as one (N, length) tensor, right-padded with `pad`."""
    out = torch.full((len(states), length), pad, dtype=torch.long)
    for r, s in enumerate(states):
        out[r, : len(s)] = s
    return out


def truth_shard(
    model: MaskedModel, states: list[torch.Tensor], max_length: int, pad: int, eps: float, chunk: int, device: str
) -> dict:
    """A shard of ground truth for states of any lengths <= max_length: tokens right-padded with
    `pad` (N, max_length) and each state's exact MI and TV influence (N, max_length, max_length) in float16, its
    marginal entropies, the pruned mass and passes; one length at a time (no padding in a pass)."""
    n, x = len(states), right_padded(states, max_length, pad)
    data = {
        "tokens": x.to(torch.uint8),
        "mi": torch.zeros(n, max_length, max_length, dtype=torch.float16),
        "tv": torch.zeros(n, max_length, max_length, dtype=torch.float16),  # DEMASK's D, from the same passes
        "entropy": torch.zeros(n, max_length),
        "dropped_mass": torch.zeros(n, max_length),
        "passes": torch.zeros(n, dtype=torch.long),
    }
    for L in sorted({len(s) for s in states}):
        rows = torch.tensor([r for r, s in enumerate(states) if len(s) == L])
        gt = ground_truth_mi(model, x[rows, :L].to(device), eps=eps, run=MIRun(chunk=chunk))
        data["mi"][rows, :L, :L] = gt.mi.half().cpu()
        data["tv"][rows, :L, :L] = gt.tv.half().cpu()  # type: ignore[union-attr]
        data["entropy"][rows, :L] = gt.entropy.cpu()
        data["dropped_mass"][rows, :L] = gt.dropped_mass.cpu()
        data["passes"][rows] = gt.passes.cpu()
    return data
