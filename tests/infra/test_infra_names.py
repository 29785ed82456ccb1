"""Names an app chooses: ``conversations_path``, ``data_root`` and ``name_prefix``.

``variables.tf`` and ``names.tf`` (which reads variables only) are evaluated by ``terraform`` itself in
a scratch directory, no provider needed: a bad value is refused by the variable's validation in both
deployment modes, a good one gives the names the functions, triggers, service accounts, topics and
queues are declared with. The same values go through the code's own check
(:func:`core.domain.paths.layout_problems`), which must agree with Terraform's; and the parsed files
show the values reaching each function's environment and the Firestore triggers.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from infra_hcl import TF_ROOT

from core import config
from core.domain import paths
from strata_dev import rules

REQUIRED = {"project_id": "acme-prod", "typesense_url": "https://ts.example.com", "pinecone_host": "https://pc.example.com"}
OUTPUTS = """
output "names" {
  value = {
    function_names        = local.function_names
    service_account_ids   = local.service_account_ids
    projection_topic      = local.projection_topic
    tasks_queue           = local.tasks_queue
    webhook_queue         = local.webhook_queue
    scheduler_jobs        = local.scheduler_jobs
    source_bucket         = local.source_bucket
    metric_prefix         = local.metric_prefix
    conversation_document = local.conversation_document
    rules_match           = local.rules_match
    rules_match_default   = local.rules_match_default
  }
}
"""
FUNCTIONS = ("api", "on_conversation_complete", "delete_cascade", "outbox_drain", "consolidate", "deliver_webhook")


class Evaluator:
    """``variables.tf`` and ``names.tf`` under ``terraform plan`` in a scratch directory."""

    def __init__(self, where: Path) -> None:
        self.terraform = shutil.which("terraform")
        if self.terraform is None:
            pytest.skip("terraform is not on PATH")
        self.dir = where
        for name in ("variables.tf", "names.tf"):
            shutil.copy(TF_ROOT / name, where / name)
        (where / "outputs.tf").write_text(OUTPUTS)
        self.env = {**os.environ, "CHECKPOINT_DISABLE": "1", "TF_IN_AUTOMATION": "1"}
        self._run("init", "-input=false", "-no-color")

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        assert self.terraform is not None
        return subprocess.run([self.terraform, *args], cwd=self.dir, env=self.env, capture_output=True, text=True,
                              timeout=120, check=False)

    def plan(self, **variables: Any) -> tuple[dict[str, Any] | None, str]:
        """(the names, '') when the values are accepted; (None, Terraform's errors) when refused."""
        (self.dir / "case.tfvars.json").write_text(json.dumps({**REQUIRED, **variables}))
        done = self._run("plan", "-input=false", "-no-color", "-var-file=case.tfvars.json", "-out=case.plan")
        if done.returncode != 0:
            return None, done.stderr + done.stdout
        shown = self._run("show", "-json", "case.plan")
        return json.loads(shown.stdout)["planned_values"]["outputs"]["names"]["value"], ""


@pytest.fixture(scope="module")
def tf(tmp_path_factory: pytest.TempPathFactory) -> Evaluator:
    return Evaluator(tmp_path_factory.mktemp("names"))


def test_the_defaults_keep_todays_names(tf: Evaluator, root) -> None:
    names, errors = tf.plan()
    assert names is not None, errors
    assert names["function_names"] == {"api": "api", "on_conversation_complete": "on-conversation-complete",
                                       "delete_cascade": "delete-cascade", "outbox_drain": "outbox-drain",
                                       "consolidate": "consolidate", "deliver_webhook": "deliver-webhook"}
    assert names["service_account_ids"] == {
        "api": "strata-api", "on_conversation_complete": "strata-conv-complete",
        "delete_cascade": "strata-delete-cascade", "outbox_drain": "strata-outbox-drain",
        "consolidate": "strata-consolidate", "deliver_webhook": "strata-deliver-webhook", "build": "strata-build",
        "consolidation_invoker": "strata-consolidation-invoker", "projection_push": "strata-projection-push"}
    assert (names["projection_topic"], names["tasks_queue"], names["webhook_queue"]) == (
        "strata-projection", "strata-consolidation", "strata-webhooks")
    assert names["scheduler_jobs"] == {"consolidation": "strata-consolidation-fanout",
                                       "outbox_sweep": "strata-outbox-sweep"}
    assert names["source_bucket"] == "acme-prod-strata-sources" and names["metric_prefix"] == "strata"
    assert names["conversation_document"] == "users/{uid}/conversations/{conversation_id}"
    # The default path leaves the rules file as it is: the replacement is the fragment's own match.
    assert names["rules_match"] == names["rules_match_default"] == rules.FRAGMENT_MATCH
    assert root.variables["data_root"]["default"] == config.default("data_root") == "users/{uid}"
    assert root.variables["conversations_path"]["default"] == config.default("conversations_path")
    assert root.variables["name_prefix"]["default"] == ""


def test_chosen_names_reach_every_name(tf: Evaluator) -> None:
    names, errors = tf.plan(name_prefix="acme-mem-", conversations_path="apps/acme/users/{uid}/chats",
                            data_root="strata_users/{uid}", deployment_mode="existing_project")
    assert names is not None, errors
    assert names["function_names"]["api"] == "acme-mem-api"
    assert names["function_names"]["on_conversation_complete"] == "acme-mem-on-conversation-complete"
    assert set(names["function_names"].values()) == {f"acme-mem-{n.replace('_', '-')}" for n in FUNCTIONS}
    accounts = names["service_account_ids"]
    assert accounts["consolidation_invoker"] == "acme-mem-consolidation-invoker"
    assert all(a.startswith("acme-mem-") and 6 <= len(a) <= 30 for a in accounts.values()), accounts
    assert (names["projection_topic"], names["tasks_queue"], names["webhook_queue"]) == (
        "acme-mem-projection", "acme-mem-consolidation", "acme-mem-webhooks")
    assert names["scheduler_jobs"]["outbox_sweep"] == "acme-mem-outbox-sweep"
    assert names["source_bucket"] == "acme-prod-acme-mem-sources" and names["metric_prefix"] == "acme-mem"
    assert names["conversation_document"] == "apps/acme/users/{uid}/chats/{conversation_id}"
    layout = paths.Layout("strata_users/{uid}", "apps/acme/users/{uid}/chats")
    assert names["conversation_document"] == layout.trigger_pattern()  # what the code reads events against
    assert f"{names['rules_match']}" in rules.default_rules(layout)  # what `strata rules merge` writes
    # An explicit topic or queue name still wins over the prefix.
    named, errors = tf.plan(name_prefix="mem-", projection_topic="my-topic")
    assert named is not None and named["projection_topic"] == "my-topic" and named["tasks_queue"] == "mem-consolidation"


CASES = [
    ("data_root", "strata_users/{uid}", True),
    ("data_root", "apps/acme/strata/{uid}", True),
    ("data_root", "users", False),
    ("data_root", "users/{uid}/strata", False),
    ("data_root", "{uid}", False),
    ("data_root", "users/{user}", False),
    ("data_root", "users//{uid}", False),
    ("data_root", "__users__/{uid}", False),
    ("data_root", "memory_items/{uid}", False),
    ("data_root", "rate_limits/{uid}", False),
    ("conversations_path", "chats/{uid}/threads", True),
    ("conversations_path", "apps/acme/users/{uid}/chats", True),
    ("conversations_path", "users/{uid}", False),
    ("conversations_path", "conversations", False),
    ("conversations_path", "{uid}/conversations", False),
    ("conversations_path", "users/{uid}/chats/{uid}/x", False),
    ("conversations_path", "users/{uid}/memory_items", False),
    ("conversations_path", "users/{uid}/api_keys", False),
    ("conversations_path", "users/{uid}/con versations", False),
]


@pytest.mark.parametrize("mode", ["new_project", "existing_project"])
def test_bad_names_are_refused_in_both_modes_as_the_code_refuses_them(tf: Evaluator, mode: str) -> None:
    for variable, value, good in CASES:
        names, errors = tf.plan(deployment_mode=mode, **{variable: value})
        assert (names is not None) == good, (variable, value, errors)
        if not good:
            assert "Invalid value for variable" in errors and f"var.{variable}" in errors, errors
        args = {"data_root": value} if variable == "data_root" else {"conversations": value}
        layout = {"data_root": paths.DEFAULT_DATA_ROOT, "conversations": paths.DEFAULT_CONVERSATIONS_PATH, **args}
        assert (not paths.layout_problems(layout["data_root"], layout["conversations"])) == good, (variable, value)
    for prefix, good in (("mem-", True), ("acme-mem-", True), ("m-", False), ("acme-memory-", False),
                         ("Mem-", False), ("mem", False), ("1mem-", False), ("mem_", False)):
        names, errors = tf.plan(deployment_mode=mode, name_prefix=prefix)
        assert (names is not None) == good, (prefix, errors)
        if not good:
            assert "var.name_prefix" in errors, errors


def test_the_strata_collection_ids_terraform_refuses_are_the_codes(root) -> None:
    for variable in ("data_root", "conversations_path"):
        condition = root.variables[variable]["validation"][1]["condition"]
        listed = set(re.findall(r'"([a-z_]+)"', condition))
        assert listed == set(paths.STRATA_COLLECTION_IDS), listed ^ set(paths.STRATA_COLLECTION_IDS)


def test_the_names_reach_the_functions_environment_and_triggers(root) -> None:
    env = root.locals["environment"]
    assert re.search(r"\bSTRATA_DATA_ROOT\s+= var\.data_root\b", env), env
    assert re.search(r"\bSTRATA_CONVERSATIONS_PATH\s+= var\.conversations_path\b", env), env
    assert config.env_name("data_root") == "STRATA_DATA_ROOT"
    assert config.env_name("conversations_path") == "STRATA_CONVERSATIONS_PATH"
    for name in FUNCTIONS:  # every function runs with the shared environment (some add to it)
        module = root.modules[name]
        assert "local.environment" in module["environment_variables"], name
        assert module["name"] == f"${{local.function_names.{name}}}", name
        assert module["service_account_id"] == f"${{local.service_account_ids.{name}}}", name
    for name in ("on_conversation_complete", "delete_cascade"):
        assert root.modules[name]["trigger"]["document"] == "${local.conversation_document}", name
    assert "conversation_document" not in root.locals or root.locals["conversation_document"] == (
        "${var.conversations_path}/{conversation_id}")
    # Each run.app URL the code addresses (tasks, their audience, the MCP metadata) is the prefixed
    # function's Cloud Run service.
    for local, fn in (("consolidate_url", "consolidate"), ("webhook_url", "deliver_webhook"),
                      ("api_public_url", "api")):
        assert f"https://${{local.function_names.{fn}}}-${{data.google_project.this.number}}" in root.locals[local]
    # The log-based metrics filter on the prefixed services.
    filters = " ".join(m["filter"] for m in root.resources_of("google_logging_metric").values())
    assert "service_name=\\\"${local.function_names.outbox_drain}\\\"" in filters or \
        'service_name="${local.function_names.outbox_drain}"' in filters, filters
    assert not re.search(r'service_name=\\?"(api|consolidate|outbox-drain)\\?"', filters), filters


def test_the_released_rules_guard_the_chosen_conversations_path(root) -> None:
    ruleset = root.resources_of("google_firebaserules_ruleset")["firestore"]
    content = ruleset["source"][0]["files"][0]["content"]
    assert content == "${replace(file(local.rules_path), local.rules_match_default, local.rules_match)}"
    fragment = rules.FRAGMENT.read_text(encoding="utf-8")
    assert rules.FRAGMENT_MATCH in fragment  # the text Terraform replaces is in the file it releases
    assert rules.FRAGMENT_MATCH in (TF_ROOT.parent / "firestore.rules").read_text(encoding="utf-8")
