# One Cloud Function (2nd gen) with its own runtime service account, its trigger and its retry
# policy. Every function of Strata is one instance of this module, so each gets exactly the
# permissions its own code needs and nothing it inherits from a shared identity.

locals {
  is_firestore = var.trigger.kind == "firestore"
  is_push      = var.trigger.kind == "pubsub_push"

  # An Eventarc trigger delivers events as the function's own identity, which therefore needs
  # to receive events and to invoke its own service.
  project_roles = toset(concat(var.project_roles, local.is_firestore ? ["roles/eventarc.eventReceiver"] : []))

  invoker_members = toset(concat(
    var.invoker_members,
    local.is_firestore ? ["serviceAccount:${google_service_account.function.email}"] : [],
    local.is_push ? ["serviceAccount:${var.trigger.push_service_account_email}"] : [],
  ))
}

resource "google_service_account" "function" {
  project      = var.project_id
  account_id   = var.service_account_id
  display_name = "Strata function ${var.name}"
  description  = "Runtime identity of the ${var.name} Cloud Function; holds only what that function uses."
}

resource "google_project_iam_member" "function" {
  for_each = local.project_roles

  project = var.project_id
  role    = each.value
  member  = "serviceAccount:${google_service_account.function.email}"
}

resource "google_secret_manager_secret_iam_member" "function" {
  for_each = var.secret_environment_variables

  project   = var.project_id
  secret_id = each.value
  role      = "roles/secretmanager.secretAccessor"
  member    = "serviceAccount:${google_service_account.function.email}"
}

# The packaged tree (main.py, core/ and its bytecode, pinned requirements.txt) zipped with fixed
# file modes; the object name carries the zip's hash, so new code means a new object and a new
# revision.
data "archive_file" "source" {
  type             = "zip"
  source_dir       = var.source_dir
  output_path      = "${path.root}/.terraform/strata-sources/${var.name}.zip"
  output_file_mode = "0644"
}

resource "google_storage_bucket_object" "source" {
  name   = "functions/${var.name}/${data.archive_file.source.output_sha256}.zip"
  bucket = var.source_bucket
  source = data.archive_file.source.output_path
}

resource "google_cloudfunctions2_function" "function" {
  #checkov:skip=CKV_GCP_124:Ingress is a per-function input. Only the public api passes ALLOW_ALL (it verifies a Firebase ID token on every route); the four event-driven functions pass ALLOW_INTERNAL_ONLY, which tests/infra asserts.
  project     = var.project_id
  location    = var.region
  name        = var.name
  description = var.description
  labels      = var.labels

  build_config {
    runtime         = var.runtime
    entry_point     = var.entry_point
    service_account = var.build_service_account

    source {
      storage_source {
        bucket = var.source_bucket
        object = google_storage_bucket_object.source.name
      }
    }
  }

  service_config {
    available_memory                 = var.available_memory
    timeout_seconds                  = var.timeout_seconds
    min_instance_count               = var.min_instance_count
    max_instance_count               = var.max_instance_count
    max_instance_request_concurrency = var.max_instance_request_concurrency
    ingress_settings                 = var.ingress_settings
    all_traffic_on_latest_revision   = true
    service_account_email            = google_service_account.function.email
    environment_variables            = var.environment_variables

    dynamic "secret_environment_variables" {
      for_each = var.secret_environment_variables
      content {
        key        = secret_environment_variables.key
        project_id = var.project_id
        secret     = secret_environment_variables.value
        version    = "latest"
      }
    }
  }

  dynamic "event_trigger" {
    for_each = local.is_firestore ? [var.trigger] : []
    content {
      trigger_region        = event_trigger.value.region
      event_type            = event_trigger.value.event_type
      retry_policy          = event_trigger.value.retry ? "RETRY_POLICY_RETRY" : "RETRY_POLICY_DO_NOT_RETRY"
      service_account_email = google_service_account.function.email

      event_filters {
        attribute = "database"
        value     = event_trigger.value.database
      }

      event_filters {
        attribute = "document"
        value     = event_trigger.value.document
        operator  = "match-path-pattern"
      }
    }
  }

  # Secret access must exist before the first revision starts, or it fails to boot.
  depends_on = [google_secret_manager_secret_iam_member.function]
}

resource "google_cloud_run_v2_service_iam_member" "invoker" {
  for_each = local.invoker_members

  project  = var.project_id
  location = var.region
  name     = google_cloudfunctions2_function.function.service_config[0].service
  role     = "roles/run.invoker"
  member   = each.value
}

# Pub/Sub trigger as an explicit push subscription, so that its retry backoff and dead-letter
# policy are declared here rather than left to the subscription Eventarc would create.
# functions-framework turns the push envelope into a CloudEvent for the function.
resource "google_pubsub_subscription" "push" {
  count = local.is_push ? 1 : 0

  project                    = var.project_id
  name                       = coalesce(var.trigger.subscription_name, "${var.name}-push")
  topic                      = var.trigger.topic
  ack_deadline_seconds       = var.trigger.ack_deadline_seconds
  message_retention_duration = "604800s"
  labels                     = var.labels

  push_config {
    push_endpoint = google_cloudfunctions2_function.function.service_config[0].uri

    oidc_token {
      service_account_email = var.trigger.push_service_account_email
      audience              = google_cloudfunctions2_function.function.service_config[0].uri
    }
  }

  retry_policy {
    minimum_backoff = var.trigger.minimum_backoff
    maximum_backoff = var.trigger.maximum_backoff
  }

  dead_letter_policy {
    dead_letter_topic     = var.trigger.dead_letter_topic
    max_delivery_attempts = var.trigger.max_delivery_attempts
  }

  expiration_policy {
    ttl = ""
  }

  depends_on = [google_cloud_run_v2_service_iam_member.invoker]
}
