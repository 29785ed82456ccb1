# Names an app chooses (docs/deploy.md, "Names an app chooses"): where Strata's data sits in the
# Firestore database and what every resource Strata creates is called. The defaults are the names a
# deployment had before the choice existed, so an existing state plans no change.
#
# Only variables are read here (no resource, no data source): tests/infra evaluates this file with
# variables.tf under `terraform` alone, no provider, for the names each choice gives.

locals {
  # The functions: the prefix in front of each name (api, on-conversation-complete, ...). A function's
  # name is its Cloud Run service's, hence its run.app host (functions.tf).
  function_names = { for key, name in {
    api                      = "api"
    on_conversation_complete = "on-conversation-complete"
    delete_cascade           = "delete-cascade"
    outbox_drain             = "outbox-drain"
    consolidate              = "consolidate"
    deliver_webhook          = "deliver-webhook"
  } : key => "${var.name_prefix}${name}" }

  # Every other name starts with "strata-" by default; a prefix takes that word's place (a service
  # account id has at most 30 characters: strata-consolidation-invoker has 28).
  resource_prefix = var.name_prefix == "" ? "strata-" : var.name_prefix

  service_account_ids = { for key, id in {
    api                      = "api"
    on_conversation_complete = "conv-complete"
    delete_cascade           = "delete-cascade"
    outbox_drain             = "outbox-drain"
    consolidate              = "consolidate"
    deliver_webhook          = "deliver-webhook"
    build                    = "build"
    consolidation_invoker    = "consolidation-invoker"
    projection_push          = "projection-push"
  } : key => "${local.resource_prefix}${id}" }

  projection_topic = coalesce(var.projection_topic, "${local.resource_prefix}projection")
  tasks_queue      = coalesce(var.tasks_queue, "${local.resource_prefix}consolidation")
  webhook_queue    = coalesce(var.webhook_queue, "${local.resource_prefix}webhooks")
  scheduler_jobs = {
    consolidation = "${local.resource_prefix}consolidation-fanout"
    outbox_sweep  = "${local.resource_prefix}outbox-sweep"
  }
  source_bucket = "${var.project_id}-${local.resource_prefix}sources"
  # Log-based metrics: strata/outbox_dead_events, ... (the prefix without its last hyphen).
  metric_prefix = trimsuffix(local.resource_prefix, "-")

  # Where the app writes conversations: the capture and cascade triggers' document pattern, and the
  # match of Strata's rules fragment (what `strata rules merge --conversations-path` writes).
  conversation_document = "${var.conversations_path}/{conversation_id}"
  rules_match_default   = "match /users/{strataUid}/conversations/{strataConversationId} {"
  rules_match           = "match /${replace(var.conversations_path, "{uid}", "{strataUid}")}/{strataConversationId} {"
}
