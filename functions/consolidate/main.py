"""HTTP (Cloud Scheduler fan-out and Cloud Tasks per-user passes): consolidation.

Webhook deliveries are the deliver_webhook function's."""

import functions_framework

from core import functions_entry
from core.start_check import start_check

# Deployed (STRATA_PROVIDER_SETUP=check): fail at start, naming `strata setup`, if the provider
# schema is missing.
start_check("consolidate")


@functions_framework.http
def consolidate(request):
    return functions_entry.consolidate(request)
