"""Ship a family run: its best weights into checkpoints/ in float16, with the files beside them.

    python training/ship_family.py runs/family/family_PF00595 checkpoints/family_PF00595
    python training/ship_family.py runs/family_head/family_PF00595_mi_head checkpoints/family_PF00595_mi_head

Why float16: training/ship_float16.py (every shipped backbone is stored so); every family
result in results/family/ was computed from the shipped float16 files. The run's log goes to
results/family/NAME/ (train_log.csv or head_log.csv) and a contact map (RUN.contacts.json)
is copied beside the checkpoint, gzip-compressed (NAME.contacts.json.gz).
"""

from __future__ import annotations

import argparse
import gzip
import shutil
from pathlib import Path

from ship_float16 import ship_float16

from mi_viz.core import strict_json
from mi_viz.core.checkpoints import checkpoint_paths, compress_weights


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="the run's checkpoint (its best weights), e.g. runs/family/family_PF00595")
    ap.add_argument("out", help="the shipped checkpoint, e.g. checkpoints/family_PF00595")
    a = ap.parse_args(argv)
    run, out = Path(a.run), Path(a.out)
    meta = ship_float16(run, out)
    contacts = run.with_name(run.name + ".contacts.json")
    if contacts.exists():  # shipped gzip-compressed, the same bytes inside
        packed = gzip.compress(contacts.read_bytes(), compresslevel=9, mtime=0)
        out.with_name(out.name + ".contacts.json.gz").write_bytes(packed)
    is_head = meta["kind"] == "mi-head"
    family = out.name.removeprefix("family_").removesuffix("_mi_head")
    log = run.with_name(run.name + "_log.csv")
    if log.exists():
        dest = Path("results") / "family" / family / ("head_log.csv" if is_head else "train_log.csv")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(log, dest)
    compress_weights(out)  # stored xz-compressed, as every shipped checkpoint (the same bytes inside)
    size = checkpoint_paths(out)[0].stat().st_size
    print(strict_json.dumps({"shipped": str(out), "step": meta["step"], "bytes": size, "metrics": meta["metrics"]}))


if __name__ == "__main__":
    main()
