#!/usr/bin/env bash
# One GPU lease, end to end: paper-scale Sudoku MDM -> MI data set -> MI head ->
# the ground-truth-oracle (mi-gt) benchmark rows that are too slow for 2 CPU cores.
#
#   OUT=out bash training/gpu_run.sh            # on a GPU machine (about 9 minutes on an H200)
#   TINY=1 OUT=/tmp/out bash training/gpu_run.sh   # the same pipeline in one minute on a CPU
#
# Each stage copies what it made into $OUT as soon as it is done, so a run cut
# short still returns every finished stage. Needs data/sudoku/generated (made by
# training/make_sudoku_data.py) and data/sudoku/test_hard.txt.
set -u -o pipefail
OUT=${OUT:-out}
PY=${PY:-python3}
mkdir -p "$OUT" runs
export PYTHONUNBUFFERED=1
LOG=runs/logs  # packed into $OUT/logs.tar.gz after each stage ($OUT takes at most 8 files)
mkdir -p "$LOG"
pack() { tar -czf "$OUT/logs.tar.gz" -C runs logs 2>/dev/null; }
trap pack EXIT

if [ "${TINY:-0}" = 1 ]; then
  MDM="--preset tiny --max-steps 30"; MIDATA="--n-puzzles 12 --n-random 12 --shard-size 8 --n-val-holdout 5"
  HEAD="--steps 20 --eval-every 10 --hidden-layers 1"; LIMIT="--limit 4"; MDM_MIN=0.2; MI_MIN=0.3; HEAD_MIN=0.2
  DATA="--data ${TINY_DATA:-/tmp/dtest}/generated/train_grids.txt --val ${TINY_DATA:-/tmp/dtest}/generated/train_puzzles.csv"
  PUZ="--puzzles ${TINY_DATA:-/tmp/dtest}/generated/train_puzzles.csv"
  TEST=${TINY_DATA:-/tmp/dtest}/test_hard.txt
else
  MDM="--preset paper --batch-size 512 --lr 1e-3 --warmup 500 --max-steps 60000 --eval-every 2000 --save-every 2000 --n-val 200"
  MIDATA="--n-puzzles 2800 --n-random 4000 --states-per-puzzle 6 --shard-size 256 --chunk 4096"
  HEAD="--steps 8000 --eval-every 500 --batch-size 64 --hidden-layers 2"; LIMIT=""; MDM_MIN=${MDM_MIN:-5.5}; MI_MIN=${MI_MIN:-1.3}; HEAD_MIN=${HEAD_MIN:-1.2}
  DATA=""; PUZ=""; TEST=data/sudoku/test_hard.txt
fi

nvidia-smi -L 2>/dev/null | tee "$LOG/gpu.txt"
$PY -c "import torch, sys; print(sys.version, torch.__version__, torch.cuda.is_available())" | tee -a "$LOG/gpu.txt"

echo "== 1. MDM"
$PY training/train_sudoku_mdm.py $MDM $DATA --max-minutes "$MDM_MIN" --run-dir runs/gpu_mdm 2>&1 | tee "$LOG/train_sudoku_mdm.log"
# shipped in float16 (training/ship_float16.py says why); every later stage reads the shipped file
$PY training/ship_float16.py runs/gpu_mdm/best runs/gpu_mdm/sudoku_mdm
cp runs/gpu_mdm/sudoku_mdm.safetensors runs/gpu_mdm/sudoku_mdm.json "$OUT/"
gzip -9n -c runs/gpu_mdm/log.csv > "$LOG/mdm_log.csv.gz"; cp runs/gpu_mdm/loss.png "$LOG/mdm_loss.png" 2>/dev/null
pack

echo "== 2. MI data"
$PY training/make_sudoku_mi_dataset.py --mdm runs/gpu_mdm/sudoku_mdm $MIDATA $PUZ --max-minutes "$MI_MIN" --out runs/mi_data 2>&1 \
  | tr '\r' '\n' | grep -v '^rank 0 shards: .*it/s\]$' | tee "$LOG/mi_data.log"

echo "== 3. MI head"
$PY training/train_head.py --mdm runs/gpu_mdm/sudoku_mdm --data runs/mi_data $HEAD --max-minutes "$HEAD_MIN" \
  --out runs/head/sudoku_mi_head 2>&1 | tee "$LOG/train_head.log"
cp runs/head/sudoku_mi_head.safetensors runs/head/sudoku_mi_head.json "$OUT/"
cp runs/head/sudoku_mi_head_log.csv "$LOG/head_log.csv"
pack

echo "== 4. oracle rows (mi-gt) on the hard test set"
# the paper's settings (lambda 0: the rule can read every pair, so the oracle expands the full
# map, ~90 passes per step). The default (lambda 0.25) needs ~55 oracle passes per puzzle and
# runs on the CPU in `make results`.
for gl in 0.3:0 0.6:0; do
  g=${gl%:*}; l=${gl#*:}
  timeout 150 $PY -m mi_viz bench sudoku --puzzles "$TEST" $LIMIT --checkpoint runs/gpu_mdm/sudoku_mdm --sampler mi-gt \
    --gamma $g --lam $l --out "$LOG/test_hard_mi-gt_g${g}_l${l}.csv" 2>&1 | tail -1 | tee -a "$LOG/mi_gt.jsonl"
  pack
done
echo "== done"
