"""Store a checkpoint's weights in float16 (the JSON half says so); loading upcasts them.

    python training/ship_float16.py SRC OUT      # e.g. runs/protein_cpu/final checkpoints/protein_mdm

Why: the tracked tree must stay small enough for a GPU lease to carry it with its data
(64 MiB in all), and a float32 backbone of 4M parameters is 16 MB of it. Every shipped
backbone is stored in half precision; it is upcast to float32 when loaded (load_state_strict
copies into float32 parameters), so computation is unchanged, and every committed result
was computed from the shipped float16 file (its sha is in each sweep row), never from the
training run's float32 one. The metrics in the JSON half are the training run's (float32);
the results files hold the shipped weights' own. SRC may be the shipped file itself (OUT ==
SRC): the float32 original stays in git history.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mi_viz.core import strict_json
from mi_viz.core.checkpoints import (
    checkpoint_paths,
    compress_weights,
    fingerprint,
    read_meta,
    read_tensors,
    save_checkpoint,
)


def ship_float16(src, out) -> dict:
    """SRC (a training checkpoint, optimizer state dropped) -> OUT in float16; returns OUT's meta."""
    src, out = Path(src), Path(out)
    meta = read_meta(src)
    tensors = {
        k: v.half() if v.is_floating_point() else v for k, v in read_tensors(src).items() if not k.startswith("opt.")
    }
    extra = dict(meta["extra"])
    if extra.get("stored_dtype") != "float16":  # the first halving names its float32 source
        extra.update(stored_dtype="float16", shipped_from=src.name, float32_sha=fingerprint(src))
    save_checkpoint(out, tensors, meta["kind"], meta["config"], meta["step"], meta["metrics"], extra)
    return {**meta, "extra": extra}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("src", help="the checkpoint to halve (NAME, NAME.json or NAME.safetensors)")
    ap.add_argument("out", help="where the float16 checkpoint goes (may be SRC)")
    a = ap.parse_args(argv)
    meta = ship_float16(a.src, a.out)
    compress_weights(a.out)  # stored xz-compressed, as every shipped checkpoint (the same bytes inside)
    size = checkpoint_paths(a.out)[0].stat().st_size
    print(strict_json.dumps({"shipped": a.out, "kind": meta["kind"], "bytes": size, "sha": fingerprint(a.out)}))


if __name__ == "__main__":
    main()
