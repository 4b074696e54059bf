"""Ship a family run: its best weights into checkpoints/ in float16, with the files beside them.

    python training/ship_family.py runs/family/family_PF00595 checkpoints/family_PF00595
    python training/ship_family.py runs/family_head/family_PF00595_mi_head checkpoints/family_PF00595_mi_head

Why float16: a family backbone is about a million parameters; stored in half precision it is
2 MB instead of 4, and the tree stays small enough for a GPU lease to carry it. The weights
are upcast when loaded (load_state_strict copies into float32 parameters), and every family
result in results/family/ was computed from the shipped float16 files, never from the run's
float32 ones. The JSON half records the storage dtype. The run's log goes to
results/family/NAME/ (train_log.csv or head_log.csv) and a contact map (RUN.contacts.json)
is copied beside the checkpoint.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from mi_viz.core.checkpoints import checkpoint_paths, read_meta, read_tensors, save_checkpoint


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="the run's checkpoint (its best weights), e.g. runs/family/family_PF00595")
    ap.add_argument("out", help="the shipped checkpoint, e.g. checkpoints/family_PF00595")
    a = ap.parse_args(argv)
    run, out = Path(a.run), Path(a.out)
    meta = read_meta(run)
    tensors = {
        k: v.half() if v.is_floating_point() else v for k, v in read_tensors(run).items() if not k.startswith("opt.")
    }
    extra = {**meta["extra"], "stored_dtype": "float16", "shipped_from": run.name}
    save_checkpoint(out, tensors, meta["kind"], meta["config"], meta["step"], meta["metrics"], extra)
    contacts = run.with_name(run.name + ".contacts.json")
    if contacts.exists():
        shutil.copy(contacts, out.with_name(out.name + ".contacts.json"))
    is_head = meta["kind"] == "mi-head"
    family = out.name.removeprefix("family_").removesuffix("_mi_head")
    log = run.with_name(run.name + "_log.csv")
    if log.exists():
        dest = Path("results") / "family" / family / ("head_log.csv" if is_head else "train_log.csv")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(log, dest)
    size = checkpoint_paths(out)[0].stat().st_size
    print(json.dumps({"shipped": str(out), "step": meta["step"], "bytes": size, "metrics": meta["metrics"]}))


if __name__ == "__main__":
    main()
