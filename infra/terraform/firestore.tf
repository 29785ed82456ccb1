# Firestore: the database, the composite indexes the code's declared queries need, the field
# overrides, and the security rules release.
#
# `local.composite_indexes` mirrors core/adapters/firestore/queries.py:composite_indexes().
# tests/infra checks that every index the code derives is declared here, so a new query without
# its index fails the suite. Modes use the same words as the code (ASCENDING, DESCENDING,
# ARRAY_CONTAINS); Firestore appends __name__ itself.

# The database exists only in the new-project mode's plan; in the existing mode it is the app's
# `(default)` database, addressed by name (local.database).
resource "google_firestore_database" "main" {
  count = local.manage_database ? 1 : 0

  project                           = var.project_id
  name                              = var.firestore_database
  location_id                       = var.firestore_location
  type                              = "FIRESTORE_NATIVE"
  concurrency_mode                  = "OPTIMISTIC"
  app_engine_integration_mode       = "DISABLED"
  point_in_time_recovery_enablement = "POINT_IN_TIME_RECOVERY_ENABLED"
  delete_protection_state           = "DELETE_PROTECTION_ENABLED"
  deletion_policy                   = "ABANDON"

  depends_on = [google_project_service.services]
}

locals {
  # Every Strata resource on the database addresses it through this name: the created database's in
  # the new-project mode (so indexes wait for it), the app's otherwise.
  database = coalesce(one(google_firestore_database.main[*].name), var.firestore_database)

  composite_indexes = {
    # list_by_read_class: the list endpoint, newest created first (a cursor on immutable keys).
    items_read_class_created = {
      collection = "memory_items"
      scope      = "COLLECTION"
      fields = [
        { field_path = "read_class", mode = "ASCENDING" },
        { field_path = "created_at", mode = "DESCENDING" },
      ]
    }
    # list_by_read_class_and_layer: the list endpoint for one layer, newest created first.
    items_read_class_layer_created = {
      collection = "memory_items"
      scope      = "COLLECTION"
      fields = [
        { field_path = "read_class", mode = "ASCENDING" },
        { field_path = "layer", mode = "ASCENDING" },
        { field_path = "created_at", mode = "DESCENDING" },
      ]
    }
    # list_by_device: the list under a device scope, newest created first.
    items_devices_read_class_created = {
      collection = "memory_items"
      scope      = "COLLECTION"
      fields = [
        { field_path = "capture_device_ids", mode = "ARRAY_CONTAINS" },
        { field_path = "read_class", mode = "ASCENDING" },
        { field_path = "created_at", mode = "DESCENDING" },
      ]
    }
    # list_by_device_and_layer: the same for one layer.
    items_devices_read_class_layer_created = {
      collection = "memory_items"
      scope      = "COLLECTION"
      fields = [
        { field_path = "capture_device_ids", mode = "ARRAY_CONTAINS" },
        { field_path = "read_class", mode = "ASCENDING" },
        { field_path = "layer", mode = "ASCENDING" },
        { field_path = "created_at", mode = "DESCENDING" },
      ]
    }
    # items_by_read_class: most recently updated first (archive search).
    items_read_class_updated = {
      collection = "memory_items"
      scope      = "COLLECTION"
      fields = [
        { field_path = "read_class", mode = "ASCENDING" },
        { field_path = "updated_at", mode = "DESCENDING" },
      ]
    }
    # items_by_read_class_and_layer: one layer, most recently updated first (Long-term neighbours).
    items_read_class_layer_updated = {
      collection = "memory_items"
      scope      = "COLLECTION"
      fields = [
        { field_path = "read_class", mode = "ASCENDING" },
        { field_path = "layer", mode = "ASCENDING" },
        { field_path = "updated_at", mode = "DESCENDING" },
      ]
    }
    # long_term_by_age: Long-term age-out to Archive, oldest first.
    items_read_class_layer_updated_asc = {
      collection = "memory_items"
      scope      = "COLLECTION"
      fields = [
        { field_path = "read_class", mode = "ASCENDING" },
        { field_path = "layer", mode = "ASCENDING" },
        { field_path = "updated_at", mode = "ASCENDING" },
      ]
    }
    # pending_route_items: a user's pending Short-term items, nearest deadline first.
    items_pending_route_expires = {
      collection = "memory_items"
      scope      = "COLLECTION"
      fields = [
        { field_path = "pending_route", mode = "ASCENDING" },
        { field_path = "expires_at", mode = "ASCENDING" },
      ]
    }
    # pending_route_items_all_users: `strata consolidate` backfill of users the registry lacks.
    items_pending_route_expires_group = {
      collection = "memory_items"
      scope      = "COLLECTION_GROUP"
      fields = [
        { field_path = "pending_route", mode = "ASCENDING" },
        { field_path = "expires_at", mode = "ASCENDING" },
      ]
    }
    # outbox_due: a user's due events.
    outbox_state_due = {
      collection = "memory_outbox"
      scope      = "COLLECTION"
      fields = [
        { field_path = "state", mode = "ASCENDING" },
        { field_path = "due_at", mode = "ASCENDING" },
      ]
    }
    # outbox_due_all_users: the sweep across users.
    outbox_state_due_group = {
      collection = "memory_outbox"
      scope      = "COLLECTION_GROUP"
      fields = [
        { field_path = "state", mode = "ASCENDING" },
        { field_path = "due_at", mode = "ASCENDING" },
      ]
    }
    # commits_by_memory: a memory's ledger history, in commit order.
    commits_memory_ids_sequence = {
      collection = "memory_commits"
      scope      = "COLLECTION"
      fields = [
        { field_path = "memory_ids", mode = "ARRAY_CONTAINS" },
        { field_path = "sequence", mode = "ASCENDING" },
      ]
    }
    # review_open: open review entries, newest first.
    review_status_created = {
      collection = "memory_review_queue"
      scope      = "COLLECTION"
      fields = [
        { field_path = "status", mode = "ASCENDING" },
        { field_path = "created_at", mode = "DESCENDING" },
      ]
    }
    # reviews_expiring: open review entries past their deadline, oldest deadline first.
    review_status_expires = {
      collection = "memory_review_queue"
      scope      = "COLLECTION"
      fields = [
        { field_path = "status", mode = "ASCENDING" },
        { field_path = "expires_at", mode = "ASCENDING" },
      ]
    }
  }
}

resource "google_firestore_index" "composite" {
  for_each = local.composite_indexes

  project     = var.project_id
  database    = local.database
  collection  = each.value.collection
  query_scope = each.value.scope

  dynamic "fields" {
    for_each = each.value.fields
    content {
      field_path   = fields.value.field_path
      order        = fields.value.mode == "ARRAY_CONTAINS" ? null : fields.value.mode
      array_config = fields.value.mode == "ARRAY_CONTAINS" ? "CONTAINS" : null
    }
  }
}

# Single-field overrides. An override replaces Firestore's automatic settings for that field, so
# each one lists every index the field keeps.

# items_by_source (conversation delete, complete-source replacement) relies on array-contains on
# source_ids; declared so that it survives any change to automatic indexing.
# Developer webhook delivery records (one per delivered conversation, ids and status only) expire
# 30 days after they were enqueued: Firestore's TTL policy deletes them by `expire_at`.
resource "google_firestore_field" "webhook_deliveries_ttl" {
  project    = var.project_id
  database   = local.database
  collection = "webhook_deliveries"
  field      = "expire_at"

  ttl_config {}

  index_config {}
}

# Deletion receipts (ids and times only: users/{uid}/deletion_receipts and the account wipe's
# top-level deletion_receipts, one collection id for both) are kept 30 days: the TTL policy deletes
# them by `expire_at`. Receipts are read by id only, so neither the field nor the id list
# (`memory_ids`, up to a cascade's whole cohort) keeps an index.
resource "google_firestore_field" "deletion_receipts_ttl" {
  project    = var.project_id
  database   = local.database
  collection = "deletion_receipts"
  field      = "expire_at"

  ttl_config {}

  index_config {}
}

# A keyed conversation create's first answer (users/{uid}/request_keys: a fingerprint and an id) is
# kept a week for retries; the per-user rate-limit counters (top-level rate_limits: a count under a
# hash of the uid) outlive their window by one window. The TTL policy deletes both by `expire_at`.
resource "google_firestore_field" "request_keys_ttl" {
  project    = var.project_id
  database   = local.database
  collection = "request_keys"
  field      = "expire_at"

  ttl_config {}

  index_config {}
}

resource "google_firestore_field" "rate_limits_ttl" {
  project    = var.project_id
  database   = local.database
  collection = "rate_limits"
  field      = "expire_at"

  ttl_config {}

  index_config {}
}

resource "google_firestore_field" "deletion_receipts_memory_ids" {
  project    = var.project_id
  database   = local.database
  collection = "deletion_receipts"
  field      = "memory_ids"

  index_config {}
}

resource "google_firestore_field" "items_source_ids" {
  project    = var.project_id
  database   = local.database
  collection = "memory_items"
  field      = "source_ids"

  index_config {
    indexes {
      array_config = "CONTAINS"
      query_scope  = "COLLECTION"
    }
  }
}

# pending_route: per-user equality (collection) plus a collection-group index for operators'
# cross-user checks (`where pending_route == true` across all users).
resource "google_firestore_field" "items_pending_route" {
  project    = var.project_id
  database   = local.database
  collection = "memory_items"
  field      = "pending_route"

  index_config {
    indexes {
      order       = "ASCENDING"
      query_scope = "COLLECTION"
    }
    indexes {
      order       = "DESCENDING"
      query_scope = "COLLECTION"
    }
    indexes {
      order       = "ASCENDING"
      query_scope = "COLLECTION_GROUP"
    }
  }
}

# Outbox state: outbox_by_state (account purge fence) per user, and across users for the sweep
# and operators' held-event checks.
resource "google_firestore_field" "outbox_state" {
  project    = var.project_id
  database   = local.database
  collection = "memory_outbox"
  field      = "state"

  index_config {
    indexes {
      order       = "ASCENDING"
      query_scope = "COLLECTION"
    }
    indexes {
      order       = "DESCENDING"
      query_scope = "COLLECTION"
    }
    indexes {
      order       = "ASCENDING"
      query_scope = "COLLECTION_GROUP"
    }
  }
}

resource "google_firestore_field" "outbox_due_at" {
  project    = var.project_id
  database   = local.database
  collection = "memory_outbox"
  field      = "due_at"

  index_config {
    indexes {
      order       = "ASCENDING"
      query_scope = "COLLECTION"
    }
    indexes {
      order       = "DESCENDING"
      query_scope = "COLLECTION"
    }
    indexes {
      order       = "ASCENDING"
      query_scope = "COLLECTION_GROUP"
    }
  }
}

# Memory content (up to 8,000 characters) is never queried: exempt it from indexing, which saves
# index writes on every apply transaction.
resource "google_firestore_field" "items_content" {
  project    = var.project_id
  database   = local.database
  collection = "memory_items"
  field      = "content"

  index_config {}
}

# Security rules, new-project mode only: infra/firestore.rules is Strata's fragment
# (infra/rules/strata.rules) merged into an empty app file, the same file the Firestore emulator
# loads. In the existing mode the app releases its own merged file (docs/deploy.md).
resource "google_firebaserules_ruleset" "firestore" {
  count   = local.manage_rules ? 1 : 0
  project = var.project_id

  source {
    files {
      name = "firestore.rules"
      # Strata's match on the conversations where the app writes them (conversations_path), as
      # `strata rules merge --conversations-path` writes it; the default path leaves the file as is.
      content = replace(file(local.rules_path), local.rules_match_default, local.rules_match)
    }
  }

  lifecycle {
    create_before_destroy = true
  }

  depends_on = [google_firebase_project.this, google_firestore_database.main]
}

resource "google_firebaserules_release" "firestore" {
  count        = local.manage_rules ? 1 : 0
  project      = var.project_id
  name         = var.firestore_database == "(default)" ? "cloud.firestore" : "cloud.firestore/${var.firestore_database}"
  ruleset_name = "projects/${var.project_id}/rulesets/${google_firebaserules_ruleset.firestore[count.index].name}"

  lifecycle {
    replace_triggered_by = [google_firebaserules_ruleset.firestore[count.index]]
  }
}
