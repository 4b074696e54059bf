#!/usr/bin/env bash
# One GPU lease for the MI head alone (issue #3), on the SHIPPED MDM: every committed
# result that does not read the head stays valid. About 8 minutes on an H200 (one command
# of a lease may run 10 minutes at most).
#
#   OUT=out bash training/gpu_head_run.sh
#   TINY=1 TINY_DATA=/tmp/dtest OUT=/tmp/out bash training/gpu_head_run.sh   # the same on a CPU in minutes
#
# 1. MI data: decode states of the training puzzles and random maskings of their
#    solutions up to 95 % masked (the CPU data set stopped at 80 %; the rules regime of
#    the structure AUROC is 90 %); the first 15.5 MiB of it come back packed (--pack).
# 2. The shipped head trained longer (its recipe: block 2, 2 mix blocks, symmetry
#    augmentation, the (H_i + H_j)/2 bound): a warm restart from its weights on all of the
#    new data, LONG_MIN minutes (its held-out loss was still falling after 20,250 steps on
#    the CPU; dev 0.898, test 0.902), scored beside the shipped head on the dev and rules
#    sets (training/head_probes.py --score; never the test set).
# 3. Only with PROBES set (comma-separated names of training/head_probes.py, e.g. "base"):
#    those probes on all of it, each scored on held-out, dev and rules states. Off by
#    default: they fit the 10-minute command limit only without step 2.
# 4. mi-report on the hard test puzzles for every head trained here (the head is chosen on
#    the dev column by whoever ships it, not on these numbers).
# What comes back ($OUT, at most 8 files): the packed MI states, the trained heads (tar),
# head_long_scores.csv (and head_probes.csv), the mi-reports (tar), logs. Shipping a head:
# README, "Shipping a head" (make reship).
set -u -o pipefail
OUT=${OUT:-out}
PY=${PY:-python3}
mkdir -p "$OUT" runs
export PYTHONUNBUFFERED=1
LOG=runs/logs_head
mkdir -p "$LOG"
pack() { tar -czf "$OUT/logs.tar.gz" -C runs logs_head 2>/dev/null; }
trap pack EXIT
PROBES=${PROBES:-}
RECIPE="--hidden-layers 2 --mix-layers 2 --augment --excess"

if [ "${TINY:-0}" = 1 ]; then
  MDM=${TINY_MDM:-/tmp/tiny_mdm}
  [ -f "$MDM.json" ] || $PY -c "
import sys; sys.path.insert(0, '.')
from mi_viz.models.sudoku_mdm import MDMConfig, SudokuMDM
from mi_viz.models import save_mdm
save_mdm('$MDM', SudokuMDM(MDMConfig(n_layer=6, n_head=2, d_model=32)), step=0)"
  MIDATA="--n-puzzles 8 --n-random 8 --states-per-puzzle 2 --shard-size 8 --n-val-holdout 3"
  PUZ="--puzzles ${TINY_DATA:-/tmp/dtest}/generated/train_puzzles.csv"
  STEPS=4; BASE="--hidden-layers 2 --batch-size 4 --max-minutes 0.2"; MI_MIN=0.5
  # the shipped head reads a 256-wide backbone, not the tiny one: the tiny run starts from scratch
  LONG="$RECIPE --steps 6 --batch-size 4 --eval-every 2 --max-minutes 0.3"; SCORE=""
  DEV="--dev-puzzles ${TINY_DATA:-/tmp/dtest}/test_hard.txt --dev-states 3 --rules-states 2"
  TEST=${TINY_DATA:-/tmp/dtest}/test_hard.txt; REPORT="--states 3 --structure-states 2"
else
  MDM=checkpoints/sudoku_mdm
  MIDATA="--n-puzzles 2800 --n-random 8000 --states-per-puzzle 6 --shard-size 256 --chunk 4096"
  PUZ=""; STEPS=8000; BASE="--hidden-layers 2 --batch-size 64 --max-minutes 1.2"; MI_MIN=${MI_MIN:-2.5}
  LONG="$RECIPE --init checkpoints/sudoku_mi_head --lr 1e-3 --steps 15000 --batch-size 64 --max-minutes ${LONG_MIN:-3.5}"
  SCORE="--score checkpoints/sudoku_mi_head"
  DEV=""; TEST=data/sudoku/test_hard.txt; REPORT="--states 100 --structure-states 40"
fi

nvidia-smi -L 2>/dev/null | tee "$LOG/gpu.txt"
$PY -c "import torch, sys; print(sys.version, torch.__version__, torch.cuda.is_available())" | tee -a "$LOG/gpu.txt"

echo "== 1. MI data (shipped MDM, maskings up to 95 %)"
$PY training/make_mi_dataset.py --mdm "$MDM" $MIDATA $PUZ --mask-range 0.2,0.95 --max-minutes "$MI_MIN" \
  --out runs/mi_data_head 2>&1 | tr '\r' '\n' | grep -v 'it/s\]$' | tee "$LOG/mi_data.log"
# as many states as one returned file holds (16 MiB; packed, about 13k states), for CPU training later
$PY training/make_mi_dataset.py --pack runs/mi_data_head "$OUT/mi_states.safetensors" --max-mb 15.5 | tee -a "$LOG/mi_data.log"
pack

echo "== 2. the shipped recipe, trained longer from the shipped head, on all of it"
$PY training/train_head.py --mdm "$MDM" --data runs/mi_data_head $LONG --out runs/head_long_gpu/long/sudoku_mi_head \
  2>&1 | tee "$LOG/head_long.log"
$PY training/head_probes.py --mdm "$MDM" --score runs/head_long_gpu/long/sudoku_mi_head $SCORE $DEV \
  --runs runs/head_long_gpu --out "$OUT/head_long_scores.csv" 2>&1 | tee -a "$LOG/head_long.log"
pack

if [ -n "$PROBES" ]; then
  echo "== 3. head probes on all of it: $PROBES"
  $PY training/head_probes.py --mdm "$MDM" --data runs/mi_data_head --steps "$STEPS" --only "$PROBES" $DEV \
    "--base-args=$BASE" --runs runs/head_probes_gpu --out "$OUT/head_probes.csv" 2>&1 | tee "$LOG/head_probes.log"
fi
mkdir -p runs/head_probes_gpu && cp -r runs/head_long_gpu/long runs/head_probes_gpu/  # step 4 reports every head there
tar -czf "$OUT/probe_heads.tar.gz" -C runs/head_probes_gpu --exclude '*_states.safetensors' --exclude '*_last.*' .
pack

echo "== 4. mi-report on the hard test puzzles, every head trained here"
mkdir -p runs/reports_gpu
for h in runs/head_probes_gpu/*/sudoku_mi_head.json; do
  d=$(basename "$(dirname "$h")")
  $PY -m mi_viz mi-report sudoku --puzzles "$TEST" $REPORT --checkpoint "$MDM" --head "${h%.json}" \
    --out "runs/reports_gpu/$d.json" 2>&1 | tail -1 | tee -a "$LOG/reports.log"
done
tar -czf "$OUT/mi_reports.tar.gz" -C runs reports_gpu
echo "== done"
