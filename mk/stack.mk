# Local-stack targets; meant to be included from the Makefile (`-include mk/stack.mk`).
#   make tasks-venv    create .venv-tasks with the Cloud Tasks emulator (idempotent; it pins an
#                      old protobuf, so it cannot share .venv)
#   make stack-status  each component of the running stack, up or down
#
# The stack itself: `strata stack up [--json] | down | status`, `strata stack dev` (foreground).

PYTHON3 ?= python3
TASKS_VENV ?= .venv-tasks
TASKS_EMULATOR_VERSION ?= 0.6.2

.PHONY: tasks-venv stack-status

tasks-venv: $(TASKS_VENV)/.installed

# Re-runs only when the stamp is missing or older than this file (e.g. a version bump here).
$(TASKS_VENV)/.installed: mk/stack.mk
	test -x $(TASKS_VENV)/bin/python || $(PYTHON3) -m venv $(TASKS_VENV)
	$(TASKS_VENV)/bin/pip --disable-pip-version-check -q install gcloud-tasks-emulator==$(TASKS_EMULATOR_VERSION)
	test -x $(TASKS_VENV)/bin/gcloud-tasks-emulator
	touch $@

stack-status:
	.venv/bin/python -m strata_dev.localstack stack status
