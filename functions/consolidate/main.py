"""HTTP (Cloud Scheduler fan-out and Cloud Tasks per-user passes): consolidation."""

import functions_framework

from core.functions_entry import consolidate_request
from core.start_check import start_check

# Deployed (STRATA_PROVIDER_SETUP=check): fail at start, naming `strata setup`, if the provider
# schema is missing.
start_check("consolidate")


@functions_framework.http
def consolidate(request):
    return consolidate_request(request)
