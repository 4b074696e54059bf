"""Store checkpoints' weights xz-compressed: NAME.safetensors -> NAME.safetensors.xz.

    python training/compress_checkpoints.py checkpoints/*.json

The same safetensors bytes inside (`xz -d` restores the file exactly), read by
mi_viz.core.checkpoints in memory; fingerprints hash the decompressed bytes, so every sha a
committed result records stays valid (the command checks it and prints the bytes saved).
A file already stored as .xz is compressed again with the current settings (kept only if smaller).
Each JSON half records its weights' sha256 (what fingerprints then read: `--sha-only` does only that).
"""

from __future__ import annotations

import argparse
import lzma

from mi_viz.core.checkpoints import checkpoint_paths, compress_weights, fingerprint, record_weights_sha


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkpoints", nargs="+", help="NAME, NAME.json or NAME.safetensors")
    ap.add_argument("--sha-only", action="store_true", help="only record each one's weights_sha256 in its JSON")
    a = ap.parse_args(argv)
    if a.sha_only:
        for c in dict.fromkeys(str(checkpoint_paths(p)[1]) for p in a.checkpoints):
            print(f"{c}: weights_sha256 {record_weights_sha(c)[:12]}")
        return
    saved = 0
    for c in dict.fromkeys(str(checkpoint_paths(p)[1]) for p in a.checkpoints):
        w = checkpoint_paths(c)[0]
        before, sha = w.stat().st_size, fingerprint(c)
        old = w.read_bytes() if w.suffix == ".xz" else None
        if old is not None:  # compress again: the plain bytes back beside it, then as a new file
            w.with_suffix("").write_bytes(lzma.decompress(old))
            w.unlink()
        out = compress_weights(c)
        if old is not None and out.stat().st_size >= len(old):
            out.write_bytes(old)  # the earlier file was no larger: keep it byte for byte
        record_weights_sha(c)
        if fingerprint(c) != sha:
            raise SystemExit(f"error: {c}'s fingerprint changed ({sha} -> {fingerprint(c)})")
        saved += before - out.stat().st_size
        print(f"{out}: {before:,} -> {out.stat().st_size:,} bytes, sha {sha} kept")
    print(f"saved {saved:,} bytes")


if __name__ == "__main__":
    main()
