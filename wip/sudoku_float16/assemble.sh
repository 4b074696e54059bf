#!/usr/bin/env bash
# After run.sh marked all three sweeps done: ship the float16 file, put the sweeps in place and
# regenerate every Sudoku result that reads the backbone (the sweeps' rows are reused, --resume).
set -euo pipefail
cd "$(dirname "$0")/../.."
W=wip/sudoku_float16
B=.venv/bin
for d in test_hard val_sweep kaggle; do [ -f $W/done.$d ] || { echo "$d is not finished: run.sh first"; exit 1; }; done
$B/python training/ship_float16.py checkpoints/sudoku_mdm checkpoints/sudoku_mdm
sha=$($B/python -c "from mi_viz.core.checkpoints import fingerprint; print(fingerprint('checkpoints/sudoku_mdm'))")
[ "$sha" = 4371de67656e ] || { echo "unexpected float16 sha $sha"; exit 1; }
for d in test_hard val_sweep kaggle; do rm -rf results/sudoku/$d; cp -r $W/$d results/sudoku/$d; done
make results                                  # every sweep row reused; fronts, medium, mi-report, head scores, figure, latency, tables
$B/python benchmarks/sudoku_defaults.py       # the validation choice (git diff mi_viz/ shows whether it moved)
$B/python benchmarks/float16_storage.py --out results/float16_storage.json
$B/python benchmarks/tables.py --write
echo "now: make speed on a quiet CPU, docs/results-sudoku.md, make test (README.md in this folder)"
