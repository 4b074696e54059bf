#!/usr/bin/env bash
# Re-run every Sudoku sweep from the float16 Sudoku MDM (issue 31: the tracked tree under 35 MB).
# Resumable: run again and each sweep reuses the settings it already finished (--resume).
#   bash wip/sudoku_float16/run.sh > runs/fp16/run.log 2>&1 &
set -euo pipefail
cd "$(dirname "$0")/../.."
W=wip/sudoku_float16
CK=runs/fp16/sudoku_mdm
B=.venv/bin
mkdir -p runs/fp16
[ -f $CK.safetensors ] || $B/python training/ship_float16.py checkpoints/sudoku_mdm $CK
sha=$($B/python -c "from mi_viz.core.checkpoints import fingerprint; print(fingerprint('$CK'))")
[ "$sha" = 4371de67656e ] || { echo "unexpected float16 sha $sha"; exit 1; }
p() { make -s --no-print-directory -f Makefile -f <(printf 'print-%%:\n\t@echo "$(%s)"\n' '$*') print-$1; }
[ -f data/sudoku/generated/val_puzzles.txt ] || OMP_NUM_THREADS=1 $B/python training/make_sudoku_data.py &
export OMP_NUM_THREADS=1
S() { $B/python -m mi_viz sweep sudoku --checkpoint $CK --resume --jobs 2 "$@"; }
S --puzzles data/sudoku/test_hard.txt --grid "$(p GRID); $(p GRID4)" --save-rows --out-dir $W/test_hard
touch $W/done.test_hard
wait
S --puzzles data/sudoku/generated/val_puzzles.txt --grid "$(p GRID_VAL); $(p GRID_VAL4)" --out-dir $W/val_sweep
touch $W/done.val_sweep
S --puzzles data/external/kaggle3m_curated_hard_expert_ratings.csv --grid "$(p GRID_EXT)" --save-rows --out-dir $W/kaggle
touch $W/done.kaggle
