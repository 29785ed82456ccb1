# The six functions, one job each. Each is one instance of modules/function: its own service
# account, its own trigger and retry policy, and only the roles and secrets its code uses.

locals {
  # The consolidate function's Cloud Run URL, known before it exists (the function reads it to
  # address Cloud Tasks at itself, so it cannot come from the module's output without a cycle):
  # Cloud Run's deterministic URL, https://SERVICE-PROJECT_NUMBER.REGION.run.app. Cloud Tasks must
  # target a run.app URL: Cloud Run counts a task as internal traffic (the function's ingress is
  # internal-only) only there, not on the cloudfunctions.net URL. Each task carries an OIDC token
  # of the invoker with this URL as audience; Cloud Run checks the audience against the service's
  # URLs, and the function checks it again (STRATA_TASKS_AUDIENCE, core/api/auth.py).
  consolidate_url = "https://${local.function_names.consolidate}-${data.google_project.this.number}.${var.region}.run.app"

  # The deliver_webhook function's run.app URL, for the same reasons: the capture trigger addresses
  # webhook delivery tasks at it (STRATA_WEBHOOK_URL) and it checks the tasks' OIDC audience
  # against it (its own STRATA_TASKS_AUDIENCE).
  webhook_url = "https://${local.function_names.deliver_webhook}-${data.google_project.this.number}.${var.region}.run.app"

  # The api's public URL as clients call it, path prefix included (STRATA_PUBLIC_URL): the MCP
  # server names it in its 401 and its protected-resource metadata (RFC 9728), which a client checks
  # against the URL it called. Behind a prefix (https://REGION-PROJECT.cloudfunctions.net/api, a
  # Hosting rewrite) the request's Host alone names the wrong place. Default: the function's
  # deterministic run.app URL (what `api_url` outputs), known before the function exists.
  api_public_url = trimsuffix(coalesce(var.api_public_url,
  "https://${local.function_names.api}-${data.google_project.this.number}.${var.region}.run.app"), "/")

  # The chat model: Vertex AI's OpenAI-compatible endpoint of this project unless llm_base_url
  # names another (the global location has no regional host).
  llm_location = coalesce(var.llm_location, var.region)
  llm_host     = local.llm_location == "global" ? "aiplatform.googleapis.com" : "${local.llm_location}-aiplatform.googleapis.com"
  llm_base_url = coalesce(var.llm_base_url, "https://${local.llm_host}/v1/projects/${var.project_id}/locations/${local.llm_location}/endpoints/openapi")

  environment = { for k, v in {
    STRATA_PROJECT_ID               = var.project_id
    STRATA_REGION                   = var.region
    STRATA_DATA_ROOT                = var.data_root
    STRATA_CONVERSATIONS_PATH       = var.conversations_path
    STRATA_PROJECTION_TOPIC         = google_pubsub_topic.projection.name
    STRATA_TASKS_QUEUE              = google_cloud_tasks_queue.consolidation.name
    STRATA_WEBHOOK_QUEUE            = google_cloud_tasks_queue.webhooks.name
    STRATA_WEBHOOK_TIMEOUT_S        = tostring(var.webhook_timeout_s)
    STRATA_CONSOLIDATE_URL          = local.consolidate_url
    STRATA_WEBHOOK_URL              = local.webhook_url
    STRATA_TASKS_INVOKER            = google_service_account.consolidation_invoker.email
    STRATA_TASKS_AUDIENCE           = local.consolidate_url
    STRATA_PROVIDER_SETUP           = "check"
    STRATA_KEYWORD_PURGE            = "drain" # the api's search key cannot delete: the drain purges a wipe
    STRATA_CONSOLIDATION_INTERVAL_S = tostring(var.consolidation_interval_seconds)
    STRATA_CONSOLIDATION_PASS_LIMIT = tostring(var.consolidation_pass_limit)
    STRATA_WALK_PAGE_SIZE           = tostring(var.consolidation_walk.page_size)
    STRATA_WALK_PAGES               = tostring(var.consolidation_walk.pages)
    STRATA_TYPESENSE_URL            = var.typesense_url
    STRATA_PINECONE_HOST            = var.pinecone_host
    STRATA_PINECONE_NAMESPACE       = var.pinecone_namespace
    STRATA_EMBEDDER                 = var.embedder
    STRATA_EMBEDDING_DIM            = tostring(var.embedding_dim)
    STRATA_EMBEDDING_MODEL          = var.embedding_model
    STRATA_EMBEDDING_BASE_URL       = var.embedding_base_url
    STRATA_VERTEX_LOCATION          = var.vertex_location
    STRATA_EXTRACTOR                = var.extractor
    STRATA_ROUTER                   = var.router
    STRATA_LLM_BASE_URL             = local.llm_base_url
    STRATA_LLM_MODEL                = var.llm_model
    STRATA_LLM_AUTH                 = var.llm_auth
    STRATA_LLM_REASONING_EFFORT     = var.llm_reasoning_effort
    STRATA_LLM_RESPONSE_FORMAT      = var.llm_response_format
  } : k => v if v != "" }

  # Secret environment variables by the secrets each function's code reaches.
  secret_env = {
    for name, keys in {
      api                      = ["typesense_search", "pinecone", "embedding"] # searches; query embeddings
      on_conversation_complete = ["llm"]                                       # extraction
      delete_cascade           = ["typesense_search", "pinecone"]              # immediate provider cleanup
      outbox_drain             = ["typesense", "pinecone", "embedding"]        # projections, wipe purges (the write key); embeddings
      consolidate              = ["typesense", "pinecone", "llm", "embedding"] # neighbours; routing; its maintenance drains project
      deliver_webhook          = []                                            # Firestore and the receiver only
      # Every function also mounts the log hash key (its log lines name users by uid_hash).
    } : name => { for k in concat(keys, ["log_hash"]) : local.secrets[k].env => google_secret_manager_secret.provider[k].secret_id }
  }

  sizing = {
    for name, d in {
      api                      = { available_memory = "1Gi", timeout_seconds = 60, min_instance_count = 0, max_instance_count = 20 }
      on_conversation_complete = { available_memory = "1Gi", timeout_seconds = 300, min_instance_count = 0, max_instance_count = 10 }
      delete_cascade           = { available_memory = "512M", timeout_seconds = 300, min_instance_count = 0, max_instance_count = 5 }
      outbox_drain             = { available_memory = "1Gi", timeout_seconds = 300, min_instance_count = 0, max_instance_count = 5 }
      consolidate              = { available_memory = "1Gi", timeout_seconds = 540, min_instance_count = 0, max_instance_count = 10 }
      deliver_webhook          = { available_memory = "512M", timeout_seconds = 60, min_instance_count = 0, max_instance_count = 5 }
      } : name => {
      available_memory   = coalesce(try(var.function_settings[name].available_memory, null), d.available_memory)
      timeout_seconds    = coalesce(try(var.function_settings[name].timeout_seconds, null), d.timeout_seconds)
      min_instance_count = coalesce(try(var.function_settings[name].min_instance_count, null), d.min_instance_count)
      max_instance_count = coalesce(try(var.function_settings[name].max_instance_count, null), d.max_instance_count)
    }
  }

  # Vertex AI embeddings are called with the function's own service account.
  common_project_roles = concat(["roles/datastore.user"], var.embedder == "vertex" ? ["roles/aiplatform.user"] : [])
  # So is the chat model, by the functions that call it: capture (extractor) and consolidate (router).
  model_roles       = var.llm_auth == "google" ? ["roles/aiplatform.user"] : []
  capture_roles     = distinct(concat(local.common_project_roles, var.extractor == "openai" ? local.model_roles : []))
  consolidate_roles = distinct(concat(local.common_project_roles, var.router == "openai" ? local.model_roles : []))
}

module "api" {
  source = "./modules/function"

  project_id                       = var.project_id
  region                           = var.region
  name                             = local.function_names.api
  description                      = "Strata HTTP API (Firebase ID token auth in the app)."
  entry_point                      = "api"
  runtime                          = var.python_runtime
  source_dir                       = "${local.package_dir}/api"
  source_bucket                    = google_storage_bucket.sources.name
  build_service_account            = google_service_account.build.id
  service_account_id               = local.service_account_ids.api
  project_roles                    = local.common_project_roles
  environment_variables            = merge(local.environment, { STRATA_PUBLIC_URL = local.api_public_url, STRATA_FIREBASE_AUDIENCES = join(",", var.firebase_audiences) })
  secret_environment_variables     = local.secret_env.api
  available_memory                 = local.sizing.api.available_memory
  timeout_seconds                  = local.sizing.api.timeout_seconds
  min_instance_count               = local.sizing.api.min_instance_count
  max_instance_count               = local.sizing.api.max_instance_count
  max_instance_request_concurrency = 8
  invoker_members                  = var.api_public ? ["allUsers"] : []
  labels                           = var.labels

  trigger = { kind = "http" }
}

module "on_conversation_complete" {
  source = "./modules/function"

  project_id                   = var.project_id
  region                       = var.region
  name                         = local.function_names.on_conversation_complete
  description                  = "Extracts memories when a conversation is written as completed."
  entry_point                  = "on_conversation_complete"
  runtime                      = var.python_runtime
  source_dir                   = "${local.package_dir}/on_conversation_complete"
  source_bucket                = google_storage_bucket.sources.name
  build_service_account        = google_service_account.build.id
  service_account_id           = local.service_account_ids.on_conversation_complete
  project_roles                = local.capture_roles
  environment_variables        = local.environment
  secret_environment_variables = local.secret_env.on_conversation_complete
  available_memory             = local.sizing.on_conversation_complete.available_memory
  timeout_seconds              = local.sizing.on_conversation_complete.timeout_seconds
  min_instance_count           = local.sizing.on_conversation_complete.min_instance_count
  max_instance_count           = local.sizing.on_conversation_complete.max_instance_count
  ingress_settings             = "ALLOW_INTERNAL_ONLY"
  labels                       = var.labels

  trigger = {
    kind       = "firestore"
    event_type = "google.cloud.firestore.document.v1.written"
    document   = local.conversation_document
    database   = local.database
    region     = var.firestore_location
    retry      = true
  }
}

module "delete_cascade" {
  source = "./modules/function"

  project_id                   = var.project_id
  region                       = var.region
  name                         = local.function_names.delete_cascade
  description                  = "Tombstones a deleted conversation's memories and schedules provider deletes."
  entry_point                  = "delete_cascade"
  runtime                      = var.python_runtime
  source_dir                   = "${local.package_dir}/delete_cascade"
  source_bucket                = google_storage_bucket.sources.name
  build_service_account        = google_service_account.build.id
  service_account_id           = local.service_account_ids.delete_cascade
  project_roles                = local.common_project_roles
  environment_variables        = local.environment
  secret_environment_variables = local.secret_env.delete_cascade
  available_memory             = local.sizing.delete_cascade.available_memory
  timeout_seconds              = local.sizing.delete_cascade.timeout_seconds
  min_instance_count           = local.sizing.delete_cascade.min_instance_count
  max_instance_count           = local.sizing.delete_cascade.max_instance_count
  ingress_settings             = "ALLOW_INTERNAL_ONLY"
  labels                       = var.labels

  trigger = {
    kind       = "firestore"
    event_type = "google.cloud.firestore.document.v1.deleted"
    document   = local.conversation_document
    database   = local.database
    region     = var.firestore_location
    retry      = true
  }
}

module "outbox_drain" {
  source = "./modules/function"

  project_id                   = var.project_id
  region                       = var.region
  name                         = local.function_names.outbox_drain
  description                  = "Projects due outbox events to Typesense and Pinecone."
  entry_point                  = "outbox_drain"
  runtime                      = var.python_runtime
  source_dir                   = "${local.package_dir}/outbox_drain"
  source_bucket                = google_storage_bucket.sources.name
  build_service_account        = google_service_account.build.id
  service_account_id           = local.service_account_ids.outbox_drain
  project_roles                = local.common_project_roles
  environment_variables        = local.environment
  secret_environment_variables = local.secret_env.outbox_drain
  available_memory             = local.sizing.outbox_drain.available_memory
  timeout_seconds              = local.sizing.outbox_drain.timeout_seconds
  min_instance_count           = local.sizing.outbox_drain.min_instance_count
  max_instance_count           = local.sizing.outbox_drain.max_instance_count
  ingress_settings             = "ALLOW_INTERNAL_ONLY"
  labels                       = var.labels

  trigger = {
    kind                       = "pubsub_push"
    topic                      = google_pubsub_topic.projection.id
    subscription_name          = "${local.projection_topic}-outbox-drain"
    dead_letter_topic          = google_pubsub_topic.projection_dead_letter.id
    max_delivery_attempts      = var.outbox_max_delivery_attempts
    ack_deadline_seconds       = 300
    minimum_backoff            = "30s"
    maximum_backoff            = "600s"
    push_service_account_email = google_service_account.projection_push.email
  }
}

module "consolidate" {
  source = "./modules/function"

  project_id                   = var.project_id
  region                       = var.region
  name                         = local.function_names.consolidate
  description                  = "Consolidation: safety-net walk over users (scheduler) or one user's pass (Cloud Tasks)."
  entry_point                  = "consolidate"
  runtime                      = var.python_runtime
  source_dir                   = "${local.package_dir}/consolidate"
  source_bucket                = google_storage_bucket.sources.name
  build_service_account        = google_service_account.build.id
  service_account_id           = local.service_account_ids.consolidate
  project_roles                = local.consolidate_roles
  environment_variables        = local.environment
  secret_environment_variables = local.secret_env.consolidate
  available_memory             = local.sizing.consolidate.available_memory
  timeout_seconds              = local.sizing.consolidate.timeout_seconds
  min_instance_count           = local.sizing.consolidate.min_instance_count
  max_instance_count           = local.sizing.consolidate.max_instance_count
  invoker_members              = ["serviceAccount:${google_service_account.consolidation_invoker.email}"]
  ingress_settings             = "ALLOW_INTERNAL_ONLY"
  labels                       = var.labels

  trigger = { kind = "http" }
}

module "deliver_webhook" {
  source = "./modules/function"

  project_id                   = var.project_id
  region                       = var.region
  name                         = local.function_names.deliver_webhook
  description                  = "Developer webhooks: one delivery attempt per Cloud Task of the webhook queue."
  entry_point                  = "deliver_webhook"
  runtime                      = var.python_runtime
  source_dir                   = "${local.package_dir}/deliver_webhook"
  source_bucket                = google_storage_bucket.sources.name
  build_service_account        = google_service_account.build.id
  service_account_id           = local.service_account_ids.deliver_webhook
  project_roles                = ["roles/datastore.user"]
  environment_variables        = merge(local.environment, { STRATA_TASKS_AUDIENCE = local.webhook_url })
  secret_environment_variables = local.secret_env.deliver_webhook
  available_memory             = local.sizing.deliver_webhook.available_memory
  timeout_seconds              = local.sizing.deliver_webhook.timeout_seconds
  min_instance_count           = local.sizing.deliver_webhook.min_instance_count
  max_instance_count           = local.sizing.deliver_webhook.max_instance_count
  invoker_members              = ["serviceAccount:${google_service_account.consolidation_invoker.email}"]
  ingress_settings             = "ALLOW_INTERNAL_ONLY"
  labels                       = var.labels

  # Called by Cloud Tasks on the webhook queue (messaging.tf: its rate and retry limits).
  trigger = { kind = "http" }
}
