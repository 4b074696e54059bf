#!/usr/bin/env bash
# The protein MI head of a big backbone (ESM-C 300M) on a GPU: ground-truth MI data made with
# that backbone, then a head of about 810 k parameters (the paper's size) trained on it.
#
#   BACKBONE=esmc_300m OUT=out bash training/gpu_protein_head_run.sh            # weights in the local HF cache
#   BACKBONE=/path/esmc_300m_2024_12_v0.pth OUT=out bash training/gpu_protein_head_run.sh
#   TINY=1 OUT=/tmp/out bash training/gpu_protein_head_run.sh                   # the same pipeline on a CPU, a minute
#
# Needs ESM-C 300M's weights on the machine (`python -m mi_viz fetch-esmc`, 1.2 GB: too big to
# carry into this workplace's GPU leases, which reach no network, so this runs where the weights
# are) and runs/protein_data/train.fasta (training/make_protein_data.py). What it writes to $OUT:
# the packed MI states, the head (protein_mi_head_300m.*) and its log, and its mi-report.
set -u -o pipefail
OUT=${OUT:-out}
PY=${PY:-python3}
export PYTHONUNBUFFERED=1 PYTHONPATH=${PYTHONPATH:-.}
mkdir -p "$OUT" runs
if [ "${TINY:-0}" = 1 ]; then
  BACKBONE=${BACKBONE:-runs/tiny_protein/best}
  if [ ! -f "$BACKBONE.json" ]; then  # a tiny backbone to read, trained for a few steps
    $PY training/train_protein_mdm.py --preset tiny --run-dir runs/tiny_protein --data data/protein/heldout_test.fasta \
      --val data/protein/reference_val.fasta > "$OUT/tiny_backbone.log" 2>&1 || exit 1
  fi
  DATA="--train data/protein/reference_val.fasta --n-uncond 2 --n-prompted 2 --n-random 4 --shard-size 4 --states-per-decode 2"
  HEAD="--steps 6 --eval-every 3 --batch-size 4 --d-hidden 16 --rank 8 --d-pair 8 --hidden-layers 0"
  REPORT="--states 2 --max-length 30"
else
  BACKBONE=${BACKBONE:-esmc_300m}
  DATA="--n-uncond 3000 --n-prompted 3000 --n-random 4000 --shard-size 64 --chunk 2048 --max-minutes ${DATA_MIN:-40}"
  HEAD="--steps 8000 --eval-every 500 --batch-size 64 --d-hidden 512 --rank 128 --d-pair 64 --hidden-layers 20 \
    --mix-layers 2 --excess --max-minutes ${HEAD_MIN:-15}"
  REPORT="--states 100"
fi
DEV=$($PY -c "import torch; print('cuda' if torch.cuda.is_available() else 'cpu')")

echo "== 1. ground-truth MI states ($BACKBONE, $DEV)"
$PY training/make_protein_mi_dataset.py --backbone "$BACKBONE" $DATA --device "$DEV" --out runs/protein_mi_300m \
  2>&1 | tee "$OUT/mi_data.log"
$PY training/make_protein_mi_dataset.py --pack runs/protein_mi_300m "$OUT/protein_mi_states_300m.safetensors" --max-mb 15.5

echo "== 2. MI head"
$PY training/train_head.py --domain protein --mdm "$BACKBONE" --data runs/protein_mi_300m $HEAD --device "$DEV" \
  --out runs/protein_head_300m/protein_mi_head 2>&1 | tee "$OUT/train_head.log"
cp runs/protein_head_300m/protein_mi_head.safetensors "$OUT/protein_mi_head_300m.safetensors"
cp runs/protein_head_300m/protein_mi_head.json "$OUT/protein_mi_head_300m.json"
cp runs/protein_head_300m/protein_mi_head_log.csv "$OUT/protein_mi_head_300m_log.csv"

echo "== 3. fidelity on held-out states"
$PY -m mi_viz mi-report protein --backbone "$BACKBONE" --head runs/protein_head_300m/protein_mi_head $REPORT \
  --device "$DEV" --out "$OUT/mi_report_300m.json" | tail -1
echo "== done"
