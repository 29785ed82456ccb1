"""A deployment extracts and routes with a capable model by default (issue 43): Gemini on Vertex AI
through its OpenAI-compatible endpoint, called as each calling function's own service account (a
role, no key), with the rules as the declared alternative. The variables' declared choices are the
code's own (``build_extractor`` / ``build_router`` ids, ``ChatClient``'s auth modes)."""

from __future__ import annotations

import re

from core.adapters.llm import AUTH_MODES
from core.config import Settings


def _choices(root, name: str) -> set[str]:
    condition = root.variables[name]["validation"][0]["condition"]
    assert f"var.{name}" in condition, condition
    return set(re.findall(r'"([a-z_]+)"', condition))


def test_the_model_is_the_default_extractor_and_router_and_rules_the_alternative(root):
    for name in ("extractor", "router"):
        assert root.variables[name]["default"] == "openai"
        assert _choices(root, name) == {"openai", "rules"}
    assert Settings().extractor == Settings().router == "rules"  # the local and offline default stays


def test_the_auth_choices_are_the_clients_and_google_is_the_default(root):
    assert root.variables["llm_auth"]["default"] == "google"
    assert _choices(root, "llm_auth") == set(AUTH_MODES)
    assert re.search(r"\bSTRATA_LLM_AUTH = var\.llm_auth\b", root.locals["environment"])


def test_the_endpoint_is_vertex_ai_openai_compatible_derived_from_project_and_location(root):
    assert root.variables["llm_base_url"]["default"] == "" and root.variables["llm_location"]["default"] == ""
    assert root.variables["llm_model"]["default"].startswith("google/gemini-")
    assert root.locals["llm_location"] == "${coalesce(var.llm_location, var.region)}"
    assert root.locals["llm_base_url"] == (
        '${coalesce(var.llm_base_url, "https://${local.llm_host}/v1/projects/${var.project_id}/locations/'
        '${local.llm_location}/endpoints/openapi")}')
    assert '"${local.llm_location}-aiplatform.googleapis.com"' in root.locals["llm_host"]
    assert re.search(r"\bSTRATA_LLM_BASE_URL = local\.llm_base_url\b", root.locals["environment"])
    assert re.search(r"\bSTRATA_LLM_MODEL = var\.llm_model\b", root.locals["environment"])


def test_the_functions_that_call_the_model_get_the_vertex_role_and_the_api_is_enabled(root):
    assert root.locals["model_roles"] == '${var.llm_auth == "google" ? ["roles/aiplatform.user"] : []}'
    assert 'var.extractor == "openai" ? local.model_roles' in root.locals["capture_roles"]
    assert 'var.router == "openai" ? local.model_roles' in root.locals["consolidate_roles"]
    assert root.modules["on_conversation_complete"]["project_roles"] == "${local.capture_roles}"
    assert root.modules["consolidate"]["project_roles"] == "${local.consolidate_roles}"
    others = {name for name, m in root.modules.items() if m.get("project_roles") not in
              ("${local.capture_roles}", "${local.consolidate_roles}")}
    assert others == {"api", "delete_cascade", "outbox_drain", "deliver_webhook"}
    assert "aiplatform.googleapis.com" in root.locals["services"]


def test_thinking_is_bounded_with_a_reasoning_effort_the_settings_accept(root):
    from core import config

    variable = root.variables["llm_reasoning_effort"]
    assert variable["default"] == "low"
    assert _choices(root, "llm_reasoning_effort") | {""} == set(config._fields()["llm_reasoning_effort"].metadata["choices"])
    assert re.search(r"\bSTRATA_LLM_REASONING_EFFORT = var\.llm_reasoning_effort\b", root.locals["environment"])


def test_the_response_format_choices_are_the_clients(root):
    from core.adapters.llm import RESPONSE_FORMATS

    assert root.variables["llm_response_format"]["default"] == "json_schema"
    assert _choices(root, "llm_response_format") == set(RESPONSE_FORMATS)
    assert re.search(r"\bSTRATA_LLM_RESPONSE_FORMAT = var\.llm_response_format\b", root.locals["environment"])


def test_every_model_variable_is_typed_described_and_validated(root):
    for name in ("extractor", "router", "embedder", "llm_auth", "llm_location", "llm_base_url", "llm_model",
                 "llm_reasoning_effort", "llm_response_format"):
        variable = root.variables[name]
        assert variable["type"] and variable["description"].strip() and variable.get("validation"), name


def test_the_model_usage_metrics_read_the_fields_the_functions_log(root):
    from core.metering import ModelUsage

    usage = ModelUsage(fallbacks=1)
    usage.add_call("google/gemini-2.5-flash", 100, 20)
    assert set(root.locals["model_usage"]) == set(usage.log_fields())
    metric = root.resources_of("google_logging_metric")["model_usage"]
    assert metric["for_each"] == "${local.model_usage}"
    assert metric["value_extractor"] == "EXTRACT(jsonPayload.${each.key})"
    assert '(\\"capture\\" OR \\"consolidation_pass\\")' in metric["filter"] or \
        '("capture" OR "consolidation_pass")' in metric["filter"]
