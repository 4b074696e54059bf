"""What storing the two backbones in float16 changed: their outputs, and the decodes of Table 1.

    python -m experiments.runs.float16_storage --out results/float16_storage.json

The shipped Sudoku and protein backbones were trained in float32 and are stored in float16
(training/ship_float16.py; the JSON half names the float32 file's sha); they are upcast when
loaded, so only the rounding of the weights differs. Their float32 files are read from git
history (FLOAT32_REV, the last commit that shipped them; the sha is checked), and:

1. outputs: on fixed states (the first 256 hard test puzzles as given; 64 random half-masked
   proteins of length 80), the largest and mean |logit difference| and |probability difference|
   over masked positions, and how many argmaxes flip;
2. decodes: every Table 1 setting's per-puzzle rows (results/sudoku/test_hard/rows/, decoded
   by the float16 file) against the same setting's rows at FLOAT32_REV (decoded by the float32
   file): puzzles whose outcome (solved, passes) changed, and the solve rate's change;
3. Table 2: proteins are sampled (temperature 1), and one flipped draw changes the rest of a
   sequence, so every row is in effect a new sample: each row's k-means and UniRep JSD against
   the same row at FLOAT32_REV (the size of a re-sample, to read beside results/protein/jsd_noise.json).

Prints, last, a one-line JSON.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import subprocess
import tempfile
from pathlib import Path

import torch

from benchmarks.report import save
from mi_viz.core.checkpoints import fingerprint
from mi_viz.core.sweep import setting_key, setting_keys
from mi_viz.domains import get_domain
from mi_viz.domains.sudoku import board as S

ROOT = Path(__file__).resolve().parents[1]
FLOAT32_REV = "b804116"  # the last commit whose checkpoints/ held the float32 backbones
ROWS = "results/sudoku/test_hard/rows"


def stored_float16(domain: str) -> bool:
    meta = json.loads((ROOT / "checkpoints" / f"{domain}_mdm.json").read_text())
    return meta["extra"].get("stored_dtype") == "float16"


def git_bytes(rev: str, path: str) -> bytes:
    r = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True)
    if r.returncode != 0:
        why = r.stderr.decode().strip()
        raise SystemExit(f"cannot read {path} at {rev} (a shallow clone? fetch the history): {why}")
    return r.stdout


def float32_copy(name: str, tmp: Path) -> Path:
    """checkpoints/NAME at FLOAT32_REV, written under tmp; its sha checked against the shipped JSON."""
    for suffix in (".safetensors", ".json"):
        (tmp / f"{name}{suffix}").write_bytes(git_bytes(FLOAT32_REV, f"checkpoints/{name}{suffix}"))
    want = json.loads((ROOT / "checkpoints" / f"{name}.json").read_text())["extra"].get("float32_sha")
    got = fingerprint(tmp / name)
    if want != got:
        raise SystemExit(f"{name} at {FLOAT32_REV} has sha {got}, the shipped JSON names {want}")
    return tmp / name


def states(domain: str, model) -> torch.Tensor:
    if domain == "sudoku":
        puzzles = S.read_puzzle_file(ROOT / "data/sudoku/test_hard.txt").puzzles[:256]
        return get_domain("sudoku").encode(puzzles)  # (256, 81)
    g = torch.Generator().manual_seed(0)
    vals = model.value_tokens[torch.randint(0, len(model.value_tokens), (64, 80), generator=g)]
    keep = torch.rand(64, 80, generator=g) < 0.5
    return torch.where(keep, vals, torch.full_like(vals, model.mask_id))  # (64, 80)


def outputs(domain: str, tmp: Path) -> dict:
    D = get_domain(domain)
    m16, m32 = D.load_model(None), D.load_model(float32_copy(f"{domain}_mdm", tmp))
    tok = states(domain, m16)
    with torch.no_grad():
        a, b = m32.forward_tokens(tok).logits, m16.forward_tokens(tok).logits  # (B, L, V)
    masked = tok == m16.mask_id
    d, dp = (a - b).abs()[masked], (a.softmax(-1) - b.softmax(-1)).abs()[masked]
    return {
        "states": int(tok.shape[0]),
        "masked_positions": int(masked.sum()),
        "max_abs_logit_diff": round(float(d.max()), 5),
        "mean_abs_logit_diff": round(float(d.mean()), 6),
        "max_abs_prob_diff": round(float(dp.max()), 5),
        "argmax_flips": int((a.argmax(-1) != b.argmax(-1))[masked].sum()),
    }


def read_rows(data: bytes) -> list[dict]:
    return list(csv.DictReader(io.StringIO(gzip.decompress(data).decode())))


def decodes() -> dict:
    out, changed, total = {}, 0, 0
    for f in sorted((ROOT / ROWS).glob("*.csv.gz")):
        new = read_rows(f.read_bytes())
        old = read_rows(git_bytes(FLOAT32_REV, f"{ROWS}/{f.name}"))
        if len(old) != len(new):
            raise SystemExit(f"{f.name}: {len(old)} rows at {FLOAT32_REV}, {len(new)} now")
        diff = sum((o["solved"], o["passes"]) != (n["solved"], n["passes"]) for o, n in zip(old, new))
        rate = 100 * (sum(int(n["solved"]) for n in new) - sum(int(o["solved"]) for o in old)) / len(new)
        out[f.name.removesuffix(".csv.gz")] = {"changed": diff, "solve_rate_change": round(rate, 2)}
        changed, total = changed + diff, total + len(new)
    return {
        "settings": out,
        "decodes": total,
        "changed": changed,
        "max_abs_solve_rate_change": max((abs(v["solve_rate_change"]) for v in out.values()), default=None),
    }


def table2() -> dict:
    path = "results/protein/table2/sweep.csv"
    keys = setting_keys()
    old = {setting_key(r, keys): r for r in csv.DictReader(io.StringIO(git_bytes(FLOAT32_REV, path).decode()))}
    pairs = [  # (float16 row, its float32 twin); rows added since have no twin
        (r, old[key]) for r in csv.DictReader(open(ROOT / path)) if (key := setting_key(r, keys)) in old
    ]
    out = {}
    for metric in ("jsd", "jsd_unirep"):
        d = [abs(float(new[metric]) - float(was[metric])) for new, was in pairs if new.get(metric)]
        out[metric] = {"rows": len(d), "max_abs_change": round(max(d), 4), "mean_abs_change": round(sum(d) / len(d), 4)}
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    halved = [d for d in ("sudoku", "protein") if stored_float16(d)]  # a backbone still in float32 is skipped
    with tempfile.TemporaryDirectory() as tmp:
        res = {"float32_rev": FLOAT32_REV, "outputs": {d: outputs(d, Path(tmp)) for d in halved}}
    if "sudoku" in halved:
        res["table1_decodes"] = decodes()
    if "protein" in halved:
        res["table2_resample"] = table2()
    save(res, a.out)


if __name__ == "__main__":
    main()
