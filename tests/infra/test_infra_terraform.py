"""Static checks of infra/terraform: format, structure, IAM, indexes derived from the code.

No provider download happens here (``terraform init`` needs the registry); the files are parsed
with python-hcl2 and checked against what the code declares.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess

import pytest
from infra_hcl import REPO, TF_MODULE, TF_ROOT, declared_indexes, load_dir, missing_indexes, walk_strings

from core import config
from core.adapters.firestore.queries import QUERIES, Clause, Order, QuerySpec, composite_indexes
from strata_dev import packaging

PRIMITIVE_ROLES = {"roles/owner", "roles/editor", "roles/viewer"}
CONVERSATION_PATTERN = "${var.conversations_path}/{conversation_id}"


def _ref(expr: str) -> str:
    """'${module.consolidate.uri}' -> 'module.consolidate.uri'."""
    assert expr.startswith("${") and expr.endswith("}"), expr
    return expr[2:-1]


# -- format and conventions ------------------------------------------------------------------


def test_terraform_fmt_is_clean():
    terraform = shutil.which("terraform")
    assert terraform, "terraform is not on PATH"
    proc = subprocess.run([terraform, "fmt", "-check", "-recursive", "-diff", str(TF_ROOT)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, f"terraform fmt would change files:\n{proc.stdout}{proc.stderr}"


@pytest.mark.parametrize("tf_dir", [TF_ROOT, TF_MODULE], ids=["root", "module"])
def test_every_variable_typed_and_described_every_output_described(tf_dir):
    tf = load_dir(tf_dir)
    assert tf.variables and tf.outputs
    for name, var in tf.variables.items():
        assert var.get("type"), f"variable {name} has no type"
        assert str(var.get("description", "")).strip(), f"variable {name} has no description"
    for name, out in tf.outputs.items():
        assert str(out.get("description", "")).strip(), f"output {name} has no description"
    for expected in ("versions.tf", "variables.tf", "outputs.tf", "main.tf"):
        assert expected in tf.texts, f"{tf_dir.name} lacks {expected}"


def test_provider_versions_pinned_to_a_range(root, module):
    providers = root.terraform[0]["required_providers"][0]
    assert set(providers) >= {"google", "google-beta", "archive"}
    for name, spec in providers.items():
        assert re.fullmatch(r">= ?\d+\.\d+\.\d+, < ?\d+\.\d+\.\d+", spec["version"]), (name, spec)
    assert root.terraform[0]["required_version"]
    module_providers = module.terraform[0]["required_providers"][0]
    for name, spec in module_providers.items():
        assert spec["version"] == providers[name]["version"], f"module pins {name} differently"


def test_references_resolve(root, module):
    """A cheap stand-in for `terraform validate` (which needs the providers): every var., local.,
    module. and resource reference names something declared in the same directory."""
    for tf in (root, module):
        text = "\n".join(re.sub(r"(?m)^\s*#.*$", "", t) for t in tf.texts.values())
        for name in set(re.findall(r"\bvar\.([a-z_][a-z0-9_]*)", text)):
            assert name in tf.variables, f"{tf.path.name}: var.{name} is not declared"
        for name in set(re.findall(r"\blocal\.([a-z_][a-z0-9_]*)", text)):
            assert name in tf.locals, f"{tf.path.name}: local.{name} is not declared"
        for name in set(re.findall(r"\bmodule\.([a-z_][a-z0-9_]*)", text)):
            assert name in tf.modules, f"{tf.path.name}: module.{name} is not declared"
        for kind, name in set(re.findall(r"(?<![\w.\"])(google_[a-z0-9_]+)\.([a-z_][a-z0-9_]*)", text)):
            assert name in tf.resources_of(kind), f"{tf.path.name}: {kind}.{name} is not declared"
        for kind, name in set(re.findall(r"\bdata\.([a-z0-9_]+)\.([a-z_][a-z0-9_]*)", text)):
            assert name in tf.data.get(kind, {}), f"{tf.path.name}: data.{kind}.{name} is not declared"


# -- functions: own identity, own trigger, retry ---------------------------------------------


def _functions(root):
    return {name: m for name, m in root.modules.items() if m["source"] == "./modules/function"}


def test_every_function_matches_packaging(root):
    fns = _functions(root)
    assert set(fns) == set(packaging.FUNCTIONS)
    for name, m in fns.items():
        assert m["entry_point"] == packaging.FUNCTIONS[name]
        assert m["source_dir"] == "${local.package_dir}/" + name
    # embedder = "minilm" deploys the build whose requirements add the minilm extra.
    package_dir = root.locals["package_dir"]
    assert "var.package_dir" in package_dir and "build/functions" in package_dir
    assert re.search(r'var\.embedder == "minilm" \? "-minilm"', package_dir), package_dir
    assert packaging.default_out("minilm").as_posix() == "build/functions-minilm"
    assert packaging.default_out("vertex").as_posix() == "build/functions"


def test_each_function_has_its_own_service_account_and_trigger(root, module):
    fns = _functions(root)
    accounts = [m["service_account_id"] for m in fns.values()]
    assert len(set(accounts)) == len(accounts) == 6, accounts
    # The module creates that account and runs the function (and its Eventarc trigger) as it.
    assert "function" in module.resources_of("google_service_account")
    fn = module.resources_of("google_cloudfunctions2_function")["function"]
    assert fn["service_config"][0]["service_account_email"] == "${google_service_account.function.email}"
    trigger = fn["dynamic"][0]["event_trigger"]["content"][0]
    assert trigger["service_account_email"] == "${google_service_account.function.email}"
    assert "RETRY_POLICY_RETRY" in trigger["retry_policy"]

    kinds = {name: m["trigger"]["kind"] for name, m in fns.items()}
    assert kinds == {"api": "http", "consolidate": "http", "outbox_drain": "pubsub_push",
                     "on_conversation_complete": "firestore", "delete_cascade": "firestore",
                     "deliver_webhook": "http"}
    written = fns["on_conversation_complete"]["trigger"]
    deleted = fns["delete_cascade"]["trigger"]
    assert written["event_type"] == "google.cloud.firestore.document.v1.written"
    assert deleted["event_type"] == "google.cloud.firestore.document.v1.deleted"
    for t in (written, deleted):
        assert t["retry"] is True
        assert root.locals["conversation_document"] == CONVERSATION_PATTERN  # names.tf: the app's choice
        assert t["document"] == "${local.conversation_document}"
    filters = fn["dynamic"][0]["event_trigger"]["content"][0]["event_filters"]
    assert {"attribute": "document", "value": "${event_trigger.value.document}",
            "operator": "match-path-pattern"} in filters
    push = fns["outbox_drain"]["trigger"]
    assert push["topic"] == "${google_pubsub_topic.projection.id}"
    assert push["dead_letter_topic"] == "${google_pubsub_topic.projection_dead_letter.id}"


def test_only_the_api_is_reachable_from_outside(root):
    """Backs the CKV_GCP_124 skip in modules/function: ALLOW_ALL ingress and allUsers only on api."""
    fns = _functions(root)
    for name, m in fns.items():
        if name == "api":
            assert m.get("ingress_settings", "ALLOW_ALL") == "ALLOW_ALL"
            assert "allUsers" in m["invoker_members"]
        else:
            assert m.get("ingress_settings") == "ALLOW_INTERNAL_ONLY", name
            assert "allUsers" not in json.dumps(m.get("invoker_members", [])), name
    assert fns["consolidate"]["invoker_members"] == [
        "serviceAccount:${google_service_account.consolidation_invoker.email}"]


def test_function_environment_and_secrets(root):
    env_expr = root.locals["environment"]
    for key in ("STRATA_PROJECT_ID", "STRATA_REGION", "STRATA_PROJECTION_TOPIC", "STRATA_TASKS_QUEUE",
                "STRATA_CONSOLIDATE_URL", "STRATA_TYPESENSE_URL", "STRATA_PINECONE_HOST",
                "STRATA_PINECONE_NAMESPACE", "STRATA_EMBEDDER", "STRATA_EMBEDDING_DIM", "STRATA_EXTRACTOR",
                "STRATA_ROUTER", "STRATA_LLM_BASE_URL", "STRATA_LLM_MODEL", "STRATA_CONSOLIDATION_INTERVAL_S",
                "STRATA_CONSOLIDATION_PASS_LIMIT", "STRATA_WALK_PAGE_SIZE", "STRATA_WALK_PAGES"):
        assert re.search(rf"\b{key} = ", env_expr), f"{key} is not set on the functions"
    secret_envs = {s["env"] for s in root.locals["secrets"].values()}
    assert secret_envs == {"STRATA_TYPESENSE_API_KEY", "PINECONE_API_KEY", "STRATA_LLM_API_KEY",
                           "STRATA_EMBEDDING_API_KEY", "STRATA_LOG_HASH_KEY"}
    # every function names users in its logs by uid_hash, keyed by the log hash secret
    assert 'concat(keys, ["log_hash"])' in root.locals["secret_env"]
    assert set(root.resources_of("google_secret_manager_secret")) == {"provider"}
    for name, m in _functions(root).items():
        if name == "deliver_webhook":  # the shared environment, with its own URL as the tasks' audience
            assert m["environment_variables"] == "${merge(local.environment, {STRATA_TASKS_AUDIENCE = local.webhook_url})}"
        elif name != "api":
            assert m["environment_variables"] == "${local.environment}", name
        assert m["secret_environment_variables"] == f"${{local.secret_env.{name}}}"


def test_the_api_function_knows_its_public_url(root):
    """The MCP protected-resource metadata names STRATA_PUBLIC_URL (core/api/key_routes.py): set on
    the api function, from the operator's URL (path prefix included) or the function's run.app URL,
    the same URL the api_url output gives apps. Beside it, the app projects whose ID tokens the api
    accepts (STRATA_FIREBASE_AUDIENCES, from the firebase_audiences list; core/api/auth.py)."""
    env = root.modules["api"]["environment_variables"]
    assert env == ('${merge(local.environment, {STRATA_PUBLIC_URL = local.api_public_url, '
                   'STRATA_FIREBASE_AUDIENCES = join(",", var.firebase_audiences)})}')
    assert "STRATA_PUBLIC_URL" not in root.locals["environment"]  # no other function serves MCP
    url = root.locals["api_public_url"]
    assert url.startswith("${trimsuffix(coalesce(var.api_public_url, ") and url.endswith(', "/")}')
    assert '"https://${local.function_names.api}-${data.google_project.this.number}.${var.region}.run.app"' in url
    assert root.modules["api"]["name"] == "${local.function_names.api}"  # the Cloud Run service, hence its run.app host
    assert root.outputs["api_url"]["value"] == "${local.api_public_url}"
    variable = root.variables["api_public_url"]
    assert variable["default"] == "" and variable["type"] == "string"
    condition = variable["validation"][0]["condition"]
    pattern = re.search(r'regex\("(.+)", var\.api_public_url\)', condition).group(1).replace("\\\\", "\\")
    for good in ("https://europe-west1-acme.cloudfunctions.net/api", "https://memory.example.com"):
        assert re.fullmatch(pattern, good), good
    for bad in ("http://memory.example.com", "https://memory.example.com/api?x=1", "memory.example.com"):
        assert not re.fullmatch(pattern, bad), bad
    assert config.env_names("public_url") == ["STRATA_PUBLIC_URL"]  # the setting core reads


# -- messaging ---------------------------------------------------------------------------------


def _all_subscriptions(root, module):
    subs = dict(root.resources_of("google_pubsub_subscription"))
    subs.update({f"module.{k}": v for k, v in module.resources_of("google_pubsub_subscription").items()})
    return subs


def test_every_push_subscription_has_a_dead_letter_policy(root, module):
    subs = _all_subscriptions(root, module)
    pushes = {name: s for name, s in subs.items() if s.get("push_config")}
    assert pushes, "no push subscription declared"
    for name, s in pushes.items():
        policy = s.get("dead_letter_policy")
        assert policy and policy[0].get("dead_letter_topic"), f"push subscription {name} has no dead-letter policy"
        assert policy[0].get("max_delivery_attempts"), name
        assert s.get("retry_policy"), f"push subscription {name} has no retry backoff"
        assert s["push_config"][0].get("oidc_token"), f"push subscription {name} is unauthenticated"


def test_projection_topic_and_dead_letter(root):
    topics = root.resources_of("google_pubsub_topic")
    assert topics["projection"]["name"] == "${local.projection_topic}"  # names.tf: strata-projection by default
    assert root.variables["projection_topic"]["default"] == ""
    assert "projection_dead_letter" in topics
    dl_sub = root.resources_of("google_pubsub_subscription")["projection_dead_letter"]
    assert dl_sub["topic"] == "${google_pubsub_topic.projection_dead_letter.id}"


def test_tasks_queue_has_rate_and_retry_limits(root):
    queue = root.resources_of("google_cloud_tasks_queue")["consolidation"]
    assert queue["name"] == "${local.tasks_queue}"  # names.tf: strata-consolidation by default
    assert root.variables["tasks_queue"]["default"] == ""
    rate, retry = queue["rate_limits"][0], queue["retry_config"][0]
    assert {"max_dispatches_per_second", "max_concurrent_dispatches"} <= set(rate)
    assert {"max_attempts", "min_backoff", "max_backoff", "max_retry_duration"} <= set(retry)
    defaults = root.variables["consolidation_retry"]["default"]
    assert 0 < defaults["max_attempts"] <= 10


def test_webhook_queue_is_separate_and_bounded(root):
    """Developer webhook deliveries have their own queue (a slow receiver never delays
    consolidation) with a bounded retry config, and the trigger may enqueue on it."""
    queue = root.resources_of("google_cloud_tasks_queue")["webhooks"]
    assert queue["name"] == "${local.webhook_queue}"  # names.tf: strata-webhooks by default
    assert root.variables["webhook_queue"]["default"] == ""
    retry = queue["retry_config"][0]
    assert {"max_attempts", "min_backoff", "max_backoff", "max_retry_duration"} <= set(retry)
    assert 0 < root.variables["webhook_retry"]["default"]["max_attempts"] <= 10
    assert queue["rate_limits"][0]
    env_expr = root.locals["environment"]
    assert re.search(r"\bSTRATA_WEBHOOK_QUEUE = google_cloud_tasks_queue\.webhooks\.name", env_expr)
    # The tasks target the deliver_webhook function, which only the invoker account may call.
    assert re.search(r"\bSTRATA_WEBHOOK_URL = local\.webhook_url\b", env_expr)
    deliver = root.modules["deliver_webhook"]
    assert deliver["entry_point"] == "deliver_webhook" and deliver["trigger"] == {"kind": "http"}
    assert deliver["invoker_members"] == ["serviceAccount:${google_service_account.consolidation_invoker.email}"]
    assert root.locals["function_sa"]["deliver_webhook"] == "${module.deliver_webhook.service_account_email}"
    enqueuer = root.resources_of("google_cloud_tasks_queue_iam_member")["webhook_enqueuer"]
    assert enqueuer["name"] == "${google_cloud_tasks_queue.webhooks.name}"
    assert enqueuer["member"] == "serviceAccount:${local.function_sa.on_conversation_complete}"
    ttl = root.resources_of("google_firestore_field")["webhook_deliveries_ttl"]
    assert (ttl["collection"], ttl["field"]) == ("webhook_deliveries", "expire_at") and "ttl_config" in ttl


def test_deletion_receipts_expire_by_ttl(root):
    ttl = root.resources_of("google_firestore_field")["deletion_receipts_ttl"]
    assert (ttl["collection"], ttl["field"]) == ("deletion_receipts", "expire_at") and "ttl_config" in ttl


def test_scheduler_jobs(root):
    assert root.variables["consolidation_schedule"]["default"] == "*/10 * * * *"
    assert root.variables["outbox_sweep_schedule"]["default"] == "*/5 * * * *"
    jobs = root.resources_of("google_cloud_scheduler_job")

    consolidation = jobs["consolidation"]
    assert consolidation["schedule"] == "${var.consolidation_schedule}"
    http = consolidation["http_target"][0]
    assert http["http_method"] == "POST"
    assert _ref(http["uri"]) == "module.consolidate.uri"
    assert re.sub(r"\s", "", http["body"]) == '${base64encode(jsonencode({mode="fanout"}))}'
    oidc = http["oidc_token"][0]
    assert oidc["service_account_email"] == "${google_service_account.consolidation_invoker.email}"
    assert _ref(oidc["audience"]) == "module.consolidate.uri"

    # A write's task is due one interval after it, and the walk runs every interval: both are the
    # cron's period, which the functions and the code's default agree on.
    interval = root.variables["consolidation_interval_seconds"]["default"]
    minutes = re.fullmatch(r"\*/(\d+) \* \* \* \*", root.variables["consolidation_schedule"]["default"])
    assert minutes and int(minutes.group(1)) * 60 == interval == config.Settings().consolidation_interval_s
    assert re.search(r"\bSTRATA_CONSOLIDATION_INTERVAL_S = tostring\(var\.consolidation_interval_seconds\)",
                     root.locals["environment"])

    sweep = jobs["outbox_sweep"]
    assert sweep["schedule"] == "${var.outbox_sweep_schedule}"
    target = sweep["pubsub_target"][0]
    assert target["topic_name"] == "${google_pubsub_topic.projection.id}"
    assert re.sub(r"\s", "", target["data"]) == "${base64encode(jsonencode({sweep=true}))}"
    # What the sweep message decodes to, for the function's sake.
    assert json.loads(base64.b64decode(base64.b64encode(json.dumps({"sweep": True}).encode()))) == {"sweep": True}


# -- IAM ---------------------------------------------------------------------------------------


def test_consolidation_task_enqueuers(root):
    """The outbox drain enqueues a write's task, consolidate a continuation or a walk's repair."""
    assert sorted(root.locals["task_enqueuers"]) == ["consolidate", "outbox_drain"]
    enqueuer = root.resources_of("google_cloud_tasks_queue_iam_member")["enqueuer"]
    assert enqueuer["name"] == "${google_cloud_tasks_queue.consolidation.name}"
    assert enqueuer["for_each"] == "${toset(local.task_enqueuers)}"


def test_no_primitive_roles_anywhere(root, module):
    """Every role string in resources, locals and module inputs (where grants are made); the
    module's own validation, which names the primitive roles to refuse them, is not a grant."""
    roles = set()
    for tf in (root, module):
        for value in (tf.resources, tf.locals, tf.modules):
            for s in walk_strings(value):
                roles.update(re.findall(r"roles/[A-Za-z.]+", s))
    assert {"roles/datastore.user", "roles/run.invoker", "roles/pubsub.publisher"} <= roles, "the scan is broken"
    assert not roles & PRIMITIVE_ROLES, roles & PRIMITIVE_ROLES
    # The module refuses primitive roles passed to it.
    condition = module.variables["project_roles"]["validation"][0]["condition"]
    for role in PRIMITIVE_ROLES:
        assert role in condition


def test_iam_bindings_are_per_identity(root, module):
    for kind in ("google_project_iam_binding", "google_project_iam_policy"):
        assert not root.resources_of(kind) and not module.resources_of(kind), f"{kind} replaces others' grants"
    # Secret access is granted by the module for exactly the secrets the function mounts.
    grant = module.resources_of("google_secret_manager_secret_iam_member")["function"]
    assert grant["for_each"] == "${var.secret_environment_variables}"
    assert grant["role"] == "roles/secretmanager.secretAccessor"


# -- Firestore ---------------------------------------------------------------------------------


def test_every_index_the_code_needs_is_declared(root):
    declared = declared_indexes(root)
    required = composite_indexes()
    assert required, "the code declares no composite index: the derivation is broken"
    assert missing_indexes(required, declared) == []
    # And nothing stale: every declared index serves a declared query.
    from infra_hcl import index_key
    assert declared == {index_key(i) for i in required}


def test_a_new_query_without_its_index_is_reported():
    """Adding a query whose composite index Terraform lacks makes the check above fail."""
    declared = declared_indexes(load_dir(TF_ROOT))
    spec = QuerySpec("synthetic_by_category", "memory_items", "COLLECTION",
                     (Clause("category", "=="),), (Order("created_at", "DESCENDING"),))
    extra = spec.required_index()
    assert extra is not None
    assert missing_indexes([*composite_indexes(), extra], declared) == [
        ("memory_items", "COLLECTION", (("category", "ASCENDING"), ("created_at", "DESCENDING")))]
    group = QuerySpec("synthetic_group", "memory_outbox", "COLLECTION_GROUP",
                      (Clause("state", "in"),), (Order("created_at", "ASCENDING"),))
    assert len(missing_indexes([group.required_index()], declared)) == 1


def test_a_disjunction_needs_the_index_of_each_disjunct():
    """An ``any_of`` query is the union of one conjunctive query per clause: each needs its own
    index, and single-field ones (the historical-rows scan's) need none."""
    legacy = QUERIES["legacy_memories_citing"]
    assert [d.where for d in legacy.disjuncts()] == [(Clause("conversation_id", "=="),), (Clause("memory_id", "=="),)]
    assert legacy.required_indexes() == ()
    spec = QuerySpec("synthetic_any", "memory_items", "COLLECTION", (Clause("layer", "=="),),
                     (Order("created_at", "DESCENDING"),), (Clause("category", "=="), Clause("kind", "==")))
    assert [[(f.field_path, f.mode) for f in index.fields] for index in spec.required_indexes()] == [
        [("layer", "ASCENDING"), ("category", "ASCENDING"), ("created_at", "DESCENDING")],
        [("layer", "ASCENDING"), ("kind", "ASCENDING"), ("created_at", "DESCENDING")]]
    with pytest.raises(ValueError):
        spec.required_index()


def test_index_resource_maps_every_mode(root):
    index = root.resources_of("google_firestore_index")["composite"]
    assert index["for_each"] == "${local.composite_indexes}"
    assert index["query_scope"] == "${each.value.scope}"
    content = index["dynamic"][0]["fields"]["content"][0]
    assert "ARRAY_CONTAINS" in content["order"] and "CONTAINS" in content["array_config"]


def test_field_overrides(root):
    fields = root.resources_of("google_firestore_field")

    def indexes(collection, field):
        match = [f for f in fields.values() if f["collection"] == collection and f["field"] == field]
        assert match, f"no override for {collection}.{field}"
        return match[0]["index_config"][0].get("indexes", [])

    assert {"array_config": "CONTAINS", "query_scope": "COLLECTION"} in indexes("memory_items", "source_ids")
    for collection, field in (("memory_items", "pending_route"), ("memory_outbox", "state"),
                              ("memory_outbox", "due_at")):
        got = indexes(collection, field)
        assert {"order": "ASCENDING", "query_scope": "COLLECTION_GROUP"} in got
        assert {"order": "ASCENDING", "query_scope": "COLLECTION"} in got, "override dropped the collection index"


def test_security_rules_release_uses_the_project_rules_file(root):
    assert "${path.module}/../firestore.rules" in root.locals["rules_path"]
    ruleset = root.resources_of("google_firebaserules_ruleset")["firestore"]
    content = "${replace(file(local.rules_path), local.rules_match_default, local.rules_match)}"  # test_infra_names
    assert ruleset["source"][0]["files"][0]["content"] == content
    release = root.resources_of("google_firebaserules_release")["firestore"]
    assert "cloud.firestore" in release["name"]
    assert (REPO / "infra" / "firestore.rules").is_file(), "infra/firestore.rules is missing"
    database = root.resources_of("google_firestore_database")["main"]
    assert database["type"] == "FIRESTORE_NATIVE"


# -- Firebase emulator suite -------------------------------------------------------------------


def test_firebase_emulator_config():
    config = json.loads((REPO / "firebase.json").read_text())
    assert config["firestore"]["rules"] == "infra/firestore.rules"
    assert {"firestore", "pubsub"} <= set(config["emulators"])
    for name in ("firestore", "pubsub"):
        assert config["emulators"][name]["host"] == "127.0.0.1"
    rc = json.loads((REPO / ".firebaserc").read_text())
    assert rc["projects"]["default"] == "demo-strata"


def test_request_keys_and_rate_limit_counters_expire_by_ttl(root):
    fields = root.resources_of("google_firestore_field")
    for name, collection in (("request_keys_ttl", "request_keys"), ("rate_limits_ttl", "rate_limits")):
        ttl = fields[name]
        assert (ttl["collection"], ttl["field"]) == (collection, "expire_at") and "ttl_config" in ttl
