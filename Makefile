# Two commands for a fresh machine (README):  make app  |  make test
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8501

.PHONY: app test setup chromium data train-mdm mi-data train-head results lint

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
	$(BIN)/pip install -q ruff && $(BIN)/ruff check .
