variable "project_id" {
  description = "The Google Cloud project that hosts the function."
  type        = string
}

variable "region" {
  description = "Region of the function (its Cloud Run service lives there too)."
  type        = string
}

variable "name" {
  description = "Deployed function name (lowercase letters, digits and hyphens)."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{0,61}[a-z0-9]$", var.name))
    error_message = "name must be lowercase letters, digits and hyphens, starting with a letter."
  }
}

variable "description" {
  description = "Human description shown in the console."
  type        = string
  default     = ""
}

variable "entry_point" {
  description = "Python callable in main.py that functions-framework serves."
  type        = string
}

variable "runtime" {
  description = "Cloud Functions runtime id."
  type        = string
  default     = "python311"
}

variable "source_dir" {
  description = "Directory with the function's packaged source (main.py, core/, requirements.txt) as written by `make package`."
  type        = string
}

variable "source_bucket" {
  description = "Bucket that stores the zipped sources; objects are named by content hash so a change redeploys."
  type        = string
}

variable "service_account_id" {
  description = "account_id of the function's own runtime service account (6-30 chars)."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{4,28}[a-z0-9]$", var.service_account_id))
    error_message = "service_account_id must be 6-30 lowercase letters, digits or hyphens."
  }
}

variable "project_roles" {
  description = "Project-level predefined roles for the function's service account. Primitive roles are refused."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for r in var.project_roles : !contains(["roles/owner", "roles/editor", "roles/viewer"], r)])
    error_message = "Primitive roles (owner, editor, viewer) are not allowed; grant a predefined role."
  }
}

variable "environment_variables" {
  description = "Plain environment variables for the function."
  type        = map(string)
  default     = {}
}

variable "secret_environment_variables" {
  description = "Environment variable name => Secret Manager secret id (latest version). The module grants secretAccessor on exactly these secrets."
  type        = map(string)
  default     = {}
}

variable "available_memory" {
  description = "Memory of one instance, e.g. \"512M\"."
  type        = string
  default     = "512M"
}

variable "timeout_seconds" {
  description = "Request / event timeout in seconds."
  type        = number
  default     = 60
}

variable "min_instance_count" {
  description = "Minimum warm instances."
  type        = number
  default     = 0
}

variable "max_instance_count" {
  description = "Maximum instances (bounds cost and downstream concurrency)."
  type        = number
  default     = 10
}

variable "max_instance_request_concurrency" {
  description = "Concurrent requests one instance serves."
  type        = number
  default     = 1
}

variable "ingress_settings" {
  description = "ALLOW_ALL, ALLOW_INTERNAL_ONLY or ALLOW_INTERNAL_AND_GCLB."
  type        = string
  default     = "ALLOW_ALL"

  validation {
    condition     = contains(["ALLOW_ALL", "ALLOW_INTERNAL_ONLY", "ALLOW_INTERNAL_AND_GCLB"], var.ingress_settings)
    error_message = "ingress_settings must be ALLOW_ALL, ALLOW_INTERNAL_ONLY or ALLOW_INTERNAL_AND_GCLB."
  }
}

variable "invoker_members" {
  description = "IAM members granted roles/run.invoker on the function's service (e.g. \"allUsers\" for a public API, or a scheduler service account)."
  type        = list(string)
  default     = []
}

variable "trigger" {
  description = <<-EOT
    How the function is invoked. kind is one of:
      "http"        - plain HTTPS; callers are listed in invoker_members.
      "firestore"   - Eventarc trigger on a Firestore document path pattern (event_type, document, database, region).
      "pubsub_push" - a push subscription on `topic` with OIDC auth, a dead-letter topic and backoff.
    retry applies to the firestore kind (RETRY_POLICY_RETRY when true); the push subscription always
    retries with backoff until max_delivery_attempts, then dead-letters.
  EOT
  type = object({
    kind                       = string
    retry                      = optional(bool, true)
    event_type                 = optional(string)
    document                   = optional(string)
    database                   = optional(string, "(default)")
    region                     = optional(string)
    topic                      = optional(string)
    subscription_name          = optional(string)
    dead_letter_topic          = optional(string)
    max_delivery_attempts      = optional(number, 5)
    ack_deadline_seconds       = optional(number, 300)
    minimum_backoff            = optional(string, "10s")
    maximum_backoff            = optional(string, "600s")
    push_service_account_email = optional(string)
  })

  validation {
    condition     = contains(["http", "firestore", "pubsub_push"], var.trigger.kind)
    error_message = "trigger.kind must be http, firestore or pubsub_push."
  }

  validation {
    condition     = var.trigger.kind != "firestore" || (var.trigger.event_type != null && var.trigger.document != null && var.trigger.region != null)
    error_message = "A firestore trigger needs event_type, document and region."
  }

  validation {
    condition = var.trigger.kind != "pubsub_push" || (
      var.trigger.topic != null && var.trigger.dead_letter_topic != null && var.trigger.push_service_account_email != null
    )
    error_message = "A pubsub_push trigger needs topic, dead_letter_topic and push_service_account_email."
  }
}

variable "labels" {
  description = "Labels applied to the function."
  type        = map(string)
  default     = {}
}

variable "build_service_account" {
  description = "Full id (projects/P/serviceAccounts/EMAIL) of the service account Cloud Build uses to build the function; null uses the platform default."
  type        = string
  default     = null
}
