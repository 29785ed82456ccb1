"""The one exception tree of Strata: every error class of the code base is defined here.

::

    StrataError                       500 internal           (not retryable unless marked R)
    ├── BadRequest                    400 bad_request / validation_error ...
    │   ├── PayloadTooLarge           413 payload_too_large
    │   ├── UnsupportedMediaType      415 unsupported_media_type
    │   ├── GroundingError            400 grounding_failed (a candidate cites no single segment)
    │   ├── TargetRefused             400 webhook_url_refused (webhook URL or address not public)
    │   ├── UnknownJob                400 unknown_job (`strata scheduler` named no Terraform job)
    │   └── KeyReused                 422 idempotency_key_reused (an Idempotency-Key sent with another body)
    ├── Unauthorized                  401 unauthorized
    ├── Forbidden                     403 forbidden, key_scope, id_token_required (a personal key used beyond its scope)
    ├── NotFound                      404 not_found
    ├── Locked                        402 memory_locked (a locked historical memory, deleted one by one)
    ├── MethodNotAllowed              405 method_not_allowed (carries the route's ``allowed`` methods)
    ├── RateLimited                   429 rate_limited R (a user's requests of one kind over the limit)
    ├── Conflict                      409 conflict, stale_review, already_resolved, ...
    │   ├── WritesBlocked             409 writes_blocked (account fence)
    │   │   └── WritesDisabled        503 writes_disabled R (incident switch: nothing written)
    │   ├── GenerationChanged         409 account_generation_changed (the account was wiped since
    │   │                                 this work started: acknowledge it, never retry it)
    │   ├── ConversationDeleted       409 conversation_deleted (a capture met the delete cascade)
    │   ├── LineageMoved              409 lineage_moved R (a delete's lineage changed under it)
    │   ├── CohortMoved               409 cohort_moved R (a source's live cohort changed under a page)
    │   └── LegacyCollision           409 legacy_collision (one id in both historical collections, two texts)
    ├── RetryableError                503 retryable R (transient: provider down, contention, lease held)
    │   ├── ProviderUnavailable       503 provider_unavailable R
    │   │   └── LLMUnavailable        503 llm_unavailable R
    │   │       └── LLMTimeout        503 llm_timeout R
    │   ├── LLMMalformedReply         503 llm_malformed_reply R
    │   │   └── LLMTruncatedReply     503 llm_truncated_reply R
    │   ├── LeaseHeld                 503 projection_in_progress R (an outbox lease is still live)
    │   ├── WebhookUnreachable        503 webhook_unreachable R
    │   └── DeliveryPending           503 webhook_delivery_pending R (Cloud Tasks retries the delivery)
    ├── PermanentError                500 permanent (a provider refused for good; retrying will not help)
    │   ├── LLMRejected               500 llm_rejected
    │   └── DimensionMismatch         500 embedding_dimension_mismatch
    ├── IllegalState                  500 illegal_state (a stored combination outside the legal-states table: a bug)
    ├── AdmissionRefused              500 admission_refused (a Long-term write without its receipt)
    ├── InvalidRouterOutput           500 invalid_router_output (the router proposed no legal route)
    ├── ConfigurationError            500 invalid_configuration (a setting's variable does not parse)
    └── ToolingError                  500 (developer tooling only; never raised by a function)
        ├── PackagingError            500 packaging_failed
        ├── StackError                500 stack_failed (the local stack would not start or stop)
        ├── FaultError                500 fault_failed (a stack component would not stop or restart)
        └── ApiFailure                4xx/500 pinecone_api (the local Pinecone endpoint's error reply)

Every error knows its HTTP status, a snake_case ``code`` and whether retrying may help. Adapters
translate SDK exceptions into these; entry points map them to responses or to "retry me". The
modules that raise an error re-export it under its old name (``core.domain.states.IllegalState``
and the like keep working).
"""

from __future__ import annotations


class StrataError(Exception):
    status = 500
    code = "internal"
    retryable = False
    # Seconds a client should wait before calling again; the API sends it as ``Retry-After`` on
    # a 429 or 503 answer.
    retry_after_s = 1

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code:
            self.code = code

    def to_json(self) -> dict[str, dict[str, str]]:
        return {"error": {"code": self.code, "message": self.message}}


# --------------------------------------------------------------------------- 4xx: the request
class BadRequest(StrataError):
    status = 400
    code = "bad_request"


class PayloadTooLarge(BadRequest):
    status = 413
    code = "payload_too_large"


class UnsupportedMediaType(BadRequest):
    status = 415
    code = "unsupported_media_type"


class GroundingError(BadRequest):
    """A candidate could not be bound to exactly one processed segment; nothing may be applied."""

    code = "grounding_failed"


class TargetRefused(BadRequest):
    """The URL or one of its resolved addresses is not an acceptable webhook target."""

    code = "webhook_url_refused"


class UnknownJob(BadRequest):
    """A scheduler command named a job Terraform does not declare."""

    code = "unknown_job"


class KeyReused(BadRequest):
    """An ``Idempotency-Key`` that already answered a request with another body: not a retry."""

    status = 422
    code = "idempotency_key_reused"


class RateLimited(StrataError):
    """The user's requests of one kind went over the window's limit: nothing was done; call again
    after ``retry_after_s`` (the ``Retry-After`` header)."""

    status = 429
    code = "rate_limited"
    retryable = True

    def __init__(self, message: str, *, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = max(1, retry_after_s)


class Unauthorized(StrataError):
    status = 401
    code = "unauthorized"


class Forbidden(StrataError):
    """Authenticated, but the credential does not allow this: a ``read`` key on a write, or a
    personal key on a route that takes an ID token only."""

    status = 403
    code = "forbidden"


class NotFound(StrataError):
    status = 404
    code = "not_found"


class Locked(StrataError):
    """A locked historical memory (the original's paywall lock) cannot be deleted one by one."""

    status = 402
    code = "memory_locked"


class MethodNotAllowed(StrataError):
    status = 405
    code = "method_not_allowed"

    def __init__(self, message: str, allowed: list[str]) -> None:
        super().__init__(message)
        self.allowed = allowed


# --------------------------------------------------------------------------- 409: the state moved
class Conflict(StrataError):
    status = 409
    code = "conflict"


class WritesBlocked(Conflict):
    code = "writes_blocked"


class WritesDisabled(WritesBlocked):
    """The global ``writes_disabled`` incident switch is on: nothing was written; the same request
    will succeed once the switch is off (so triggers retry instead of dropping the work)."""

    status = 503
    code = "writes_disabled"
    retryable = True
    retry_after_s = 30  # an operator's incident switch: not over in a second


class GenerationChanged(Conflict):
    code = "account_generation_changed"


class ConversationDeleted(Conflict):
    """A capture found its conversation deleted (or its delete cascade running): it writes nothing."""

    code = "conversation_deleted"


class LineageMoved(Conflict):
    """A memory delete read a lineage that changed before its transaction: read again."""

    code = "lineage_moved"
    retryable = True


class CohortMoved(Conflict):
    """A page of a source's live cohort changed before its transaction: read the page again."""

    code = "cohort_moved"
    retryable = True


class LegacyCollision(Conflict):
    """One id in both historical collections with different text: left out, never guessed."""

    code = "legacy_collision"


# --------------------------------------------------------------------------- 503: try again
class RetryableError(StrataError):
    status = 503
    code = "retryable"
    retryable = True


class ProviderUnavailable(RetryableError):
    code = "provider_unavailable"


class LLMUnavailable(ProviderUnavailable):
    code = "llm_unavailable"


class LLMTimeout(LLMUnavailable):
    code = "llm_timeout"


class LLMMalformedReply(RetryableError):
    code = "llm_malformed_reply"


class LLMTruncatedReply(LLMMalformedReply):
    code = "llm_truncated_reply"


class LeaseHeld(RetryableError):
    """Projection work for the account still holds a live outbox lease."""

    code = "projection_in_progress"
    retry_after_s = 5


class WebhookUnreachable(RetryableError):
    code = "webhook_unreachable"


class DeliveryPending(RetryableError):
    """The receiver did not take the delivery yet; Cloud Tasks retries it."""

    code = "webhook_delivery_pending"


# --------------------------------------------------------------------------- 500: permanent
class PermanentError(StrataError):
    status = 500
    code = "permanent"


class LLMRejected(PermanentError):
    code = "llm_rejected"


class DimensionMismatch(PermanentError):
    """The embedder's vectors do not have the configured (index) dimension."""

    code = "embedding_dimension_mismatch"


class IllegalState(StrataError):
    """A stored combination outside the legal-states table (a bug, never user input)."""

    code = "illegal_state"


class AdmissionRefused(StrataError):
    """A Long-term write without a receipt for its revision and its graph assertion."""

    code = "admission_refused"


class InvalidRouterOutput(StrataError):
    code = "invalid_router_output"


class ConfigurationError(StrataError):
    """An environment variable of :mod:`core.config` does not parse or is out of range (startup)."""

    code = "invalid_configuration"


# --------------------------------------------------------------------------- developer tooling
class ToolingError(StrataError):
    """Raised by the packager, the local stack and its fault injection; never by a function."""

    code = "tooling_failed"


class PackagingError(ToolingError):
    """The sources cannot be packaged (a function is missing, a dependency is unpinned...)."""

    code = "packaging_failed"


class StackError(ToolingError):
    """The stack could not be started, or could not be stopped cleanly."""

    code = "stack_failed"


class FaultError(ToolingError):
    """A component could not be stopped or started again."""

    code = "fault_failed"


class ApiFailure(ToolingError):
    """An error the local Pinecone-compatible endpoint answers in Pinecone's JSON error shape."""

    code = "pinecone_api"
    GRPC_CODES = {400: 3, 401: 16, 404: 5, 409: 6, 413: 8, 500: 13}

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status

    def body(self) -> dict[str, object]:
        return {"code": self.GRPC_CODES.get(self.status, 2), "message": self.message, "details": []}
