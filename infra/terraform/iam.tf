# Bindings on shared resources (topic, queue, invoker identities). Project-level roles and secret
# access are granted per function inside modules/function. No primitive role appears anywhere.

locals {
  function_sa = {
    api                      = module.api.service_account_email
    on_conversation_complete = module.on_conversation_complete.service_account_email
    delete_cascade           = module.delete_cascade.service_account_email
    outbox_drain             = module.outbox_drain.service_account_email
    consolidate              = module.consolidate.service_account_email
    deliver_webhook          = module.deliver_webhook.service_account_email
  }

  # Every function that commits memory changes nudges the outbox drain.
  projection_publishers = ["api", "on_conversation_complete", "delete_cascade", "outbox_drain", "consolidate"]

  # Functions that enqueue per-user consolidation tasks (and so sign them as the invoker): the
  # outbox drain (a write's task), consolidate (a pass's continuation, the walk's repairs).
  task_enqueuers = ["outbox_drain", "consolidate"]
}

resource "google_pubsub_topic_iam_member" "projection_publisher" {
  for_each = toset(local.projection_publishers)

  project = var.project_id
  topic   = google_pubsub_topic.projection.name
  role    = "roles/pubsub.publisher"
  member  = "serviceAccount:${local.function_sa[each.value]}"
}

resource "google_cloud_tasks_queue_iam_member" "enqueuer" {
  for_each = toset(local.task_enqueuers)

  project  = var.project_id
  location = var.region
  name     = google_cloud_tasks_queue.consolidation.name
  role     = "roles/cloudtasks.enqueuer"
  member   = "serviceAccount:${local.function_sa[each.value]}"
}

# The trigger enqueues developer webhook deliveries (signed as the same invoker).
resource "google_cloud_tasks_queue_iam_member" "webhook_enqueuer" {
  project  = var.project_id
  location = var.region
  name     = google_cloud_tasks_queue.webhooks.name
  role     = "roles/cloudtasks.enqueuer"
  member   = "serviceAccount:${local.function_sa.on_conversation_complete}"
}

# Creating a task with an OIDC token for the invoker requires acting as it.
resource "google_service_account_iam_member" "enqueuer_acts_as_invoker" {
  for_each = toset(local.task_enqueuers)

  service_account_id = google_service_account.consolidation_invoker.name
  role               = "roles/iam.serviceAccountUser"
  member             = "serviceAccount:${local.function_sa[each.value]}"
}

# Dead-lettering: the Pub/Sub service agent publishes to the dead-letter topic and acknowledges
# on the source subscription.
resource "google_pubsub_topic_iam_member" "dead_letter_publisher" {
  project = var.project_id
  topic   = google_pubsub_topic.projection_dead_letter.name
  role    = "roles/pubsub.publisher"
  member  = local.pubsub_agent
}

resource "google_pubsub_subscription_iam_member" "dead_letter_subscriber" {
  project      = var.project_id
  subscription = module.outbox_drain.subscription_id
  role         = "roles/pubsub.subscriber"
  member       = local.pubsub_agent
}

# The Pub/Sub service agent mints the push subscription's OIDC tokens.
resource "google_service_account_iam_member" "pubsub_push_token_creator" {
  service_account_id = google_service_account.projection_push.name
  role               = "roles/iam.serviceAccountTokenCreator"
  member             = local.pubsub_agent
}

# The trigger signs webhook delivery tasks as the invoker too, which needs the same actAs.
resource "google_service_account_iam_member" "webhook_enqueuer_acts_as_invoker" {
  service_account_id = google_service_account.consolidation_invoker.name
  role               = "roles/iam.serviceAccountUser"
  member             = "serviceAccount:${local.function_sa.on_conversation_complete}"
}
