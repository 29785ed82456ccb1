"""The one exception tree of Strata.

::

    StrataError                     (status 500, not retryable)
    ├── BadRequest                  400 bad_request / validation_error ...
    │   └── PayloadTooLarge         413 payload_too_large
    ├── Unauthorized                401 unauthorized
    ├── NotFound                    404 not_found
    ├── Conflict                    409 conflict, stale_review, already_resolved, ...
    │   └── WritesBlocked           409 writes_blocked (account fence / incident switch)
    ├── RetryableError              503 (transient: provider down, contention, lease held)
    │   └── ProviderUnavailable     503 provider_unavailable
    └── PermanentError              500 (a provider refused for good; retrying will not help)

Every error knows its HTTP status, a snake_case ``code`` and whether retrying may help. Adapters
translate SDK exceptions into these; entry points map them to responses or to "retry me".
"""

from __future__ import annotations


class StrataError(Exception):
    status = 500
    code = "internal"
    retryable = False

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code:
            self.code = code

    def to_json(self) -> dict[str, dict[str, str]]:
        return {"error": {"code": self.code, "message": self.message}}


class BadRequest(StrataError):
    status = 400
    code = "bad_request"


class PayloadTooLarge(BadRequest):
    status = 413
    code = "payload_too_large"


class Unauthorized(StrataError):
    status = 401
    code = "unauthorized"


class NotFound(StrataError):
    status = 404
    code = "not_found"


class Conflict(StrataError):
    status = 409
    code = "conflict"


class WritesBlocked(Conflict):
    code = "writes_blocked"


class RetryableError(StrataError):
    status = 503
    code = "retryable"
    retryable = True


class ProviderUnavailable(RetryableError):
    code = "provider_unavailable"


class PermanentError(StrataError):
    status = 500
    code = "permanent"
