"""The ``api`` function: Strata's HTTP API (routes in core/api/routes.py)."""

import functions_framework

from core.api.app import handle_flask


@functions_framework.http
def api(request):
    return handle_flask(request)
