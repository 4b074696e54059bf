#!/usr/bin/env bash
# The rest of run.sh on both cores once test_hard is down to its one long setting (mi-gt):
# worker 1 runs the validation sweep, worker 2 waits for test_hard; then both take Kaggle's grid
# entries from a queue (one out-dir each under kaggle_parts/), merged into kaggle/ at the end.
#   bash wip/sudoku_float16/run2.sh > runs/fp16/run2.log 2>&1 &      (resumable)
set -euo pipefail
cd "$(dirname "$0")/../.."
W=wip/sudoku_float16
CK=runs/fp16/sudoku_mdm
B=.venv/bin
export OMP_NUM_THREADS=1
p() { make -s --no-print-directory -f Makefile -f <(printf 'print-%%:\n\t@echo "$(%s)"\n' '$*') print-$1; }
S() { $B/python -m mi_viz sweep sudoku --checkpoint $CK --resume "$@"; }
KAGGLE=data/external/kaggle3m_curated_hard_expert_ratings.csv
GRID_EXT=$(p GRID_EXT)
mkdir -p $W/kaggle_parts runs/fp16/claims
take_kaggle() {  # worker: run every unclaimed grid entry
  local i=0
  IFS=';' read -ra entries <<< "$GRID_EXT"
  for e in "${entries[@]}"; do
    i=$((i + 1)); e=$(echo "$e" | xargs)
    [ -f $W/kaggle_parts/$i/done ] && continue
    mkdir runs/fp16/claims/$i 2>/dev/null || continue
    S --puzzles $KAGGLE --grid "$e" --save-rows --jobs 1 --out-dir $W/kaggle_parts/$i
    touch $W/kaggle_parts/$i/done
  done
}
rm -rf runs/fp16/claims/*
( S --puzzles data/sudoku/generated/val_puzzles.txt --grid "$(p GRID_VAL); $(p GRID_VAL4)" --jobs 1 --out-dir $W/val_sweep \
  && touch $W/done.val_sweep && take_kaggle ) &
( while pgrep -f "out-dir $W/test_hard" > /dev/null; do sleep 20; done
  S --puzzles data/sudoku/test_hard.txt --grid "$(p GRID); $(p GRID4)" --save-rows --jobs 1 --out-dir $W/test_hard
  touch $W/done.test_hard; take_kaggle ) &
wait
# merge: every part's rows into kaggle/, then the whole grid --resume (all reused) writes it in grid order
n=$(ls -d $W/kaggle_parts/*/ | wc -l)
for d in $W/kaggle_parts/*/; do [ -f $d/done ] || { echo "part $d not done"; exit 1; }; done
mkdir -p $W/kaggle/rows
$B/python - "$W" <<'PY'
import csv, sys
from pathlib import Path
w = Path(sys.argv[1])
rows = [r for d in sorted((w / "kaggle_parts").iterdir()) for r in csv.DictReader(open(d / "sweep.csv"))]
cols = list(dict.fromkeys(k for r in rows for k in r))
with open(w / "kaggle" / "sweep.csv", "w", newline="") as f:
    out = csv.DictWriter(f, fieldnames=cols, restval=""); out.writeheader(); out.writerows(rows)
PY
cp $W/kaggle_parts/*/rows/*.csv.gz $W/kaggle/rows/
S --puzzles $KAGGLE --grid "$GRID_EXT" --save-rows --jobs 2 --out-dir $W/kaggle
touch $W/done.kaggle
