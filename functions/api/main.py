"""The ``api`` function: Strata's HTTP API (routes in core/api/routes.py)."""

import functions_framework
from werkzeug.exceptions import HTTPException

from core.api.app import handle_flask, http_error
from core.start_check import start_check

# Deployed (STRATA_PROVIDER_SETUP=check): fail at start, naming `strata setup`, if the provider
# schema is missing.
start_check("api")


@functions_framework.errorhandler(HTTPException)
def json_error(exc):
    return http_error(exc)


@functions_framework.http
def api(request):
    return handle_flask(request)
