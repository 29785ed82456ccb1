variable "project_id" {
  description = "Google Cloud project id to deploy Strata into."
  type        = string
}

variable "deployment_mode" {
  description = "new_project: Strata creates the Firestore database, adds Firebase and releases its security rules. existing_project: the app's Firebase project already has them; Strata declares none of them and the app merges Strata's rules fragment into its own firestore.rules (docs/deploy.md)."
  type        = string
  default     = "new_project"

  validation {
    condition     = contains(["new_project", "existing_project"], var.deployment_mode)
    error_message = "deployment_mode is new_project or existing_project."
  }
}

variable "conversations_path" {
  description = "The collection the app writes conversations to, with {uid} once in a document id's place (STRATA_CONVERSATIONS_PATH): the capture and cascade triggers watch {conversations_path}/{conversation_id}, and the rules guard it. Default users/{uid}/conversations; e.g. chats/{uid}/threads when the app's users/{uid}/conversations is its own. Both modes."
  type        = string
  default     = "users/{uid}/conversations"

  validation {
    condition     = can(regex("^([A-Za-z0-9_-]{1,100}/[A-Za-z0-9_-]{1,100}/)*[A-Za-z0-9_-]{1,100}/\\{uid\\}/[A-Za-z0-9_-]{1,100}(/[A-Za-z0-9_-]{1,100}/[A-Za-z0-9_-]{1,100})*$", var.conversations_path)) && !can(regex("(^|/)__[^/]*__(/|$)", var.conversations_path))
    error_message = "conversations_path is a collection path (an odd number of segments) with {uid} once as a document id, e.g. users/{uid}/conversations or chats/{uid}/threads; segments are letters, digits, _ and - (not __x__)."
  }

  validation {
    condition     = !contains(["account_deletions", "action_items", "api_key_hashes", "api_keys", "capture_runs", "client_devices", "consolidation_attempts", "consolidation_schedule", "consolidation_walk", "deletion_receipts", "developer_webhooks", "goals", "knowledge_edges", "knowledge_nodes", "memories", "memory_commits", "memory_controls", "memory_graph_assertions", "memory_items", "memory_operations", "memory_outbox", "memory_review_queue", "memory_state", "projection_rebuilds", "rate_limits", "request_keys", "scheduler_jobs", "server_key_hashes", "server_keys", "short_term", "webhook_deliveries"], element(split("/", var.conversations_path), length(split("/", var.conversations_path)) - 1))
    error_message = "conversations_path must not end in one of Strata's own collection ids (memory_items, api_keys, ...)."
  }
}

variable "data_root" {
  description = "The document Strata keeps each user's collections under (memory_items, the ledger, the outbox, ...), ending in {uid} (STRATA_DATA_ROOT). Default users/{uid}; e.g. strata_users/{uid} to keep them out of the app's users/{uid}. Both modes."
  type        = string
  default     = "users/{uid}"

  validation {
    condition     = can(regex("^([A-Za-z0-9_-]{1,100}/[A-Za-z0-9_-]{1,100}/)*[A-Za-z0-9_-]{1,100}/\\{uid\\}$", var.data_root)) && !can(regex("(^|/)__[^/]*__(/|$)", var.data_root))
    error_message = "data_root is a document path ending in {uid} (an even number of segments, {uid} once), e.g. users/{uid} or strata_users/{uid}; segments are letters, digits, _ and - (not __x__)."
  }

  validation {
    condition     = !contains(["account_deletions", "action_items", "api_key_hashes", "api_keys", "capture_runs", "client_devices", "consolidation_attempts", "consolidation_schedule", "consolidation_walk", "deletion_receipts", "developer_webhooks", "goals", "knowledge_edges", "knowledge_nodes", "memories", "memory_commits", "memory_controls", "memory_graph_assertions", "memory_items", "memory_operations", "memory_outbox", "memory_review_queue", "memory_state", "projection_rebuilds", "rate_limits", "request_keys", "scheduler_jobs", "server_key_hashes", "server_keys", "short_term", "webhook_deliveries"], element(split("/", var.data_root), length(split("/", var.data_root)) - 2))
    error_message = "data_root's collection must not be one of Strata's own collection ids (memory_items, rate_limits, ...)."
  }
}

variable "name_prefix" {
  description = "Prefix of the names of Strata's resources in the project: in front of each function's name (api becomes PREFIXapi) and in place of strata- in the other names (service accounts, topics, queues, scheduler jobs, secrets, the source bucket, log-based metrics). Empty: today's names. 3 to 9 characters ending in a hyphen (a service account id has at most 30 characters), e.g. mem-. Both modes."
  type        = string
  default     = ""

  validation {
    condition     = var.name_prefix == "" || can(regex("^[a-z][a-z0-9-]{1,7}-$", var.name_prefix))
    error_message = "name_prefix is empty or 3 to 9 characters: a lowercase letter, then lowercase letters, digits or hyphens, ending in a hyphen (e.g. mem-)."
  }
}

variable "region" {
  description = "Region for the functions, the Cloud Tasks queue, the scheduler jobs and the source bucket."
  type        = string
  default     = "us-central1"
}

variable "firestore_location" {
  description = "Location of the Firestore database (e.g. nam5, eur3, or a region). Firestore triggers are created in this location."
  type        = string
  default     = "nam5"
}

variable "firestore_database" {
  description = "Firestore database id. Strata's code uses the default database; in the existing_project mode it is the app's database, which Terraform never creates."
  type        = string
  default     = "(default)"
}

variable "firestore_rules_path" {
  description = "new_project mode: path of the Firestore security rules file released to the database (default infra/firestore.rules). The existing_project mode releases no rules."
  type        = string
  default     = null
}

variable "package_dir" {
  description = "Directory written by `make package`: one sub-directory per function (main.py, core/, requirements.txt); null: build/functions, or build/functions-minilm (`make package EMBEDDER=minilm`) when embedder is minilm."
  type        = string
  default     = null
}

variable "python_runtime" {
  description = "Cloud Functions Python runtime id."
  type        = string
  default     = "python311"
}

variable "enable_apis" {
  description = "Enable the Google APIs Strata uses. Turn off when a platform team manages project services."
  type        = bool
  default     = true
}

variable "enable_firebase" {
  description = "new_project mode: add Firebase to the project (needed for security rules releases and Firebase Auth ID tokens). Ignored in the existing_project mode, whose project is already a Firebase project."
  type        = bool
  default     = true
}

variable "api_public" {
  description = "Let anyone reach the api function over HTTPS (the app still authenticates every request with a Firebase ID token)."
  type        = bool
  default     = true
}

variable "api_public_url" {
  description = "The api's public URL as clients call it, path prefix included (e.g. https://REGION-PROJECT.cloudfunctions.net/api or a custom domain); named by the MCP server's protected-resource metadata. Empty: the function's run.app URL."
  type        = string
  default     = ""
  validation {
    condition     = var.api_public_url == "" || can(regex("^https://[^/?#]+(/[^?#]*)?$", var.api_public_url))
    error_message = "api_public_url is an https:// URL without query or fragment."
  }
}

variable "firebase_audiences" {
  description = "Firebase project ids besides project_id whose users' ID tokens the api accepts (STRATA_FIREBASE_AUDIENCES): the app's own project when its users sign in there and Strata runs in a project of its own (new-project mode). Default: none."
  type        = list(string)
  default     = []
  validation {
    condition     = alltrue([for p in var.firebase_audiences : can(regex("^[a-z][a-z0-9-]{4,28}[a-z0-9]$", p))])
    error_message = "firebase_audiences are project ids: 6-30 lowercase letters, digits and hyphens."
  }
}

variable "projection_topic" {
  description = "Pub/Sub topic that nudges the outbox drain (STRATA_PROJECTION_TOPIC); empty: strata-projection (with name_prefix: PREFIXprojection)."
  type        = string
  default     = ""
}

variable "tasks_queue" {
  description = "Cloud Tasks queue for per-user consolidation passes (STRATA_TASKS_QUEUE); empty: strata-consolidation (with name_prefix: PREFIXconsolidation)."
  type        = string
  default     = ""
}

variable "outbox_max_delivery_attempts" {
  description = "Deliveries of one projection message before it is moved to the dead-letter topic (5-100)."
  type        = number
  default     = 5

  validation {
    condition     = var.outbox_max_delivery_attempts >= 5 && var.outbox_max_delivery_attempts <= 100
    error_message = "Pub/Sub allows 5 to 100 delivery attempts."
  }
}

variable "consolidation_schedule" {
  description = "Cron (unix-cron) of the consolidation fan-out job. The local stack's tick loop reads this default."
  type        = string
  default     = "*/10 * * * *"
}

variable "consolidation_interval_seconds" {
  description = "Period of consolidation_schedule in seconds: the delay of a user's write-scheduled consolidation task and the width of the window its name is keyed by."
  type        = number
  default     = 600

  validation {
    condition     = var.consolidation_interval_seconds >= 60
    error_message = "consolidation_interval_seconds must be at least 60 (the scheduler's resolution)."
  }
}

variable "consolidation_pass_limit" {
  description = "Most pending items one consolidation pass selects; a pass that leaves more enqueues its continuation."
  type        = number
  default     = 500
}

variable "consolidation_walk" {
  description = "The scheduler job's safety-net walk over users: users per page and pages per invocation."
  type = object({
    page_size = number
    pages     = number
  })
  default = {
    page_size = 500
    pages     = 4
  }
}

variable "outbox_sweep_schedule" {
  description = "Cron (unix-cron) of the outbox sweep message on the projection topic. The local stack's tick loop reads this default."
  type        = string
  default     = "*/5 * * * *"
}

variable "scheduler_time_zone" {
  description = "Time zone the scheduler crons are read in."
  type        = string
  default     = "Etc/UTC"
}

variable "consolidation_rate" {
  description = "Cloud Tasks dispatch limits of the consolidation queue."
  type = object({
    max_dispatches_per_second = number
    max_concurrent_dispatches = number
  })
  default = {
    max_dispatches_per_second = 5
    max_concurrent_dispatches = 10
  }
}

variable "consolidation_retry" {
  description = "Cloud Tasks retry limits of the consolidation queue (durations in seconds, e.g. \"10s\")."
  type = object({
    max_attempts       = number
    min_backoff        = string
    max_backoff        = string
    max_doublings      = number
    max_retry_duration = string
  })
  default = {
    max_attempts       = 5
    min_backoff        = "10s"
    max_backoff        = "600s"
    max_doublings      = 5
    max_retry_duration = "3600s"
  }
}

variable "webhook_queue" {
  description = "Cloud Tasks queue for developer webhook deliveries (STRATA_WEBHOOK_QUEUE); empty: strata-webhooks (with name_prefix: PREFIXwebhooks)."
  type        = string
  default     = ""
}

variable "webhook_rate" {
  description = "Cloud Tasks dispatch limits of the webhook queue."
  type = object({
    max_dispatches_per_second = number
    max_concurrent_dispatches = number
  })
  default = {
    max_dispatches_per_second = 20
    max_concurrent_dispatches = 50
  }
}

variable "webhook_retry" {
  description = "Cloud Tasks retry limits of the webhook queue (durations in seconds, e.g. \"10s\"); the delivery code also stops after 5 attempts."
  type = object({
    max_attempts       = number
    min_backoff        = string
    max_backoff        = string
    max_doublings      = number
    max_retry_duration = string
  })
  default = {
    max_attempts       = 5
    min_backoff        = "10s"
    max_backoff        = "300s"
    max_doublings      = 4
    max_retry_duration = "3600s"
  }

  validation {
    condition     = var.webhook_retry.max_attempts >= 1 && var.webhook_retry.max_attempts <= 10
    error_message = "Webhook deliveries are bounded: 1 to 10 attempts."
  }
}

variable "webhook_timeout_s" {
  description = "Bound on each phase (connect, send, wait for the answer) of one webhook POST, in seconds (STRATA_WEBHOOK_TIMEOUT_S)."
  type        = number
  default     = 10
}

variable "typesense_url" {
  description = "Base URL of the Typesense cluster (STRATA_TYPESENSE_URL)."
  type        = string
}

variable "pinecone_host" {
  description = "Data-plane host of the Pinecone index (STRATA_PINECONE_HOST)."
  type        = string
}

variable "pinecone_namespace" {
  description = "Pinecone namespace of this deployment (STRATA_PINECONE_NAMESPACE)."
  type        = string
  default     = "strata"
}

variable "embedder" {
  description = "Embedder id (STRATA_EMBEDDER): vertex (Vertex AI text embeddings with each function's own service account), openai (an OpenAI-compatible endpoint: embedding_base_url, its key in the strata-embedding-api-key secret), minilm (all-MiniLM-L6-v2 on ONNX Runtime inside each function, 384 dimensions: deploys build/functions-minilm, made by `make package EMBEDDER=minilm`), or hashing (no model: a local fallback, not semantic)."
  type        = string
  default     = "vertex"

  validation {
    condition     = contains(["vertex", "openai", "minilm", "hashing"], var.embedder)
    error_message = "embedder must be vertex, openai, minilm or hashing."
  }
}

variable "embedding_model" {
  description = "Embedding model (STRATA_EMBEDDING_MODEL); empty: text-embedding-005 for vertex, text-embedding-3-small for openai. Its output dimension is requested as embedding_dim."
  type        = string
  default     = ""
}

variable "embedding_base_url" {
  description = "OpenAI-compatible embeddings base URL (STRATA_EMBEDDING_BASE_URL); empty: the LLM endpoint (llm_base_url)."
  type        = string
  default     = ""
}

variable "vertex_location" {
  description = "Vertex AI location of the embedding model (STRATA_VERTEX_LOCATION); empty: region."
  type        = string
  default     = ""
}

variable "embedding_dim" {
  description = "Vector dimension; must equal the Pinecone index dimension (STRATA_EMBEDDING_DIM)."
  type        = number
  default     = 384
}

variable "extractor" {
  description = "Memory extractor id (STRATA_EXTRACTOR): openai (a model behind an OpenAI-compatible chat-completions endpoint; by default Gemini on Vertex AI, llm_model in llm_location, called as the capture function's own service account), or rules (the deterministic extractor: no model, also the fallback when the model fails)."
  type        = string
  default     = "openai"

  validation {
    condition     = contains(["openai", "rules"], var.extractor)
    error_message = "extractor must be openai or rules."
  }
}

variable "router" {
  description = "Consolidation router id (STRATA_ROUTER): openai (the model routes each batch; a batch the model cannot route goes to the rule router) or rules (deterministic)."
  type        = string
  default     = "openai"

  validation {
    condition     = contains(["openai", "rules"], var.router)
    error_message = "router must be openai or rules."
  }
}

variable "llm_auth" {
  description = "How the functions authenticate to the model endpoint (STRATA_LLM_AUTH): google (each calling function's own service account, an access token from the metadata server; granted roles/aiplatform.user; for Vertex AI), key (the strata-llm-api-key secret as a bearer token, for another OpenAI-compatible endpoint) or none."
  type        = string
  default     = "google"

  validation {
    condition     = contains(["google", "key", "none"], var.llm_auth)
    error_message = "llm_auth must be google, key or none."
  }
}

variable "llm_location" {
  description = "Vertex AI location of the chat model (a region such as us-central1, or global); empty: region. Used to derive llm_base_url when that is empty."
  type        = string
  default     = ""

  validation {
    condition     = var.llm_location == "" || can(regex("^(global|[a-z]+-[a-z]+[0-9]+)$", var.llm_location))
    error_message = "llm_location must be empty, global or a region name such as us-central1."
  }
}

variable "llm_base_url" {
  description = "OpenAI-compatible base URL of the chat model (STRATA_LLM_BASE_URL); empty: Vertex AI's OpenAI-compatible endpoint of this project in llm_location, https://LOCATION-aiplatform.googleapis.com/v1/projects/PROJECT/locations/LOCATION/endpoints/openapi."
  type        = string
  default     = ""

  validation {
    condition     = var.llm_base_url == "" || can(regex("^https://", var.llm_base_url))
    error_message = "llm_base_url must be empty (Vertex AI) or an https:// URL."
  }
}

variable "llm_model" {
  description = "Model name sent to the chat endpoint (STRATA_LLM_MODEL); on Vertex AI a publisher/model id such as google/gemini-2.5-flash (check it is not past its retirement date on Vertex AI's model versions page)."
  type        = string
  default     = "google/gemini-2.5-flash"

  validation {
    condition     = length(trimspace(var.llm_model)) > 0
    error_message = "llm_model must name a model."
  }
}

variable "llm_reasoning_effort" {
  description = "reasoning_effort sent with each chat request (STRATA_LLM_REASONING_EFFORT): Gemini 2.5 thinks before answering, its thinking tokens count against the 4,096-token completion budget and are billed as output; low bounds them at about 1,024 a request. Empty: not sent (the model's default thinking)."
  type        = string
  default     = "low"

  validation {
    condition     = contains(["", "none", "minimal", "low", "medium", "high"], var.llm_reasoning_effort)
    error_message = "llm_reasoning_effort must be empty, none, minimal, low, medium or high."
  }
}

variable "llm_response_format" {
  description = "How replies are constrained (STRATA_LLM_RESPONSE_FORMAT): json_schema (strict structured output, the schema sent as response_format), json_object (JSON mode, the schema in the prompt) or none; the reply is validated against the schema either way. json_object is the way out if the endpoint refuses the schema (a 400 INVALID_ARGUMENT naming a schema field makes every capture fall back to the rules)."
  type        = string
  default     = "json_schema"

  validation {
    condition     = contains(["json_schema", "json_object", "none"], var.llm_response_format)
    error_message = "llm_response_format must be json_schema, json_object or none."
  }
}

variable "function_settings" {
  description = "Per-function sizing overrides, keyed by function (api, on_conversation_complete, delete_cascade, outbox_drain, consolidate, deliver_webhook; the keys do not take name_prefix)."
  type = map(object({
    available_memory   = optional(string)
    timeout_seconds    = optional(number)
    min_instance_count = optional(number)
    max_instance_count = optional(number)
  }))
  default = {}
}

variable "labels" {
  description = "Labels applied to every labelled resource."
  type        = map(string)
  default     = { app = "strata" }
}

variable "alert_notification_channels" {
  description = "Monitoring notification channel ids (projects/P/notificationChannels/N) the alert policies notify; empty: incidents are only shown in the console."
  type        = list(string)
  default     = []
}

variable "alert_drain_lag_seconds" {
  description = "Drain lag alert: the oldest due outbox event (logged by each sweep) has waited longer than this many seconds."
  type        = number
  default     = 900
}

variable "alert_api_5xx_per_5min" {
  description = "5xx alert: more than this many API responses with a 5xx status within 5 minutes."
  type        = number
  default     = 5
}
