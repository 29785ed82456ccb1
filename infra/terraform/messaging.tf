# Pub/Sub (outbox nudges and their dead letters), Cloud Tasks (per-user consolidation) and
# Cloud Scheduler (periodic consolidation fan-out and outbox sweep).

resource "google_pubsub_topic" "projection" {
  #checkov:skip=CKV_GCP_83:Messages are nudges (uid and event ids, no memory content); Google-managed encryption is enough and a CMEK key would be the project's only KMS dependency.
  project                    = var.project_id
  name                       = local.projection_topic
  message_retention_duration = "86400s"
  labels                     = var.labels

  depends_on = [google_project_service.services]
}

resource "google_pubsub_topic" "projection_dead_letter" {
  #checkov:skip=CKV_GCP_83:Holds the same id-only nudges as the projection topic; Google-managed encryption is enough.
  project                    = var.project_id
  name                       = "${local.projection_topic}-dead-letter"
  message_retention_duration = "604800s"
  labels                     = var.labels

  depends_on = [google_project_service.services]
}

# Dead letters wait here for an operator (`gcloud pubsub subscriptions pull`); the outbox rows in
# Firestore stay authoritative, so replaying is `strata outbox drain`.
resource "google_pubsub_subscription" "projection_dead_letter" {
  project                    = var.project_id
  name                       = "${local.projection_topic}-dead-letter"
  topic                      = google_pubsub_topic.projection_dead_letter.id
  ack_deadline_seconds       = 60
  message_retention_duration = "604800s"
  retain_acked_messages      = false
  labels                     = var.labels

  expiration_policy {
    ttl = ""
  }
}

resource "google_cloud_tasks_queue" "consolidation" {
  project  = var.project_id
  name     = local.tasks_queue
  location = var.region

  rate_limits {
    max_dispatches_per_second = var.consolidation_rate.max_dispatches_per_second
    max_concurrent_dispatches = var.consolidation_rate.max_concurrent_dispatches
  }

  retry_config {
    max_attempts       = var.consolidation_retry.max_attempts
    min_backoff        = var.consolidation_retry.min_backoff
    max_backoff        = var.consolidation_retry.max_backoff
    max_doublings      = var.consolidation_retry.max_doublings
    max_retry_duration = var.consolidation_retry.max_retry_duration
  }

  stackdriver_logging_config {
    sampling_ratio = 1.0
  }

  depends_on = [google_project_service.services]
}

# Developer webhook deliveries (memory_created): one task per completed conversation of a user
# whose webhook is on, run by the deliver_webhook function (private to the invoker service account).
# Its own queue, so a slow receiver never delays consolidation; retries are bounded here and again
# by the delivery code (5 attempts).
resource "google_cloud_tasks_queue" "webhooks" {
  project  = var.project_id
  name     = local.webhook_queue
  location = var.region

  rate_limits {
    max_dispatches_per_second = var.webhook_rate.max_dispatches_per_second
    max_concurrent_dispatches = var.webhook_rate.max_concurrent_dispatches
  }

  retry_config {
    max_attempts       = var.webhook_retry.max_attempts
    min_backoff        = var.webhook_retry.min_backoff
    max_backoff        = var.webhook_retry.max_backoff
    max_doublings      = var.webhook_retry.max_doublings
    max_retry_duration = var.webhook_retry.max_retry_duration
  }

  stackdriver_logging_config {
    sampling_ratio = 1.0
  }

  depends_on = [google_project_service.services]
}

# Consolidation safety net: consolidate({"mode": "fanout"}) walks the per-user schedule registry
# (a persisted cursor, bounded pages, round robin) and enqueues a repair task for each pending user
# whose write-scheduled task is overdue. It reads users, never items.
resource "google_cloud_scheduler_job" "consolidation" {
  project          = var.project_id
  region           = var.region
  name             = local.scheduler_jobs.consolidation
  description      = "Consolidation safety net: walks pending users, re-enqueues overdue per-user tasks."
  schedule         = var.consolidation_schedule
  time_zone        = var.scheduler_time_zone
  attempt_deadline = "320s"

  retry_config {
    retry_count          = 1
    min_backoff_duration = "30s"
    max_backoff_duration = "120s"
  }

  http_target {
    http_method = "POST"
    uri         = module.consolidate.uri
    body        = base64encode(jsonencode({ mode = "fanout" }))
    headers = {
      "Content-Type" = "application/json"
    }

    oidc_token {
      service_account_email = google_service_account.consolidation_invoker.email
      audience              = module.consolidate.uri
    }
  }

  depends_on = [google_project_service.services]
}

# Outbox sweep: a {"sweep": true} message on the projection topic makes outbox_drain look for due
# events across all users, so an event whose nudge was lost is still projected.
resource "google_cloud_scheduler_job" "outbox_sweep" {
  project     = var.project_id
  region      = var.region
  name        = local.scheduler_jobs.outbox_sweep
  description = "Periodic outbox sweep message on the projection topic."
  schedule    = var.outbox_sweep_schedule
  time_zone   = var.scheduler_time_zone

  retry_config {
    retry_count = 1
  }

  pubsub_target {
    topic_name = google_pubsub_topic.projection.id
    data       = base64encode(jsonencode({ sweep = true }))
    attributes = {
      kind = "sweep"
    }
  }

  depends_on = [google_project_service.services]
}
