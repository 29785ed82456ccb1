"""What each function's entry module loads at import time (issue 33, cold start).

A cold start pays for every module a function imports before it answers, so an entry module must
not load what its first request does not need: the embedder stack, the provider adapters, the
model client, the rule extractor's patterns (only capture extracts), the MCP server. Each
``functions/<name>/main.py`` is imported in a fresh interpreter, as the runtime imports it, and its
``sys.modules`` is checked against the deny-list below. This is an import check, not a timing.

A function that never embeds (not in :data:`core.start_check.EMBEDS`) must not load the embedder
stack on its request path either: the service modules its entry point imports when an event
arrives are imported too and checked the same way.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from core.start_check import EMBEDS
from strata_dev.packaging import FUNCTIONS

REPO = Path(__file__).resolve().parents[2]

# The embedder stack: numerical and model libraries, and the adapter that loads them.
EMBEDDER_STACK = ("numpy", "sentence_transformers", "transformers", "torch", "onnxruntime", "tokenizers",
                  "core.adapters.embeddings")
# Loaded at first use, by the requests that need them, in every function.
NOT_AT_LOAD = (*EMBEDDER_STACK,
               "httpx", "typesense",                 # HTTP clients: providers, webhooks, model APIs
               "google.cloud.pubsub_v1", "google.pubsub_v1", "google.cloud.tasks_v2",  # the nudge, the queue
               "core.adapters.typesense_index", "core.adapters.pinecone_index", "core.adapters.llm",
               "core.adapters.pubsub", "core.adapters.tasks", "core.adapters.webhook_http",
               "core.adapters.rules.extractor",         # capture's extractor: about 40 ms of patterns
               "core.domain.routing", "core.adapters.rules.router",  # the router's patterns: passes and capture
               "core.api.mcp", "mcp")                # the MCP server, on the first /mcp request only

# The service modules each entry point imports when its event arrives (core/functions_entry.py).
REQUEST_PATH = {
    "api": ("core.api.app",),
    "on_conversation_complete": ("core.services.capture", "core.services.webhooks", "core.adapters.llm"),
    "delete_cascade": ("core.services.conversations",),
    "outbox_drain": ("core.services.accounts", "core.services.projection"),
    "consolidate": ("core.services.consolidation", "core.services.webhooks", "core.api.auth"),
    "deliver_webhook": ("core.services.webhooks", "core.api.auth"),
}

# Beyond the embedder stack: capture builds its extractor through core.adapters.llm, and the rule
# extractor (the default) needs no HTTP client; a model client imports httpx when it is built.
# The delete cascade imports capture (core.services.conversations reprocesses too) but never
# extracts: the rule extractor stays behind capture's own lazy import.
REQUEST_DENIED = {"on_conversation_complete": ("httpx",), "delete_cascade": ("core.adapters.rules.extractor",)}
# Only consolidation routes, and capture's rule extractor shares the router's change words.
ROUTES = {"consolidate", "on_conversation_complete"}

PROBE = """
import importlib, importlib.util, json, sys
spec = importlib.util.spec_from_file_location("main", "main.py")
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
loaded = sorted(sys.modules)
from core.adapters.rules import sensitivity
compiled = [f.__name__ for f in (sensitivity._secret_patterns, sensitivity._topic_patterns) if f.cache_info().currsize]
for name in sys.argv[1:]:
    importlib.import_module(name)
print(json.dumps({"load": loaded, "request": sorted(sys.modules), "compiled_at_load": compiled}))
"""


@cache
def _probes() -> dict[str, subprocess.Popen[str]]:
    """One probe interpreter per function, all started at once (they are independent: on two cores
    they overlap)."""
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1"}
    return {function: subprocess.Popen([sys.executable, "-c", PROBE, *REQUEST_PATH[function]],
                                       cwd=REPO / "functions" / function, env=env, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True)
            for function in sorted(REQUEST_PATH)}


@cache
def _modules(function: str) -> dict[str, list[str]]:
    """The modules loaded by importing the function's ``main.py`` (``load``), then its request
    path's service modules as well (``request``), in a fresh interpreter with default settings;
    ``compiled_at_load``: the sensitivity pattern sets compiled by the import. One interpreter per
    function for the whole module (the probe reads files only; every test below asks it something
    else): each costs one to six seconds of a cold import."""
    probe = _probes()[function]
    out, err = probe.communicate(timeout=120)
    assert probe.returncode == 0, err
    loaded: dict[str, list[str]] = json.loads(out)
    return loaded


def _matches(loaded: list[str], denied: tuple[str, ...]) -> list[str]:
    return sorted({name for name in loaded for prefix in denied if name == prefix or name.startswith(prefix + ".")})


def test_every_function_is_checked() -> None:
    assert set(REQUEST_PATH) == set(FUNCTIONS)
    assert EMBEDS.issubset(FUNCTIONS)


@pytest.mark.parametrize("function", sorted(FUNCTIONS))
def test_entry_module_loads_nothing_its_first_request_does_not_need(function: str) -> None:
    modules = _modules(function)
    # the probe really imported the function (a broken probe would pass everything)
    assert "functions_framework" in modules["load"] and "core.config" in modules["load"]
    assert _matches(modules["load"], NOT_AT_LOAD) == []


@pytest.mark.parametrize("function", sorted(set(FUNCTIONS) - EMBEDS))
def test_a_function_that_never_embeds_never_loads_the_embedder(function: str) -> None:
    modules = _modules(function)
    assert set(REQUEST_PATH[function]) <= set(modules["request"])
    assert _matches(modules["request"], (*EMBEDDER_STACK, *REQUEST_DENIED.get(function, ()))) == []


@pytest.mark.parametrize("function", sorted(set(FUNCTIONS) - ROUTES))
def test_a_function_that_never_routes_never_loads_the_router(function: str) -> None:
    """The router's module compiles some forty patterns at import; the ports and the composition
    root name its protocol for typing only."""
    modules = _modules(function)
    assert set(REQUEST_PATH[function]) <= set(modules["request"])
    assert _matches(modules["request"], ("core.domain.routing", "core.adapters.rules.router")) == []


@pytest.mark.parametrize("function", sorted(FUNCTIONS))
def test_the_sensitivity_patterns_compile_on_first_use(function: str) -> None:
    """A function may load the secret detector at import or on its first request (the planners
    check for secrets), but only the requests that read a memory's text compile its patterns."""
    assert _modules(function)["compiled_at_load"] == []


def test_the_api_answers_a_capture_status_without_loading_the_capture_service() -> None:
    """A capture's status needs the marker's pure parts (its jobs, the conversation's revision, the
    model's attempts), which live in the domain beside ``CaptureRun``; the capture service loads on
    the first reprocess only."""
    assert _matches(_modules("api")["load"], ("core.services.capture",)) == []
