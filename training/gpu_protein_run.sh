#!/usr/bin/env bash
# One GPU lease for the protein backbone (10-minute command): a bigger ESM-C-architecture MDM
# (preset gpu: d 512, 8 layers, 8 heads, about 25 M parameters) trained on the training split
# for $MINUTES minutes, then its held-out figures beside the small shipped one's.
#
#   bash training/gpu_protein_run.sh carry       # HERE: a dry run: what the lease would carry, in bytes, against 64 MiB
#   bash training/gpu_protein_run.sh prepare     # HERE, before the lease: the packed split and the wheels to carry
#   OUT=out bash training/gpu_protein_run.sh     # THERE (device run, carry runs/gpu_carry and .whl)
#   TINY=1 OUT=/tmp/out bash training/gpu_protein_run.sh   # the same pipeline in about a minute on a CPU
#
# The lease machine gets the repository but not ../shared, and no esm: `prepare` writes the
# *whole* training split, rebuilt from the corpus and the committed split and xz-packed
# (training/pack_protein_split.py: runs/gpu_carry/train.fasta.xz), 2,000 validation-split sequences,
# and downloads the wheels of what ESMCCore and the FASTA reader import that the lease's image
# lacks (esm, brotli, zstd, cloudpathlib, biopython: about 9 MB; not transformers or biotite,
# which only esm.models.esmc needs) into .whl. A lease carries 64 MiB in all (the tracked
# tree, the untracked files git does not ignore, and these): `carry` prints each part and the
# total, and `prepare` refuses when the total would not fit. What comes back ($OUT): the
# checkpoint (best.*, about 100 MB in fp32, so saved in bf16 for the trip: protein_mdm_gpu.*),
# its log, and the backbones' report.
set -u -o pipefail
OUT=${OUT:-out}
PY=${PY:-python3}
MINUTES=${MINUTES:-7}
LIMIT=$((64 * 1024 * 1024))
export PYTHONUNBUFFERED=1

carry_bytes() {  # the tree a lease copies + the carried paths; prints a table, returns 1 when over
  local tree extra carried whl total
  tree=$(git ls-files -z | xargs -0 du -cb | tail -1 | cut -f1)
  extra=$(git ls-files -z --others --exclude-standard | xargs -0 -r du -cb | tail -1 | cut -f1)
  carried=$(du -cb runs/gpu_carry 2>/dev/null | tail -1 | cut -f1)
  whl=$(du -cb .whl 2>/dev/null | tail -1 | cut -f1)
  total=$((tree + ${extra:-0} + ${carried:-0} + ${whl:-0}))
  printf '%-44s %8.1f MiB\n' "tracked tree" "$(echo "$tree / 1048576" | bc -l)" \
    "untracked, not ignored" "$(echo "${extra:-0} / 1048576" | bc -l)" \
    "runs/gpu_carry (the packed split, val)" "$(echo "${carried:-0} / 1048576" | bc -l)" \
    ".whl (esm and what it imports)" "$(echo "${whl:-0} / 1048576" | bc -l)" \
    "total (limit 64 MiB)" "$(echo "$total / 1048576" | bc -l)"
  [ "$total" -le "$LIMIT" ]
}

if [ "${1:-}" = carry ]; then
  carry_bytes || { echo "does not fit: shrink the tracked tree (README: Models) or carry less"; exit 1; }
  if [ ! -f runs/gpu_carry/train.fasta.xz ] || [ ! -d .whl ]; then  # a total without them says nothing
    echo "not prepared: the split or the wheels are missing; run \`bash training/gpu_protein_run.sh prepare\`"; exit 1
  fi
  echo "fits"; exit 0
fi

if [ "${1:-}" = prepare ]; then
  mkdir -p runs/gpu_carry
  [ -f runs/gpu_carry/train.fasta.xz ] || $PY training/pack_protein_split.py --out runs/gpu_carry/train.fasta.xz || exit 1
  [ -f runs/gpu_carry/val.fasta.xz ] || $PY training/pack_protein_split.py --split val --limit 2000 --out runs/gpu_carry/val.fasta.xz || exit 1
  grep -qx '/.whl/' .git/info/exclude || echo /.whl/ >> .git/info/exclude
  for p in esm==3.2.1.post1 brotli==1.2.1 zstd cloudpathlib==0.26.0 biopython==1.88; do
    $PY -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl "$p" \
      || $PY -m pip download -q --no-deps -d .whl "$p"
  done
  carry_bytes || { echo "the lease would not carry all this: shrink the tracked tree first"; exit 1; }
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
  DATA=runs/gpu_carry/train.fasta.xz; VAL=runs/gpu_carry/val.fasta.xz
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
