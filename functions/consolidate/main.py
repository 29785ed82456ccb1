"""HTTP (Cloud Scheduler fan-out and Cloud Tasks per-user passes): consolidation."""

import functions_framework

from core.functions_entry import consolidate_request


@functions_framework.http
def consolidate(request):
    return consolidate_request(request)
