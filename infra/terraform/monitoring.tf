# Log-based metrics and alert policies an operator acts on; docs/runbook.md names the command that
# repairs each. The functions write one JSON object per log line (core/logs.py), which Cloud
# Logging stores as jsonPayload: `message` is the event name, the other fields are the event's.

locals {
  runbook = "docs/runbook.md in the Strata repository"
}

# A drain dead-lettered outbox events: a provider has failed for the whole attempt budget.
resource "google_logging_metric" "outbox_dead_events" {
  project     = var.project_id
  name        = "${local.metric_prefix}/outbox_dead_events"
  description = "Outbox drains that dead-lettered at least one projection event."
  filter      = "resource.type=\"cloud_run_revision\" AND resource.labels.service_name=\"${local.function_names.outbox_drain}\" AND jsonPayload.message=\"drain\" AND jsonPayload.dead>0"

  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "INT64"
    unit        = "1"
  }

  depends_on = [google_project_service.services]
}

# Drain lag: every sweep logs how long the oldest due event has waited (oldest_due_age_s).
resource "google_logging_metric" "outbox_drain_lag" {
  project         = var.project_id
  name            = "${local.metric_prefix}/outbox_drain_lag"
  description     = "Age in seconds of the oldest due outbox event, as each scheduled sweep sees it."
  filter          = "resource.type=\"cloud_run_revision\" AND resource.labels.service_name=\"${local.function_names.outbox_drain}\" AND jsonPayload.message=\"drain\" AND jsonPayload.oldest_due_age_s>=0"
  value_extractor = "EXTRACT(jsonPayload.oldest_due_age_s)"

  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "DISTRIBUTION"
    unit        = "s"
  }

  bucket_options {
    exponential_buckets {
      num_finite_buckets = 20
      growth_factor      = 2
      scale              = 1
    }
  }

  depends_on = [google_project_service.services]
}

# A consolidation pass raised (the Cloud Task is retried; repeated failures leave items pending).
resource "google_logging_metric" "consolidation_pass_failures" {
  project     = var.project_id
  name        = "${local.metric_prefix}/consolidation_pass_failures"
  description = "Consolidation passes that failed with an error."
  filter      = "resource.type=\"cloud_run_revision\" AND resource.labels.service_name=\"${local.function_names.consolidate}\" AND jsonPayload.message=\"consolidation_pass_failed\""

  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "INT64"
    unit        = "1"
  }

  depends_on = [google_project_service.services]
}

# API responses with a 5xx status (Cloud Run's request log).
resource "google_logging_metric" "api_5xx" {
  project     = var.project_id
  name        = "${local.metric_prefix}/api_5xx"
  description = "API requests answered with a 5xx status."
  filter      = "resource.type=\"cloud_run_revision\" AND resource.labels.service_name=\"${local.function_names.api}\" AND httpRequest.status>=500"

  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "INT64"
    unit        = "1"
  }

  depends_on = [google_project_service.services]
}

resource "google_monitoring_alert_policy" "outbox_dead_events" {
  project               = var.project_id
  display_name          = "Strata: dead outbox events"
  combiner              = "OR"
  notification_channels = var.alert_notification_channels

  conditions {
    display_name = "a drain dead-lettered projection events"
    condition_threshold {
      filter          = "metric.type=\"logging.googleapis.com/user/${google_logging_metric.outbox_dead_events.name}\" AND resource.type=\"cloud_run_revision\""
      comparison      = "COMPARISON_GT"
      threshold_value = 0
      duration        = "0s"
      aggregations {
        alignment_period     = "300s"
        per_series_aligner   = "ALIGN_SUM"
        cross_series_reducer = "REDUCE_SUM"
      }
    }
  }

  documentation {
    mime_type = "text/markdown"
    content   = "Projection events went dead after the whole attempt budget. See \"Dead outbox events\" in ${local.runbook}: `strata outbox list --dead`, fix the provider, `strata outbox redrive`, then `strata doctor --all`."
  }
}

resource "google_monitoring_alert_policy" "outbox_drain_lag" {
  project               = var.project_id
  display_name          = "Strata: outbox drain lag"
  combiner              = "OR"
  notification_channels = var.alert_notification_channels

  conditions {
    display_name = "the oldest due outbox event is older than the threshold"
    condition_threshold {
      filter          = "metric.type=\"logging.googleapis.com/user/${google_logging_metric.outbox_drain_lag.name}\" AND resource.type=\"cloud_run_revision\""
      comparison      = "COMPARISON_GT"
      threshold_value = var.alert_drain_lag_seconds
      duration        = "600s"
      aggregations {
        alignment_period     = "300s"
        per_series_aligner   = "ALIGN_PERCENTILE_99"
        cross_series_reducer = "REDUCE_MAX"
      }
    }
  }

  documentation {
    mime_type = "text/markdown"
    content   = "Outbox events are waiting longer than ${var.alert_drain_lag_seconds}s. See \"Drain lag\" in ${local.runbook}: check the projection_disabled switch and the providers, then `strata outbox drain`."
  }
}

resource "google_monitoring_alert_policy" "consolidation_pass_failures" {
  project               = var.project_id
  display_name          = "Strata: consolidation pass failures"
  combiner              = "OR"
  notification_channels = var.alert_notification_channels

  conditions {
    display_name = "consolidation passes failed"
    condition_threshold {
      filter          = "metric.type=\"logging.googleapis.com/user/${google_logging_metric.consolidation_pass_failures.name}\" AND resource.type=\"cloud_run_revision\""
      comparison      = "COMPARISON_GT"
      threshold_value = 0
      duration        = "0s"
      aggregations {
        alignment_period     = "600s"
        per_series_aligner   = "ALIGN_SUM"
        cross_series_reducer = "REDUCE_SUM"
      }
    }
  }

  documentation {
    mime_type = "text/markdown"
    content   = "A consolidation pass raised. See \"Consolidation pass failures\" in ${local.runbook}: read the failure's log entry (uid_hash, exception), then `strata consolidate --uid UID`."
  }
}

resource "google_monitoring_alert_policy" "api_5xx" {
  project               = var.project_id
  display_name          = "Strata: API 5xx rate"
  combiner              = "OR"
  notification_channels = var.alert_notification_channels

  conditions {
    display_name = "API 5xx responses above the threshold"
    condition_threshold {
      filter          = "metric.type=\"logging.googleapis.com/user/${google_logging_metric.api_5xx.name}\" AND resource.type=\"cloud_run_revision\""
      comparison      = "COMPARISON_GT"
      threshold_value = var.alert_api_5xx_per_5min
      duration        = "0s"
      aggregations {
        alignment_period     = "300s"
        per_series_aligner   = "ALIGN_SUM"
        cross_series_reducer = "REDUCE_SUM"
      }
    }
  }

  documentation {
    mime_type = "text/markdown"
    content   = "The API answered more than ${var.alert_api_5xx_per_5min} 5xx in 5 minutes. See \"API 5xx\" in ${local.runbook}: find the trace in the api_request / error lines, check `strata doctor` and the incident switches."
  }
}

# The model path's usage (core/metering.py): every capture and consolidation pass that called the
# model, or fell back to the rules, logs model_calls, model_failures, prompt_tokens,
# completion_tokens, model_fallbacks and model_cost_usd (an estimate at list prices; absent for a
# model without one) on its `capture` / `consolidation_pass` line. One distribution per field, by
# event: its sum over a window is the calls, tokens, fallbacks and dollars of that window, its count
# the captures or passes that used the model.
locals {
  model_usage = {
    model_calls       = { unit = "1", scale = 1, what = "Model calls" }
    model_failures    = { unit = "1", scale = 1, what = "Model answers not usable: extraction attempts or routing batches that failed (timeout, quota, 5xx, refusal, malformed reply, ungrounded quotes)" }
    prompt_tokens     = { unit = "1", scale = 16, what = "Prompt tokens sent to the model" }
    completion_tokens = { unit = "1", scale = 16, what = "Completion tokens the model answered" }
    model_fallbacks   = { unit = "1", scale = 1, what = "Times the rule extractor or rule router took over from the model" }
    model_cost_usd    = { unit = "USD", scale = 0.000001, what = "Estimated model cost at list prices" }
  }
}

resource "google_logging_metric" "model_usage" {
  for_each = local.model_usage

  project         = var.project_id
  name            = "${local.metric_prefix}/${each.key}"
  description     = "${each.value.what}, per capture or consolidation pass that used the model."
  filter          = "resource.type=\"cloud_run_revision\" AND jsonPayload.message=(\"capture\" OR \"consolidation_pass\") AND jsonPayload.${each.key}>=0"
  value_extractor = "EXTRACT(jsonPayload.${each.key})"
  label_extractors = {
    event = "EXTRACT(jsonPayload.message)"
  }

  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "DISTRIBUTION"
    unit        = each.value.unit

    labels {
      key         = "event"
      value_type  = "STRING"
      description = "capture or consolidation_pass"
    }
  }

  bucket_options {
    exponential_buckets {
      num_finite_buckets = 24
      growth_factor      = 2
      scale              = each.value.scale
    }
  }

  depends_on = [google_project_service.services]
}
