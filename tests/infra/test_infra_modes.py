"""The two deployment modes of infra/terraform, chosen by ``deployment_mode``.

``terraform validate`` and ``plan`` need the providers (a registry download this suite never
makes), so what a plan declares is read from the files: python-hcl2 parses them and
:func:`infra_hcl.planned` evaluates each resource's ``count`` under the mode's variables.

* ``new_project``: Strata's own project; Terraform creates the Firestore database, adds Firebase
  and releases the rules.
* ``existing_project``: the app's Firebase project; its ``(default)`` database, its Firebase
  project and its security rules exist and are the app's. The plan declares none of them (no
  second creation that would collide, no release that would replace the app's rules), and nothing
  else addresses them as managed resources.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from infra_hcl import REPO, count_of, load_dir, planned

NEW = {"deployment_mode": "new_project"}
EXISTING = {"deployment_mode": "existing_project"}
APP_OWNED = {"google_firestore_database.main", "google_firebase_project.this",
             "google_firebaserules_ruleset.firestore", "google_firebaserules_release.firestore"}


def test_mode_variable_is_validated(root):
    var = root.variables["deployment_mode"]
    assert var["default"] == "new_project"
    condition = var["validation"][0]["condition"]
    assert "new_project" in condition and "existing_project" in condition


def test_new_project_plan_declares_database_firebase_and_rules(root):
    assert planned(root, NEW) >= APP_OWNED
    # enable_firebase=false keeps the database and the rules but not the Firebase project.
    without = planned(root, {**NEW, "enable_firebase": False})
    assert "google_firebase_project.this" not in without
    assert {"google_firestore_database.main", "google_firebaserules_release.firestore"} <= without


def test_existing_project_plan_declares_none_of_the_apps_resources(root):
    plan = planned(root, EXISTING)
    assert not plan & APP_OWNED, plan & APP_OWNED
    assert not [a for a in plan if a.startswith(("google_firebaserules_", "google_firebase_project",
                                                 "google_firestore_database"))]
    # enable_firebase does not bring the Firebase project back in the existing mode.
    assert "google_firebase_project.this" not in planned(root, {**EXISTING, "enable_firebase": True})
    # Everything else Strata needs is still declared: indexes and fields on the app's database,
    # the functions' queues, topics, secrets and service accounts.
    for address in ("google_firestore_index.composite", "google_firestore_field.items_source_ids",
                    "google_cloud_tasks_queue.consolidation", "google_pubsub_topic.projection",
                    "google_secret_manager_secret.provider", "google_service_account.consolidation_invoker"):
        assert address in plan, address
    # Neither mode imports the app's resources into Strata's state (a destroy would then delete them).
    for name, text in root.texts.items():
        assert not re.search(r"(?m)^\s*import\s*\{", text), f"{name} has an import block"


def test_the_apps_resources_are_only_addressed_as_counted_instances(root):
    """In the existing mode `google_firestore_database.main` has no instance: any plain
    `.main.name` reference would fail the plan. Every use goes through local.database."""
    text = "\n".join(re.sub(r"(?m)^\s*#.*$", "", t) for t in root.texts.values())
    for address in APP_OWNED:
        for m in re.finditer(re.escape(address) + r"(\S*)", text):
            rest = m.group(1)
            assert rest.startswith(("[*]", "[count.index]", "]", ",")) or rest == "", (address, rest)
    assert root.locals["database"] == "${coalesce(one(google_firestore_database.main[*].name), var.firestore_database)}"
    for kind in ("google_firestore_index", "google_firestore_field"):
        for name, res in root.resources_of(kind).items():
            assert res["database"] == "${local.database}", (kind, name)
    for name in ("on_conversation_complete", "delete_cascade"):
        assert root.modules[name]["trigger"]["database"] == "${local.database}", name


def test_count_expressions_are_readable_for_both_modes(root, module):
    """Every counted resource is decidable in both modes (the evaluator refuses other forms)."""
    for tf in (root, module):
        counted = [(k, n, r) for k, named in tf.resources.items() for n, r in named.items() if "count" in r]
        for kind, name, res in counted:
            if tf is module:
                continue  # the module's counts depend on its inputs, checked by test_infra_terraform
            for mode in (NEW, EXISTING):
                assert count_of(res, tf, mode) in (0, 1), (kind, name)


# -- Cloud Tasks reach consolidate on its run.app URL --------------------------------------------


def test_tasks_target_the_run_app_url_with_an_oidc_audience(root):
    url = root.locals["consolidate_url"]
    assert re.fullmatch(r"https://\$\{local\.function_names\.consolidate\}-\$\{data\.google_project\.this\.number\}"
                        r"\.\$\{var\.region\}\.run\.app", url), url
    assert "cloudfunctions.net" not in url
    # The function's name (`consolidate` behind name_prefix) is its Cloud Run service's, so its URL's.
    assert root.modules["consolidate"]["name"] == "${local.function_names.consolidate}"
    env = root.locals["environment"]
    assert re.search(r"\bSTRATA_CONSOLIDATE_URL = local\.consolidate_url\b", env)
    assert re.search(r"\bSTRATA_TASKS_AUDIENCE = local\.consolidate_url\b", env)
    assert re.search(r"\bSTRATA_TASKS_INVOKER = google_service_account\.consolidation_invoker\.email\b", env)
    # Webhook deliveries have their own function and URL; it checks the audience of its own URL.
    hook = root.locals["webhook_url"]
    assert re.fullmatch(r"https://\$\{local\.function_names\.deliver_webhook\}-\$\{data\.google_project\.this\.number\}"
                        r"\.\$\{var\.region\}\.run\.app", hook), hook
    assert root.modules["deliver_webhook"]["name"] == "${local.function_names.deliver_webhook}"
    assert re.search(r"\bSTRATA_WEBHOOK_URL = local\.webhook_url\b", env)
    assert re.search(r"STRATA_TASKS_AUDIENCE = local\.webhook_url\b", root.modules["deliver_webhook"]["environment_variables"])
    # The enqueuing code signs each task for the URL it targets (core/adapters/tasks.py).
    tasks = (REPO / "core" / "adapters" / "tasks.py").read_text()
    assert '"oidc_token"' in tasks and '"audience": url' in tasks


# -- every service Strata calls is enabled -------------------------------------------------------

# The Google API each Terraform resource type needs.
RESOURCE_API = {
    "google_cloud_run_v2_service_iam_member": "run.googleapis.com",
    "google_cloud_scheduler_job": "cloudscheduler.googleapis.com",
    "google_cloud_tasks_queue": "cloudtasks.googleapis.com",
    "google_cloud_tasks_queue_iam_member": "cloudtasks.googleapis.com",
    "google_cloudfunctions2_function": "cloudfunctions.googleapis.com",
    "google_firebase_project": "firebase.googleapis.com",
    "google_firebaserules_release": "firebaserules.googleapis.com",
    "google_firebaserules_ruleset": "firebaserules.googleapis.com",
    "google_firestore_database": "firestore.googleapis.com",
    "google_firestore_field": "firestore.googleapis.com",
    "google_firestore_index": "firestore.googleapis.com",
    "google_logging_metric": "logging.googleapis.com",
    "google_monitoring_alert_policy": "monitoring.googleapis.com",
    "google_monitoring_dashboard": "monitoring.googleapis.com",
    "google_monitoring_uptime_check_config": "monitoring.googleapis.com",
    "google_project_iam_member": "cloudresourcemanager.googleapis.com",
    "google_project_service": "",  # Service Usage itself: on in every project, and cannot enable itself
    "google_pubsub_subscription": "pubsub.googleapis.com",
    "google_pubsub_subscription_iam_member": "pubsub.googleapis.com",
    "google_pubsub_topic": "pubsub.googleapis.com",
    "google_pubsub_topic_iam_member": "pubsub.googleapis.com",
    "google_secret_manager_secret": "secretmanager.googleapis.com",
    "google_secret_manager_secret_iam_member": "secretmanager.googleapis.com",
    "google_service_account": "iam.googleapis.com",
    "google_service_account_iam_member": "iam.googleapis.com",
    "google_storage_bucket": "storage.googleapis.com",
    "google_storage_bucket_object": "storage.googleapis.com",
}
# What the functions' code calls at run time (by the module it imports) and what the platform needs
# to build and trigger them.
CODE_API = {
    "google.cloud.firestore": "firestore.googleapis.com",
    "google.cloud.tasks_v2": "cloudtasks.googleapis.com",
    "google.cloud.pubsub": "pubsub.googleapis.com",
}
PLATFORM_API = {
    "cloudbuild.googleapis.com",  # builds each function's image
    "artifactregistry.googleapis.com",  # stores it
    "eventarc.googleapis.com",  # the Firestore and Pub/Sub triggers
    "identitytoolkit.googleapis.com",  # Firebase Auth: the ID tokens every API request carries
}


def _code_modules() -> set[str]:
    found: set[str] = set()
    for path in (REPO / "core").rglob("*.py"):
        found.update(re.findall(r"(?m)^\s*(?:from|import) (google\.cloud\.[a-z_0-9]+)", path.read_text()))
        found.update("google.cloud." + m for m in re.findall(r"(?m)^\s*from google\.cloud import ([a-z_0-9]+)",
                                                             path.read_text()))
    return found


def test_every_service_strata_calls_is_enabled(root, module):
    enabled = set(root.locals["services"].removeprefix("${toset(").removesuffix(")}").replace('"', "")
                  .replace("[", "").replace("]", "").replace(",", " ").split())
    needed = set(PLATFORM_API)
    for tf in (root, module):
        for kind in tf.resources:
            assert kind in RESOURCE_API, f"{kind}: which API does it need? add it to RESOURCE_API"
            needed.add(RESOURCE_API[kind])
    needed.add("cloudresourcemanager.googleapis.com")  # data.google_project (the project number)
    needed.discard("")
    modules = _code_modules()
    assert "google.cloud.firestore" in modules, "the import scan is broken"
    for name, api in CODE_API.items():
        if name in modules or any(m.startswith(name) for m in modules):
            needed.add(api)
    assert not needed - enabled, f"not enabled: {sorted(needed - enabled)}"


@pytest.mark.parametrize("path", ["infra/rules/strata.rules", "infra/firestore.rules"])
def test_rules_files_exist(path: str):
    assert (REPO / path).is_file(), path


def test_existing_mode_is_parsed_from_the_real_files():
    """The helpers read the repository's files, not a copy."""
    tf = load_dir(Path(REPO / "infra" / "terraform"))
    assert "deployment_mode" in tf.variables


def test_every_function_that_signs_tasks_as_the_invoker_may_act_as_it(root):
    """Creating a task with an OIDC token of the invoker needs iam.serviceAccounts.actAs on it: the
    consolidation enqueuers, and the trigger that enqueues webhook deliveries."""
    acts = root.resources_of("google_service_account_iam_member")
    members = set()
    for res in acts.values():
        if res["role"] != "roles/iam.serviceAccountUser":
            continue
        assert res["service_account_id"] == "${google_service_account.consolidation_invoker.name}"
        if res.get("for_each") == "${toset(local.task_enqueuers)}":
            members.update(root.locals["task_enqueuers"])
        else:
            members.add(re.fullmatch(r"serviceAccount:\$\{local\.function_sa\.([a-z_]+)\}", res["member"]).group(1))
    webhook = root.resources_of("google_cloud_tasks_queue_iam_member")["webhook_enqueuer"]["member"]
    webhook_fn = re.fullmatch(r"serviceAccount:\$\{local\.function_sa\.([a-z_]+)\}", webhook).group(1)
    assert {*root.locals["task_enqueuers"], webhook_fn} <= members, members


# -- least-privilege provider keys and the start check ------------------------------------------


def test_only_the_draining_functions_mount_the_typesense_write_key(root):
    secrets = root.locals["secrets"]
    assert secrets["typesense"]["env"] == secrets["typesense_search"]["env"] == "STRATA_TYPESENSE_API_KEY"
    keys = {}
    for name, listed in re.findall(r'\b([a-z_]+)\s*=\s*\[([^\]]*)\]', root.locals["secret_env"]):
        keys[name] = {k.strip().strip('"') for k in listed.split(",") if k.strip()}
    assert set(keys) == {"api", "on_conversation_complete", "delete_cascade", "outbox_drain", "consolidate",
                         "deliver_webhook"}, keys
    assert keys["deliver_webhook"] == set()  # it reads Firestore and posts to the user's URL, nothing else
    writers = {name for name, mounted in keys.items() if "typesense" in mounted}
    # The drain, and consolidate whose maintenance drains project the outbox before and after a pass.
    assert writers == {"outbox_drain", "consolidate"}
    for name in ("api", "delete_cascade"):
        assert "typesense_search" in keys[name], name
    # Those two run with the search-only key (strata setup's SEARCH_KEY), so the api asks the
    # drain for an account wipe's keyword purge.
    from strata_dev.setup import SEARCH_KEY

    assert SEARCH_KEY[1] == ["documents:search", "collections:get"]
    assert re.search(r'\bSTRATA_KEYWORD_PURGE\s*=\s*"drain"', root.locals["environment"])
    from strata_dev.localstack.stack import SEARCH_KEY_FUNCTIONS

    assert set(SEARCH_KEY_FUNCTIONS) == {"api", "delete_cascade"}  # the local stack mounts the same


def test_deployed_functions_check_provider_schema_at_start(root):
    assert re.search(r'\bSTRATA_PROVIDER_SETUP\s*=\s*"check"', root.locals["environment"])
    from core.start_check import PROVIDERS

    for name, uses in PROVIDERS.items():
        main = (REPO / "functions" / name / "main.py").read_text()
        if uses:
            assert f'start_check("{name}")' in main, name
