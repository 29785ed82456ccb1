output "api_url" {
  description = "HTTPS URL of the api function (the base URL apps call; STRATA_PUBLIC_URL of the api function)."
  value       = local.api_public_url
}

output "function_urls" {
  description = "Cloud Run URI of every function, by function name."
  value = {
    api                      = module.api.uri
    on_conversation_complete = module.on_conversation_complete.uri
    delete_cascade           = module.delete_cascade.uri
    outbox_drain             = module.outbox_drain.uri
    consolidate              = module.consolidate.uri
    deliver_webhook          = module.deliver_webhook.uri
  }
}

output "function_service_accounts" {
  description = "Runtime service account email of every function, by function name."
  value       = local.function_sa
}

output "consolidate_url" {
  description = "URL the functions use to address Cloud Tasks at the consolidate function (STRATA_CONSOLIDATE_URL)."
  value       = local.consolidate_url
}

output "consolidation_invoker_email" {
  description = "Service account whose OIDC token Cloud Scheduler and Cloud Tasks present to consolidate."
  value       = google_service_account.consolidation_invoker.email
}

output "webhook_url" {
  description = "URL the capture trigger addresses webhook delivery tasks at: the deliver_webhook function (STRATA_WEBHOOK_URL)."
  value       = local.webhook_url
}

output "webhook_queue" {
  description = "Full id of the Cloud Tasks queue that delivers developer webhooks."
  value       = google_cloud_tasks_queue.webhooks.id
}

output "projection_topic" {
  description = "Full id of the projection Pub/Sub topic."
  value       = google_pubsub_topic.projection.id
}

output "projection_subscription" {
  description = "Full id of the push subscription that delivers projection messages to outbox_drain."
  value       = module.outbox_drain.subscription_id
}

output "dead_letter_topic" {
  description = "Full id of the projection dead-letter topic."
  value       = google_pubsub_topic.projection_dead_letter.id
}

output "dead_letter_subscription" {
  description = "Full id of the pull subscription that keeps dead letters for operators."
  value       = google_pubsub_subscription.projection_dead_letter.id
}

output "tasks_queue" {
  description = "Full id of the consolidation Cloud Tasks queue."
  value       = google_cloud_tasks_queue.consolidation.id
}

output "scheduler_jobs" {
  description = "Ids of the consolidation fan-out and outbox sweep scheduler jobs."
  value = {
    consolidation = google_cloud_scheduler_job.consolidation.id
    outbox_sweep  = google_cloud_scheduler_job.outbox_sweep.id
  }
}

output "deployment_mode" {
  description = "new_project or existing_project (what Terraform owns: see docs/deploy.md)."
  value       = var.deployment_mode
}

output "rules_to_release" {
  description = "existing_project mode: the rules are the app's; merge infra/rules/strata.rules into its firestore.rules (`strata rules merge`) and release that. new_project mode: the ruleset Terraform released."
  value       = local.manage_rules ? one(google_firebaserules_ruleset.firestore[*].name) : "merge infra/rules/strata.rules into the app's firestore.rules (strata rules merge)"
}

output "firestore_database" {
  description = "Name of the Firestore database (created in the new_project mode, the app's otherwise)."
  value       = local.database
}

output "firestore_index_ids" {
  description = "Ids of the composite indexes, by the key used in firestore.tf."
  value       = { for k, v in google_firestore_index.composite : k => v.id }
}

output "secret_ids" {
  description = "Secret Manager secret ids to add versions to, by key (typesense, typesense_search, pinecone, llm)."
  value       = { for k, v in google_secret_manager_secret.provider : k => v.secret_id }
}

output "source_bucket" {
  description = "Bucket holding the function source zips."
  value       = google_storage_bucket.sources.name
}

output "function_names" {
  description = "Deployed name of every function, by function (name_prefix in front of each)."
  value       = local.function_names
}

output "firestore_paths" {
  description = "Where the functions read and write in Firestore: data_root (each user's collections) and conversations_path (the triggers' source), as STRATA_DATA_ROOT and STRATA_CONVERSATIONS_PATH."
  value = {
    data_root          = var.data_root
    conversations_path = var.conversations_path
  }
}
