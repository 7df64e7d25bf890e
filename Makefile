# Two commands do all the set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test bench typecheck hardware clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/cribboard keep

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python bench/run.py

typecheck: $(STAMP)
	$(BIN)/mypy

# The drilling template, wiring diagrams, board picture and README tables in hardware/, from the
# firmware's layout and board profiles.
hardware: $(STAMP)
	$(BIN)/python -m cribboard.hardware

clean:
	rm -rf $(VENV) build dist .pytest_cache
