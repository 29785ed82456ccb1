"""KeywordIndex on a real Typesense server, through the ``typesense`` SDK.

The collection (``memories`` by default) has an explicit schema and is created idempotently; a
concurrent creator answering 409 is fine. Document ids are ``ProjectionDoc.provider_id``.

Cleanup is metadata-authoritative: before an upsert the adapter deletes every row matching
``uid:=X && memory_id:=[...]``, so a legacy bare-id or ``{uid}-{memory_id}`` row of the same memory
cannot survive next to the new one; deletes and purges filter the same way. Upserts use the bulk
import endpoint, whose 200 answer may still hold per-document failures: each line is checked.

Errors: connection failures, timeouts, 429 and 5xx become :class:`ProviderUnavailable`; other 4xx
and rejected documents become :class:`PermanentError`.

Search scores: Typesense's ``text_match`` is an opaque 64-bit rank. A :class:`Hit` score is
``0.8 * (query tokens matched / query tokens) + 0.2 * (text_match / best text_match of the page)``,
so it lies in 0..1, is 1.0 only for the best hit matching every query token, and is comparable
across one result page (not across queries).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx
import typesense
from typesense import exceptions as ts_errors

from core.errors import PermanentError, ProviderUnavailable
from core.ports import Hit, KeywordIndex, ProjectionDoc, ProviderRecord

SCHEMA_FIELDS: list[dict[str, Any]] = [
    {"name": "uid", "type": "string", "facet": True},
    {"name": "memory_id", "type": "string"},
    {"name": "layer", "type": "string", "facet": True},
    {"name": "revision", "type": "int64"},
    {"name": "content", "type": "string"},
    {"name": "category", "type": "string", "facet": True},
    {"name": "updated_at", "type": "float"},
]
FILTER_CHUNK = 100
IMPORT_BATCH = 200
MAX_PER_PAGE = 250
_TOKEN = re.compile(r"\w+", re.UNICODE)

T = TypeVar("T")


def _chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _quote(value: str) -> str:
    """A filter value wrapped in backticks, so ``:``, ``,``, ``&`` and spaces are literal."""
    if "`" in value:
        raise PermanentError(f"filter value {value!r} contains a backtick, which Typesense cannot escape")
    return f"`{value}`"


def _any_of(field: str, values: Sequence[str]) -> str:
    return f"{field}:=[{','.join(_quote(v) for v in values)}]"


def _status_of(exc: BaseException) -> int:
    status = exc.args[0] if exc.args else None
    return status if isinstance(status, int) else 0


def _translate(exc: BaseException, action: str) -> Exception:
    if isinstance(exc, httpx.HTTPError) or type(exc).__module__.startswith(("httpx", "httpcore")):
        return ProviderUnavailable(f"typesense unreachable during {action}: {exc}")
    if isinstance(exc, (ts_errors.ServerError, ts_errors.ServiceUnavailable, ts_errors.HTTPStatus0Error,
                        ts_errors.Timeout)):
        return ProviderUnavailable(f"typesense unavailable during {action}: {exc}")
    status = _status_of(exc)
    if status in (408, 429) or status >= 500:
        return ProviderUnavailable(f"typesense {status} during {action}: {exc}")
    if isinstance(exc, (ts_errors.RequestMalformed, ts_errors.RequestUnauthorized, ts_errors.RequestForbidden,
                        ts_errors.ObjectNotFound, ts_errors.ObjectUnprocessable, ts_errors.ObjectAlreadyExists,
                        ts_errors.InvalidParameter, ts_errors.ConfigError)) or 400 <= status < 500:
        return PermanentError(f"typesense refused {action}: {exc}")
    # "All nodes are unhealthy" and other client-side failures with no status: try again later.
    return ProviderUnavailable(f"typesense failed during {action}: {exc}")


class TypesenseIndex(KeywordIndex):
    """One Typesense collection of ProjectionDocs."""

    def __init__(
        self,
        url: str,
        api_key: str,
        collection: str = "memories",
        *,
        timeout_s: float = 10.0,
        num_retries: int = 1,
        retry_interval_s: float = 0.2,
    ) -> None:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        if not parts.hostname:
            raise PermanentError(f"bad Typesense URL {url!r}")
        protocol = parts.scheme or "http"
        port = parts.port or (443 if protocol == "https" else 8108)
        self.collection = collection
        self._export_url = f"{protocol}://{parts.hostname}:{port}{parts.path.rstrip('/')}"
        self._api_key, self._timeout_s = api_key, timeout_s
        self._client = typesense.Client(
            {
                "api_key": api_key,
                "nodes": [{"host": parts.hostname, "port": port, "protocol": protocol, "path": parts.path or ""}],
                "connection_timeout_seconds": timeout_s,
                "num_retries": num_retries,
                "retry_interval_seconds": retry_interval_s,
                "healthcheck_interval_seconds": 1,
            }
        )
        self._ready = False

    # ------------------------------------------------------------------ helpers
    def _call(self, action: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        try:
            return fn(*args, **kwargs)
        except (ts_errors.TypesenseClientError, httpx.HTTPError) as exc:
            raise _translate(exc, action) from exc
        except Exception as exc:
            if type(exc).__module__.startswith(("httpx", "httpcore")):  # httpx2 and friends
                raise _translate(exc, action) from exc
            raise

    @property
    def _documents(self) -> Any:
        return self._client.collections[self.collection].documents

    def _ensure(self) -> None:
        if not self._ready:
            self.ensure_ready()

    def _delete_where(self, filter_by: str) -> int:
        self._ensure()
        result = self._call("delete", self._documents.delete, {"filter_by": filter_by})
        return int(result.get("num_deleted", 0))

    # ------------------------------------------------------------------ port
    def ensure_ready(self) -> None:
        """Create the collection if missing (409 from a racing creator is fine); check its fields."""
        try:
            info = self._client.collections[self.collection].retrieve()
        except ts_errors.ObjectNotFound:
            schema = {"name": self.collection, "fields": SCHEMA_FIELDS, "default_sorting_field": "updated_at"}
            try:
                info = self._client.collections.create(schema)  # type: ignore[arg-type]
            except ts_errors.ObjectAlreadyExists:
                info = self._call("retrieve collection", self._client.collections[self.collection].retrieve)
            except (ts_errors.TypesenseClientError, httpx.HTTPError) as exc:
                raise _translate(exc, "create collection") from exc
        except (ts_errors.TypesenseClientError, httpx.HTTPError) as exc:
            raise _translate(exc, "retrieve collection") from exc
        present = {f["name"]: f["type"] for f in info.get("fields", [])}
        missing = [f["name"] for f in SCHEMA_FIELDS if present.get(f["name"]) != f["type"]]
        if missing:
            raise PermanentError(
                f"typesense collection {self.collection!r} exists with an incompatible schema (fields {missing})"
            )
        self._ready = True

    def upsert(self, docs: Sequence[ProjectionDoc]) -> None:
        if not docs:
            return
        self._ensure()
        by_uid: dict[str, list[str]] = {}
        for doc in docs:
            by_uid.setdefault(doc.uid, []).append(doc.memory_id)
        for uid, memory_ids in by_uid.items():
            self.delete(uid, memory_ids)
        rows = []
        for doc in docs:
            row = asdict(doc)
            row["id"] = row.pop("provider_id")
            row["revision"] = int(row["revision"])
            row["updated_at"] = float(row["updated_at"])
            rows.append(row)
        for chunk in _chunks(rows, IMPORT_BATCH):
            results = self._call("import", self._documents.import_, list(chunk), {"action": "upsert"})
            failures = [(row["id"], res) for row, res in zip(chunk, results, strict=False) if not res.get("success")]
            if len(results) != len(chunk):
                raise ProviderUnavailable(f"typesense import answered {len(results)} lines for {len(chunk)} docs")
            if failures:
                codes = {int(res.get("code") or 0) for _, res in failures}
                first = f"{failures[0][0]}: {failures[0][1].get('error')}"
                if any(code == 429 or code >= 500 for code in codes):
                    raise ProviderUnavailable(f"typesense import failed for {len(failures)} docs ({first})")
                raise PermanentError(f"typesense rejected {len(failures)} docs ({first})")

    def delete(self, uid: str, memory_ids: Sequence[str]) -> None:
        unique = sorted(set(memory_ids))
        for chunk in _chunks(unique, FILTER_CHUNK):
            self._delete_where(f"uid:={_quote(uid)} && {_any_of('memory_id', chunk)}")

    def purge_user(self, uid: str) -> None:
        self._delete_where(f"uid:={_quote(uid)}")

    def search(self, uid: str, query: str, *, layers: Sequence[str], limit: int) -> list[Hit]:
        if limit <= 0 or not layers or not query.strip():
            return []
        self._ensure()
        params = {
            "q": query,
            "query_by": "content",
            "filter_by": f"uid:={_quote(uid)} && {_any_of('layer', layers)}",
            "per_page": min(limit, MAX_PER_PAGE),
            "include_fields": "id,uid,memory_id,layer",
            # A natural-language query rarely matches every word: let Typesense drop words until it
            # has a page's worth of candidates, ranking documents that match more words first.
            "drop_tokens_threshold": min(limit, MAX_PER_PAGE),
            "typo_tokens_threshold": min(limit, MAX_PER_PAGE),
        }
        result = self._call("search", self._documents.search, params)
        hits = result.get("hits", [])
        if not hits:
            return []
        query_tokens = max(1, len(_TOKEN.findall(query)))
        best = max(int(h.get("text_match") or 0) for h in hits) or 1
        out = []
        for h in hits:
            doc = h.get("document", {})
            if doc.get("uid") != uid or not doc.get("memory_id"):
                continue
            matched = int((h.get("text_match_info") or {}).get("tokens_matched") or 0)
            coverage = min(1.0, matched / query_tokens)
            relative = int(h.get("text_match") or 0) / best
            out.append(Hit(memory_id=doc["memory_id"], score=round(0.8 * coverage + 0.2 * relative, 6),
                           provider_id=str(doc.get("id", ""))))
        return out

    def provider_ids(self, uid: str) -> set[str]:
        self._ensure()
        raw = self._call(
            "export", self._documents.export, {"filter_by": f"uid:={_quote(uid)}", "include_fields": "id"}
        )
        return {json.loads(line)["id"] for line in raw.splitlines() if line.strip()}

    def records(self, uid: str | None) -> Iterator[list[ProviderRecord]]:
        """Streams the export endpoint (one JSON line per document) and yields pages of
        ``MAX_PER_PAGE`` rows: one consistent read, never the whole user in memory."""
        self._ensure()
        params = {"include_fields": "id,uid,memory_id,revision,content"}
        if uid is not None:
            params["filter_by"] = f"uid:={_quote(uid)}"
        url = f"{self._export_url}/collections/{self.collection}/documents/export"
        try:
            with httpx.stream("GET", url, params=params, headers={"X-TYPESENSE-API-KEY": self._api_key},
                              timeout=httpx.Timeout(self._timeout_s, read=max(self._timeout_s, 60.0))) as answer:
                if answer.status_code != 200:
                    answer.read()
                    error: Exception = (ProviderUnavailable if answer.status_code in (408, 429)
                                        or answer.status_code >= 500 else PermanentError)(
                        f"typesense export answered {answer.status_code}: {answer.text[:200]}")
                    raise error
                page: list[ProviderRecord] = []
                for line in answer.iter_lines():
                    if not line.strip():
                        continue
                    row = json.loads(line)
                    revision = row.get("revision")
                    page.append(ProviderRecord(provider_id=str(row["id"]), uid=str(row.get("uid", "")),
                                               memory_id=str(row.get("memory_id", "")),
                                               revision=int(revision) if revision is not None else None,
                                               content=row.get("content")))
                    if len(page) == MAX_PER_PAGE:
                        yield page
                        page = []
                if page:
                    yield page
        except httpx.HTTPError as exc:
            raise _translate(exc, "export") from exc


__all__ = ["SCHEMA_FIELDS", "TypesenseIndex"]
