# Each target installs what it needs into .venv first (Python 3.11).
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: dev test test-fast lint bench screenshots clean

# Editable install in compat mode: a path entry instead of an import hook, which cost every
# process (CLI, API worker, RQ worker) about 20 ms at start.
$(STAMP): setup.cfg pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "Python 3.11 is required ($(PYTHON) not found)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,postgres]' --config-settings editable_mode=compat \
		|| $(BIN)/python -m pip install --quiet -e '.[dev,postgres]'
	touch $(STAMP)

dev: $(STAMP)
	$(BIN)/herald dev

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The edit-run loop: everything but the tests marked slow (real processes for seconds).
test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not slow" $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports

# The docs' screenshots, taken by the browser tests' Chromium (docs/images/).
screenshots: $(STAMP)
	$(BIN)/python -m pytest tests/web/screenshots.py -q

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) var
