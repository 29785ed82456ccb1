output "name" {
  description = "Deployed function name."
  value       = google_cloudfunctions2_function.function.name
}

output "url" {
  description = "The function's cloudfunctions.net URL."
  value       = google_cloudfunctions2_function.function.url
}

output "uri" {
  description = "URI of the Cloud Run service behind the function (the OIDC audience for callers)."
  value       = google_cloudfunctions2_function.function.service_config[0].uri
}

output "service_name" {
  description = "Name of the Cloud Run service behind the function."
  value       = google_cloudfunctions2_function.function.service_config[0].service
}

output "service_account_email" {
  description = "Email of the function's own runtime service account."
  value       = google_service_account.function.email
}

output "source_object" {
  description = "Bucket object (named by content hash) the function was built from."
  value       = google_storage_bucket_object.source.name
}

output "subscription_id" {
  description = "Id of the push subscription when the trigger kind is pubsub_push, else null."
  value       = one(google_pubsub_subscription.push[*].id)
}
