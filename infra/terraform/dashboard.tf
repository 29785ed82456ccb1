# What an operator looks at (docs/operations.md, "Dashboard, uptime check and traces"): one Cloud
# Monitoring dashboard of the API's traffic and latency (Cloud Run's own metrics, and the route
# templates of the `api_request` lines), the uptime check's result, the outbox, consolidation and the
# model path (the log-based metrics of monitoring.tf); an uptime check of the API's /healthz with its
# alert; and what the functions need to send their spans to Cloud Trace (core/tracing.py: the API
# enabled and each function's service account allowed to write spans).

locals {
  # The API's host and path prefix, from its public URL (the run.app URL unless api_public_url is set).
  api_without_scheme = replace(local.api_public_url, "/^https?:\\/\\//", "")
  api_host           = split("/", local.api_without_scheme)[0]
  api_path_prefix    = trimsuffix(trimprefix(local.api_without_scheme, local.api_host), "/")

  cloud_run_api = "resource.type=\"cloud_run_revision\" AND resource.labels.service_name=\"${local.function_names.api}\""
}

# Cloud Trace: the API the exporter writes spans with (enabled beside the others when enable_apis).
resource "google_project_service" "cloud_trace" {
  count = var.enable_apis ? 1 : 0

  project            = var.project_id
  service            = "cloudtrace.googleapis.com"
  disable_on_destroy = false
}

# Each function writes its own spans (STRATA_TRACE_EXPORTER=auto is cloud_trace on Cloud Run).
resource "google_project_iam_member" "trace_writer" {
  for_each = local.function_sa

  project = var.project_id
  role    = "roles/cloudtrace.agent"
  member  = "serviceAccount:${each.value}"
}

# The API's latency by route template: the `api_request` line of every request (core/api/app.py)
# carries `route` (`/v1/memories/{memory_id}`, never the raw path) and `latency_ms`.
resource "google_logging_metric" "api_latency" {
  project         = var.project_id
  name            = "${local.metric_prefix}/api_latency"
  description     = "API request latency in milliseconds (entry to answer), by route template and status."
  filter          = "${local.cloud_run_api} AND jsonPayload.message=\"api_request\" AND jsonPayload.latency_ms>=0"
  value_extractor = "EXTRACT(jsonPayload.latency_ms)"
  label_extractors = {
    route  = "EXTRACT(jsonPayload.route)"
    status = "EXTRACT(jsonPayload.status)"
  }

  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "DISTRIBUTION"
    unit        = "ms"

    labels {
      key         = "route"
      value_type  = "STRING"
      description = "The route template of the request."
    }
    labels {
      key         = "status"
      value_type  = "STRING"
      description = "The HTTP status answered."
    }
  }

  bucket_options {
    exponential_buckets {
      num_finite_buckets = 24
      growth_factor      = 1.6
      scale              = 1
    }
  }

  depends_on = [google_project_service.services]
}

# The API answers GET /healthz without a token (core/api/routes.py): checked every minute from
# several regions over HTTPS, its body must say "ok".
resource "google_monitoring_uptime_check_config" "api" {
  project      = var.project_id
  display_name = "Strata: API ${local.function_names.api} /healthz"
  timeout      = "10s"
  period       = "60s"

  http_check {
    path           = "${local.api_path_prefix}/healthz"
    port           = 443
    use_ssl        = true
    validate_ssl   = true
    request_method = "GET"

    accepted_response_status_codes {
      status_class = "STATUS_CLASS_2XX"
    }
  }

  content_matchers {
    content = "\"ok\""
    matcher = "CONTAINS_STRING"
  }

  monitored_resource {
    type = "uptime_url"
    labels = {
      project_id = var.project_id
      host       = local.api_host
    }
  }

  depends_on = [google_project_service.services]
}

resource "google_monitoring_alert_policy" "api_uptime" {
  project               = var.project_id
  display_name          = "Strata: API down"
  combiner              = "OR"
  notification_channels = var.alert_notification_channels

  conditions {
    display_name = "the API's /healthz uptime check fails"
    condition_threshold {
      filter          = "metric.type=\"monitoring.googleapis.com/uptime_check/check_passed\" AND metric.label.check_id=\"${google_monitoring_uptime_check_config.api.uptime_check_id}\" AND resource.type=\"uptime_url\""
      comparison      = "COMPARISON_GT"
      threshold_value = 1
      duration        = "300s"

      aggregations {
        alignment_period     = "1200s"
        per_series_aligner   = "ALIGN_NEXT_OLDER"
        cross_series_reducer = "REDUCE_COUNT_FALSE"
        group_by_fields      = ["resource.label.*"]
      }
    }
  }

  documentation {
    mime_type = "text/markdown"
    content   = "GET /healthz of the API failed from more than one region for 5 minutes. See \"API down\" in ${local.runbook}: the function's revisions and logs in Cloud Run, then a deploy or a rollback."
  }
}

locals {
  # One line chart: a metric filter, how to align and reduce it, and what to group by.
  dashboard_charts = [
    { title = "API requests per second by response class", filter = "metric.type=\"run.googleapis.com/request_count\" AND ${local.cloud_run_api}", aligner = "ALIGN_RATE", reducer = "REDUCE_SUM", group_by = ["metric.label.response_code_class"] },
    { title = "API latency p50 (ms, Cloud Run)", filter = "metric.type=\"run.googleapis.com/request_latencies\" AND ${local.cloud_run_api}", aligner = "ALIGN_PERCENTILE_50", reducer = "REDUCE_MAX", group_by = [] },
    { title = "API latency p95 (ms, Cloud Run)", filter = "metric.type=\"run.googleapis.com/request_latencies\" AND ${local.cloud_run_api}", aligner = "ALIGN_PERCENTILE_95", reducer = "REDUCE_MAX", group_by = [] },
    { title = "API latency p95 by route (ms)", filter = "metric.type=\"logging.googleapis.com/user/${google_logging_metric.api_latency.name}\" AND resource.type=\"cloud_run_revision\"", aligner = "ALIGN_PERCENTILE_95", reducer = "REDUCE_MAX", group_by = ["metric.label.route"] },
    { title = "API /healthz uptime checks passed", filter = "metric.type=\"monitoring.googleapis.com/uptime_check/check_passed\" AND metric.label.check_id=\"${google_monitoring_uptime_check_config.api.uptime_check_id}\" AND resource.type=\"uptime_url\"", aligner = "ALIGN_FRACTION_TRUE", reducer = "REDUCE_MEAN", group_by = [] },
    { title = "Function instances", filter = "metric.type=\"run.googleapis.com/container/instance_count\" AND resource.type=\"cloud_run_revision\"", aligner = "ALIGN_MAX", reducer = "REDUCE_SUM", group_by = ["resource.label.service_name"] },
    { title = "Outbox drain lag p99 (s)", filter = "metric.type=\"logging.googleapis.com/user/${google_logging_metric.outbox_drain_lag.name}\" AND resource.type=\"cloud_run_revision\"", aligner = "ALIGN_PERCENTILE_99", reducer = "REDUCE_MAX", group_by = [] },
    { title = "Dead outbox events", filter = "metric.type=\"logging.googleapis.com/user/${google_logging_metric.outbox_dead_events.name}\" AND resource.type=\"cloud_run_revision\"", aligner = "ALIGN_SUM", reducer = "REDUCE_SUM", group_by = [] },
    { title = "Consolidation pass failures", filter = "metric.type=\"logging.googleapis.com/user/${google_logging_metric.consolidation_pass_failures.name}\" AND resource.type=\"cloud_run_revision\"", aligner = "ALIGN_SUM", reducer = "REDUCE_SUM", group_by = [] },
    { title = "Model calls", filter = "metric.type=\"logging.googleapis.com/user/${google_logging_metric.model_usage["model_calls"].name}\" AND resource.type=\"cloud_run_revision\"", aligner = "ALIGN_DELTA", reducer = "REDUCE_SUM", group_by = [] },
    { title = "Model fallbacks to the rules", filter = "metric.type=\"logging.googleapis.com/user/${google_logging_metric.model_usage["model_fallbacks"].name}\" AND resource.type=\"cloud_run_revision\"", aligner = "ALIGN_DELTA", reducer = "REDUCE_SUM", group_by = [] },
    { title = "API 5xx answers", filter = "metric.type=\"logging.googleapis.com/user/${google_logging_metric.api_5xx.name}\" AND resource.type=\"cloud_run_revision\"", aligner = "ALIGN_SUM", reducer = "REDUCE_SUM", group_by = [] },
  ]
}

resource "google_monitoring_dashboard" "strata" {
  project = var.project_id
  dashboard_json = jsonencode({
    displayName = "Strata (${local.resource_prefix}*)"
    mosaicLayout = {
      columns = 12
      tiles = [for index, chart in local.dashboard_charts : {
        xPos   = (index % 2) * 6
        yPos   = floor(index / 2) * 4
        width  = 6
        height = 4
        widget = {
          title = chart.title
          xyChart = {
            dataSets = [{
              plotType = "LINE"
              timeSeriesQuery = {
                timeSeriesFilter = {
                  filter = chart.filter
                  aggregation = {
                    alignmentPeriod    = "60s"
                    perSeriesAligner   = chart.aligner
                    crossSeriesReducer = chart.reducer
                    groupByFields      = chart.group_by
                  }
                }
              }
            }]
          }
        }
      }]
    }
  })

  depends_on = [google_project_service.services]
}
