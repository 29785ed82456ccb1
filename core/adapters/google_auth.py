"""Access tokens of the process's own Google identity, for the Vertex AI adapters (no key stored).

:func:`adc_token` returns a callable giving a bearer token from Application Default Credentials:
on Cloud Run functions that is the function's own service account, whose token google-auth fetches
from the metadata server (``GET /computeMetadata/v1/instance/service-accounts/default/token`` with
``Metadata-Flavor: Google``). The credentials object is built once per token source and refreshed
only when its token is missing or expires within google-auth's refresh threshold (3 min 45 s in
google-auth 2.x): every call in between reuses the cached token. The embedder
(:class:`core.adapters.embeddings.VertexEmbedder`) and the chat client
(:class:`core.adapters.llm.ChatClient` with ``STRATA_LLM_AUTH=google``) use this one source.

No credentials at all is a :class:`~core.errors.PermanentError` (a deployment fault, named);
a metadata server that does not answer is :class:`~core.errors.ProviderUnavailable` (retried).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from core.errors import PermanentError, ProviderUnavailable

CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform"


def adc_token(scope: str = CLOUD_PLATFORM, *, what: str = "Vertex AI") -> Callable[[], str]:
    """A bearer token source from Application Default Credentials, refreshed when it has expired
    (or is about to). ``what`` names the caller in its errors."""
    lock = threading.Lock()
    state: dict[str, Any] = {}

    def token() -> str:
        with lock:
            credentials = state.get("credentials")
            if credentials is None:
                import google.auth
                import google.auth.exceptions

                try:
                    credentials, _ = google.auth.default(scopes=[scope])
                except google.auth.exceptions.DefaultCredentialsError as exc:
                    raise PermanentError(f"{what} needs Application Default Credentials (the function's "
                                         f"service account): {exc}") from exc
                state["credentials"] = credentials
            if not credentials.valid:
                from google.auth.transport.requests import Request

                try:
                    credentials.refresh(Request())
                except Exception as exc:  # noqa: BLE001 - the metadata server or token endpoint is down
                    raise ProviderUnavailable(f"could not refresh the {what} access token: {exc}") from exc
            return str(credentials.token)

    return token


__all__ = ["CLOUD_PLATFORM", "adc_token"]
