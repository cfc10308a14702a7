# Two commands for a fresh machine (see README.md):
#   make book   build the book at LLOYD_SCALE=default into _build/html, strictly
#   make test   lint (ruff), tests, the strict book build (which executes every chapter once: a cell that
#               raises or a claim that fails its check fails it) and the browser check, all at LLOYD_SCALE=ci
# Both create .venv (python3 -m venv) and install requirements.txt and lloydlib (editable) when needed.
# Options: make book SCALE=paper; OUT=/some/dir puts the build in /some/dir/_build/html.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
SCALE  ?= default
OUT    ?= .
HTML   := $(OUT)/_build/html
NOTEBOOKS := $(sort $(wildcard book/*.ipynb))
# Warnings are errors; --all re-reads every page, since a change in lloydlib does not invalidate a page.
BOOK_BUILD = $(BIN)/jupyter-book build . --path-output $(OUT) --all -W -n --keep-going

.PHONY: help book test venv

help:
	@echo "make book   build the book (LLOYD_SCALE=$(SCALE)) into $(HTML)"
	@echo "make test   lint, tests, strict book build (every chapter executed) and browser check at LLOYD_SCALE=ci"

$(VENV)/.installed: requirements.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -r requirements.txt
	$(BIN)/python -m pip install --no-deps -e .
	@touch $@

venv: $(VENV)/.installed

book: $(VENV)/.installed
	@echo "== book: LLOYD_SCALE=$(SCALE) -> $(HTML)"
	LLOYD_SCALE=$(SCALE) $(BIN)/python -m lloydbook.pretrain
	LLOYD_SCALE=$(SCALE) $(BOOK_BUILD)
	@echo "== book: open $(HTML)/index.html"

test: $(VENV)/.installed
	@echo "== test 1/4: lint (ruff check, ruff format --check; notebooks included)"
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@echo "== test 2/4: library and book-layer tests (pytest tests), while the book's sweeps train"
	@# one torch thread per process: on 2 cores the suite took 75 s against 347 s with torch's default
	@# threads (small tensors); pytest-xdist -n 2 was slower (158 s against 113 s). The chapters keep
	@# torch's default threads (01+02 under nbval: 40 s against 52 s with one thread). The suite uses one
	@# core, so the book's training (python -m lloydbook.pretrain, which the build then reads from the
	@# cache) starts beside it; its log follows the tests.
	@mkdir -p $(OUT)/_build
	LLOYD_SCALE=ci $(BIN)/python -m lloydbook.pretrain > $(OUT)/_build/pretrain.log 2>&1 & pre=$$!; \
	  rc=0; OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 LLOYD_SCALE=ci $(BIN)/python -m pytest tests -q -p no:cacheprovider --durations=10 || rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "no library tests collected"; rc=0; fi; \
	  if [ $$rc -ne 0 ]; then kill $$pre 2>/dev/null || true; exit $$rc; fi; \
	  echo "== waiting for the book's sweeps (python -m lloydbook.pretrain)"; prc=0; wait $$pre || prc=$$?; \
	  cat $(OUT)/_build/pretrain.log; exit $$prc
	@# The build is the chapters' test: it executes every chapter once (a separate nbval pass ran each a
	@# second time, about 10 minutes of a cold CI run); with warnings as errors and --keep-going, every
	@# failing cell is reported with its traceback (nb_execution_show_tb) and fails the build.
	@echo "== test 3/4: strict book build at LLOYD_SCALE=ci (executes every chapter)"
	LLOYD_SCALE=ci $(BOOK_BUILD)
	@echo "== test 4/4: every built page in headless Chromium"
	$(BIN)/python scripts/check_site.py $(HTML)
