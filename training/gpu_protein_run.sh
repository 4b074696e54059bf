#!/usr/bin/env bash
# One GPU lease for the protein backbone (10-minute command): a bigger ESM-C-architecture MDM
# (preset gpu: d 512, 8 layers, 8 heads, about 25 M parameters) trained on the training split
# for $MINUTES minutes, then its held-out figures beside the small shipped one's.
#
#   bash training/gpu_protein_run.sh prepare     # HERE, before the lease: a training sample and the wheels to carry
#   OUT=out bash training/gpu_protein_run.sh     # THERE (device run, carry runs/gpu_carry and .whl)
#   TINY=1 OUT=/tmp/out bash training/gpu_protein_run.sh   # the same pipeline in about a minute on a CPU
#
# The lease machine gets the repository but not ../shared, and no esm: `prepare` writes
# runs/gpu_carry/train.fasta.gz (a seeded sample of the training split, at most $SAMPLE_MB MB: a
# lease carries 64 MiB in all, and the tree is about 55 MiB) and downloads the wheels of what
# ESMCCore and the FASTA reader import that the lease's image lacks (esm, brotli, zstd,
# cloudpathlib, biopython: about 9 MB; not transformers or biotite, which only
# esm.models.esmc needs) into .whl. What comes
# back ($OUT): the checkpoint (best.*, about 100 MB in fp32, so saved in bf16 for the trip:
# protein_mdm_gpu.*), its log, and the backbones' report.
set -u -o pipefail
OUT=${OUT:-out}
PY=${PY:-python3}
MINUTES=${MINUTES:-7}
SAMPLE_MB=${SAMPLE_MB:-3}
export SAMPLE_MB
export PYTHONUNBUFFERED=1

if [ "${1:-}" = prepare ]; then
  mkdir -p runs/gpu_carry
  $PY - <<'EOF'
import gzip, random
from mi_viz.domains.protein.fasta import read_fasta
recs = read_fasta("runs/protein_data/train.fasta")
random.Random(0).shuffle(recs)
with gzip.open("runs/gpu_carry/train.fasta.gz", "wt") as f:
    for rid, seq in recs:
        f.write(f">{rid}\n{seq}\n")
        if f.fileobj.tell() > float(__import__("os").environ.get("SAMPLE_MB", "3")) * 1e6:
            break
EOF
  cp runs/protein_data/val.fasta runs/gpu_carry/ 2>/dev/null
  gzip -f runs/gpu_carry/val.fasta
  grep -qx '/.whl/' .git/info/exclude || echo /.whl/ >> .git/info/exclude
  for p in esm==3.2.1.post1 brotli==1.2.1 zstd cloudpathlib==0.26.0 biopython==1.88; do
    $PY -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl "$p" \
      || $PY -m pip download -q --no-deps -d .whl "$p"
  done
  du -sh runs/gpu_carry .whl
  exit 0
fi

mkdir -p "$OUT" runs
if [ -d .whl ] && ! $PY -c "import esm" 2>/dev/null; then  # the lease machine: esm and what it imports, from the carried wheels
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:.
fi
export PYTHONPATH=${PYTHONPATH:-.}
nvidia-smi -L 2>/dev/null | tee "$OUT/gpu.txt"

if [ "${TINY:-0}" = 1 ]; then
  TRAIN="--preset tiny --max-steps 12"; DATA=data/protein/heldout_test.fasta; VAL=data/protein/reference_val.fasta
else
  TRAIN="--preset gpu --max-minutes $MINUTES"
  DATA=runs/gpu_carry/train.fasta.gz; VAL=runs/gpu_carry/val.fasta.gz
fi

echo "== 1. protein MDM ($TRAIN)"
$PY training/train_protein_mdm.py $TRAIN --data "$DATA" --val "$VAL" --run-dir runs/gpu_protein 2>&1 | tee "$OUT/train.log"
cp runs/gpu_protein/log.csv "$OUT/protein_mdm_gpu_log.csv"
$PY - <<'EOF'
import os, torch
from mi_viz.core.checkpoints import read_meta, read_tensors, save_checkpoint
meta, t = read_meta("runs/gpu_protein/best"), read_tensors("runs/gpu_protein/best")
out = os.environ.get("OUT", "out")
save_checkpoint(f"{out}/protein_mdm_gpu", {k: v.to(torch.bfloat16) for k, v in t.items()}, meta["kind"], meta["config"],
                meta["step"], meta["metrics"], {**meta["extra"], "stored_dtype": "bfloat16"})
EOF

echo "== 2. held-out figures"
$PY benchmarks/protein_backbones.py --backbone runs/gpu_protein/best --backbone protein_mdm \
  --train "$DATA" --out "$OUT/backbones_gpu.json" | tail -5
echo "== done"
