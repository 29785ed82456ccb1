"""A real local HTTP server speaking the Compute Engine metadata server's protocol (what Cloud Run
functions reach for their service account's tokens), for google-auth to fetch tokens from.

Answers, as the real server does, only requests carrying ``Metadata-Flavor: Google`` (403 without)
and marks every answer ``Metadata-Flavor: Google``:

- ``GET /`` — the liveness probe google-auth's environment detection sends;
- ``GET /computeMetadata/v1/project/project-id`` — the project id, as text;
- ``GET /computeMetadata/v1/instance/service-accounts/default/?recursive=true`` — the account's
  ``{"aliases", "email", "scopes"}``;
- ``GET /computeMetadata/v1/instance/service-accounts/{default|email}/token[?scopes=...]`` —
  ``{"access_token", "expires_in", "token_type": "Bearer"}``, a new token each time
  (``ya29.local-1``, ``ya29.local-2``, ...) valid ``expires_in`` seconds;

anything else is 404. ``token_requests`` counts the token fetches, ``issued`` lists the tokens.

google-auth reads where the server is from ``GCE_METADATA_HOST`` when it is first imported and from
``GCE_METADATA_IP`` at each probe; :meth:`MetadataServer.point_google_auth` points both here for one
test (``monkeypatch``), so the production code path (``google.auth.default()`` → Compute Engine
credentials → this server) runs unchanged.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

PREFIX = "/computeMetadata/v1/"


class MetadataServer:
    def __init__(self, *, project: str = "strata-test", email: str = "strata-conv-complete@strata-test.iam.gserviceaccount.com",
                 expires_in: int = 3599) -> None:
        self.project = project
        self.email = email
        self.expires_in = expires_in
        self.issued: list[str] = []
        self.paths: list[str] = []
        self.token_scopes: list[str] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="metadata-server", daemon=True)

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def token_requests(self) -> int:
        with self._lock:
            return len(self.issued)

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def point_google_auth(self, monkeypatch: Any, config_dir: str) -> None:
        """Make ``google.auth.default()`` find this server and nothing else: no key file, no gcloud
        user credentials (``CLOUDSDK_CONFIG`` an empty directory), the metadata host and probe
        address this server's."""
        from google.auth.compute_engine import _metadata

        monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
        monkeypatch.setenv("CLOUDSDK_CONFIG", config_dir)
        monkeypatch.setenv("GCE_METADATA_IP", self.host)
        monkeypatch.setattr(_metadata, "_GCE_METADATA_HOST", self.host)

    # ----------------------------------------------------------------- protocol
    def answer(self, path: str, query: dict[str, list[str]]) -> tuple[int, Any]:
        if path == "/":
            return 200, ""
        if not path.startswith(PREFIX):
            return 404, "Not Found"
        resource = path[len(PREFIX):]
        if resource == "project/project-id":
            return 200, self.project
        accounts = ("default", self.email)
        if resource in [f"instance/service-accounts/{a}/" for a in accounts]:
            return 200, {"aliases": ["default"], "email": self.email,
                         "scopes": ["https://www.googleapis.com/auth/cloud-platform"]}
        if resource in [f"instance/service-accounts/{a}/token" for a in accounts]:
            with self._lock:
                token = f"ya29.local-{len(self.issued) + 1}"
                self.issued.append(token)
                self.token_scopes.append(",".join(query.get("scopes", [])))
            return 200, {"access_token": token, "expires_in": self.expires_in, "token_type": "Bearer"}
        return 404, "Not Found"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet test output
                return

            def do_GET(self) -> None:  # noqa: N802 - http.server naming
                url = urlsplit(self.path)
                with server._lock:
                    server.paths.append(url.path)
                if self.headers.get("Metadata-Flavor") != "Google" and url.path != "/":
                    status, body = 403, "Missing Metadata-Flavor:Google header.\n"
                else:
                    status, body = server.answer(url.path, parse_qs(url.query))
                is_json = isinstance(body, dict)
                data = (json.dumps(body) if is_json else str(body)).encode()
                self.send_response(status)
                self.send_header("Metadata-Flavor", "Google")
                self.send_header("Content-Type", "application/json" if is_json else "application/text")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


__all__ = ["MetadataServer"]
