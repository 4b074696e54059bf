# Two commands for a fresh machine (README):  make app  |  make test
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8501

.PHONY: app test setup chromium data mi-data results reship val-sweep speed head-probes head-7k equivariance lint

$(BIN)/activate:
	$(PY) -m venv $(VENV)

$(VENV)/.installed: requirements.txt | $(BIN)/activate
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements.txt
	touch $@

setup: $(VENV)/.installed

# Debian's Chromium for the real-browser test (Playwright's own browser download does not work offline)
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && $$SUDO apt-get install -y -q chromium; }

app: setup
	$(BIN)/streamlit run app.py --server.port $(PORT)

test: setup chromium
	$(BIN)/python -m pytest -q

# --- reproduce the data, models and results (see README) -------------------------
data: setup
	$(BIN)/python training/make_sudoku_data.py

lint: setup
	$(BIN)/pip install -q ruff==0.17.6 && $(BIN)/ruff check .

# --- results/ (README tables and figures); each line is the one command for its file ---
HARD := data/sudoku/test_hard.txt
KAGGLE := data/external/kaggle3m_curated_hard_expert_ratings.csv
VAL := data/sudoku/generated/val_puzzles.txt
GRID_VAL := sequential; topk:k=2,4,7; eb:gamma=0.1,0.2,0.5,1,0.001,0.003,0.01,0.03,1e-6,1e-5,3e-5,1e-4; mi:gamma=1e-4,0.001,0.01,0.03,0.1,0.3:lam=0.25,0.5,1; mi:gamma=0.01,0.1,0.3:lam=0; mi-zero:gamma=1e-4,0.001,0.01,0.03,0.1,0.3,1; mi:gamma=0.01,0.1:lam=0.5:scan=skip
GRID := sequential; topk:k=4,7; eb:gamma=1e-5,3e-5,1e-4,0.001,0.01,0.03,0.2,0.5; mi:gamma=0.3,0.6:lam=0; mi:gamma=0.001,0.01,0.03,0.1,0.3:lam=0.25; mi:gamma=0.01,0.1:lam=1; mi-zero:gamma=0.001,0.01,0.1,0.3,1; mi:gamma=0.01:lam=0.25:scan=skip; mi-gt:gamma=0.01:lam=0.25
GRID_EXT := sequential; topk:k=4,7; eb:gamma=1e-4,0.01,0.2,0.5; mi:gamma=0.3,0.6:lam=0; mi:gamma=0.01,0.1:lam=0.25; mi-zero:gamma=0.01,0.1; mi-gt:gamma=0.01:lam=0.25
# settings decoded side by side (sweep --jobs): about 1.3x the throughput of one 2-thread decode on 2 cores
JOBS ?= 2
# the committed ground-truth MI states (data/README.md; about an hour on 2 cores, resumable)
mi-data: setup
	$(BIN)/python training/make_mi_dataset.py --mdm checkpoints/sudoku_mdm --n-puzzles 2800 --n-random 4000 \
	  --states-per-puzzle 6 --shard-size 256 --max-shards 10 --out runs/mi_data
	$(BIN)/python training/make_mi_dataset.py --pack runs/mi_data data/sudoku/mi_states.safetensors

# choosing the MI defaults on validation puzzles (never the test sets)
val-sweep: setup
	$(BIN)/python -m mi_viz sweep sudoku --puzzles $(VAL) --grid "$(GRID_VAL)" --out-dir results/sudoku/val_sweep --resume --jobs $(JOBS)

# wall time on this machine: backbone throughput by batch and thread layout, then the whole Table 1 run (about 15 min)
speed: setup
	$(BIN)/python benchmarks/throughput.py | tee results/throughput.txt
	$(BIN)/python benchmarks/table1_time.py --jobs $(JOBS) --out results/sudoku/table1_time.json

# one-change-at-a-time probes of the MI head at an equal 1,000-step budget (19 probes, about 2 h on 2 cores;
# needs the ground-truth MI data set in runs/gpu_mi_data, see README Models); both steps resume. Then the
# cost of the shipped head, the heads in checkpoints/candidates/ (shipped budget, not shipped; _aug shipped before) and three
# probes against a pass, and the scores of the shipped head and the candidates on the probes' sets
head-probes: setup
	$(BIN)/python training/make_mi_dataset.py --n-puzzles 0 --n-random 150 --mask-range 0.85,0.95 --seed 1 --shard-size 50 --out runs/mi_data_high
	$(BIN)/python training/head_probes.py --data runs/gpu_mi_data --out results/sudoku/head_probes.csv
	$(BIN)/python benchmarks/attention_maps.py --out results/attention_maps.txt
	$(BIN)/python benchmarks/head_cost.py --head checkpoints/sudoku_mi_head --head $(CAND_AUG_EXCESS) \
	  --head checkpoints/candidates/sudoku_mi_head_attn5 \
	  --head checkpoints/candidates/sudoku_mi_head_aug \
	  --head runs/head_probes/attention_maps_of_all_6_blocks/sudoku_mi_head \
	  --head "runs/head_probes/attention_maps_of_all_6_blocks_+_bound_H_i_+_H_j_2_+_2_mix_blocks/sudoku_mi_head" \
	  --head "runs/head_probes/symmetry_augmentation_+_bound_H_i_+_H_j_2_+_direct-link_MI/sudoku_mi_head" \
	  --out results/sudoku/head_cost_probes.txt
	$(BIN)/python training/head_probes.py --score checkpoints/sudoku_mi_head --score $(CAND_AUG_EXCESS) \
	  --score checkpoints/candidates/sudoku_mi_head_attn5 --score checkpoints/candidates/sudoku_mi_head_aug \
	  --out results/sudoku/head_candidates.csv

# the shipped recipe on the committed 7,317 CPU-made states (data/README.md), + 2 mix blocks, and the best probe
# combination (+ all 6 blocks' maps + 2 mix blocks) on them, then + 1 mix block, 6,000 steps each (20-27 min on 2 cores;
# trained only if absent, logs kept in results/), scored with the shipped head and the earlier candidates on the
# same dev / rules sets in one run, and the new architectures' cost against a pass
CAND7K := checkpoints/candidates/sudoku_mi_head_7k
CAND7K_MAPS := checkpoints/candidates/sudoku_mi_head_7k_maps_mix
CAND7K_MIX := checkpoints/candidates/sudoku_mi_head_7k_mix
CAND7K_MIX1 := checkpoints/candidates/sudoku_mi_head_7k_mix1
CAND7K_MIX_MORE := checkpoints/candidates/sudoku_mi_head_7k_mix_more
CAND7K_MIX_MORE2 := checkpoints/candidates/sudoku_mi_head_7k_mix_more2
CAND7K_MIX_MORE3 := checkpoints/candidates/sudoku_mi_head_7k_mix_more3
# the head shipped before 7k_mix_more3 (--augment --excess, 6,000 steps on the GPU lease's 4,200 states)
CAND_AUG_EXCESS := checkpoints/candidates/sudoku_mi_head_aug_excess
MAPS_MIX := --attn-layers 0,1,2,3,4,5 --mix-layers 2
# $(call candidate_7k,NAME,ARGS): --hidden-layers 2 --augment --excess + ARGS on the 7,317 states, trained into runs/head_NAME only if
# checkpoints/candidates/sudoku_mi_head_NAME is absent; checkpoint and log copied where the scoring reads them
define candidate_7k
test -f checkpoints/candidates/sudoku_mi_head_$(1).json || { $(BIN)/python training/train_head.py \
  --data data/sudoku/mi_states.safetensors --out runs/head_$(1)/sudoku_mi_head --steps 6000 --batch-size 32 \
  --hidden-layers 2 --augment --excess $(2) && \
  cp runs/head_$(1)/sudoku_mi_head.json checkpoints/candidates/sudoku_mi_head_$(1).json && \
  cp runs/head_$(1)/sudoku_mi_head.safetensors checkpoints/candidates/sudoku_mi_head_$(1).safetensors && \
  cp runs/head_$(1)/sudoku_mi_head_log.csv results/sudoku/candidate_mi_head_$(1)_log.csv; }
endef
head-7k: setup
	$(call candidate_7k,7k,)
	$(call candidate_7k,7k_maps_mix,$(MAPS_MIX))
	$(call candidate_7k,7k_mix,--mix-layers 2)
	$(call candidate_7k,7k_mix1,--mix-layers 1)
	# 6,000 more steps of the 2-mix-block head (a warm restart from it: its held-out loss was still falling at 6,000)
	$(call candidate_7k,7k_mix_more,--mix-layers 2 --init $(CAND7K_MIX) --lr 1e-3 --seed 1)
	$(call candidate_7k,7k_mix_more2,--mix-layers 2 --init $(CAND7K_MIX_MORE) --lr 1e-3 --seed 2)  # and 6,000 more
	$(call candidate_7k,7k_mix_more3,--mix-layers 2 --init $(CAND7K_MIX_MORE2) --lr 1e-3 --seed 3 --steps 3000)  # and 3,000 more
	# the shipped head is a copy of 7k_mix_more3: its log is the four runs' logs end to end
	$(BIN)/python training/lineage_log.py $(CAND7K_MIX_MORE3) --out results/sudoku_mi_head_log.csv
	$(BIN)/python training/head_probes.py --score checkpoints/sudoku_mi_head --score $(CAND_AUG_EXCESS) \
	  --score checkpoints/candidates/sudoku_mi_head_aug --score checkpoints/candidates/sudoku_mi_head_attn5 --score $(CAND7K) --score $(CAND7K_MIX1) --score $(CAND7K_MIX) \
	  --score $(CAND7K_MAPS) --score $(CAND7K_MIX_MORE) --score $(CAND7K_MIX_MORE2) --score $(CAND7K_MIX_MORE3) --out results/sudoku/head_candidates_7k.csv
	$(BIN)/python benchmarks/heads_on_test_states.py --head $(CAND_AUG_EXCESS) --head checkpoints/candidates/sudoku_mi_head_aug \
	  --head checkpoints/candidates/sudoku_mi_head_attn5 --head $(CAND7K) --head $(CAND7K_MIX1) --head $(CAND7K_MIX) \
	  --head $(CAND7K_MAPS) --head $(CAND7K_MIX_MORE) --head $(CAND7K_MIX_MORE2) --head $(CAND7K_MIX_MORE3) --out results/sudoku/head_candidates_test.csv
	# (the shipped head is 7k_mix_more3, the architecture of 7k_mix and its continuations: timed once)
	$(BIN)/python benchmarks/head_cost.py --head checkpoints/sudoku_mi_head --head $(CAND_AUG_EXCESS) --head $(CAND7K_MIX1) \
	  --head $(CAND7K_MAPS) --out results/sudoku/head_cost_7k.txt

# the shipped head (2 mix blocks, 21,000 steps), the one shipped before it (--augment --excess) and the one before that (--augment) against the recipe
# without augmentation (3,000 steps, an earlier release's head; trained here first if absent, about 12 min on 2 cores):
# equivariance under Sudoku's symmetries and dev Pearson
# (the committed row's head was trained on the GPU lease's 4,200 states, runs/gpu_mi_data; where they are absent, on
# the committed 7,317 states: the same recipe, other data, so that row's numbers move)
UNAUG_DATA := $(if $(wildcard runs/gpu_mi_data),runs/gpu_mi_data,data/sudoku/mi_states.safetensors)
equivariance: setup
	test -f runs/head_unaugmented/sudoku_mi_head.json || $(BIN)/python training/train_head.py --data $(UNAUG_DATA) \
	  --out runs/head_unaugmented/sudoku_mi_head --steps 3000 --hidden-layers 2 --batch-size 32
	$(BIN)/python benchmarks/equivariance.py --head runs/head_unaugmented/sudoku_mi_head \
	  --head checkpoints/candidates/sudoku_mi_head_aug --head $(CAND_AUG_EXCESS) --head checkpoints/sudoku_mi_head \
	  --out results/sudoku/equivariance.json

# every result that reads the shipped MI head, after a new one replaced checkpoints/sudoku_mi_head (README, "Shipping a
# head"): the sweeps re-decode only their mi rows (--resume keys rows by the head's sha256); 77 min on 2 cores last time
reship: results val-sweep equivariance head-7k speed

results: setup
	$(BIN)/python -m mi_viz sweep sudoku --puzzles $(HARD) --grid "$(GRID)" --save-rows --out-dir results/sudoku/test_hard --resume --jobs $(JOBS)
	$(BIN)/python -m mi_viz sweep sudoku --puzzles $(KAGGLE) --grid "$(GRID_EXT)" --save-rows --out-dir results/sudoku/kaggle --resume --jobs $(JOBS)
	$(BIN)/python -m mi_viz bench sudoku --puzzles data/sudoku/test_medium.csv --sampler sequential --out results/sudoku/test_medium_sequential.csv | tail -1 > results/sudoku/test_medium_sequential.json
	$(BIN)/python -m mi_viz mi-report sudoku --puzzles $(HARD) --states 100 --structure-states 40 --out results/sudoku/mi_report.json --pairs results/sudoku/mi_report_pairs.npz
	$(BIN)/python benchmarks/truth_bounds.py
	$(BIN)/python -m mi_viz figure sudoku --puzzles $(HARD) --index 0 --step 12 --out results/figure1.png
	$(BIN)/python benchmarks/latency.py | tee results/latency.txt
	$(BIN)/python benchmarks/first_error.py --puzzles $(VAL) --sampler "eb:gamma=1e-4" --sampler "mi:gamma=0.01:lam=0.25" --sampler "mi-zero:gamma=0.01" --out results/sudoku/first_error_val.json
