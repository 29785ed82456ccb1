"""KeywordIndex on a real Typesense server, through the ``typesense`` SDK.

The collection (``memories`` by default) has an explicit schema and is created idempotently; a
concurrent creator answering 409 is fine. Document ids are ``ProjectionDoc.provider_id``.

Cleanup is metadata-authoritative: before an upsert the adapter deletes every row matching
``uid:=X && memory_id:=[...]``, so a legacy bare-id or ``{uid}-{memory_id}`` row of the same memory
cannot survive next to the new one; deletes and purges filter the same way. Upserts use the bulk
import endpoint, whose 200 answer may still hold per-document failures: each line is checked.
A write the server answers 404 (the collection was dropped after this client created or checked
it, e.g. before ``strata rebuild``) creates the collection again and is sent once more.

Errors: connection failures, timeouts, 429 and 5xx become :class:`ProviderUnavailable`; other 4xx
and rejected documents become :class:`PermanentError`.

Search matches any query term, not all of them (a question is rarely worded like the memory that
answers it): one ``multi_search`` request runs a document count and one search per term over
``content`` and ``quote`` (the evidence quotes, a lower-weighted field; the projection never sends a
restricted item). The candidates are scored with BM25F (:func:`bm25_scores`): idf from each term's
match count among the user's documents, term frequency and length over the content plus half the
quote, normalised by the candidates' mean length. A :class:`Hit` score is comparable across one
result page (not across queries), within 0..1.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx
import typesense
from typesense import exceptions as ts_errors

from core import tracing
from core.errors import ConfigurationError, PermanentError, ProviderUnavailable
from core.ports import Hit, KeywordIndex, ProjectionDoc, ProviderRecord

SCHEMA_FIELDS: list[dict[str, Any]] = [
    {"name": "uid", "type": "string", "facet": True},
    {"name": "memory_id", "type": "string"},
    {"name": "layer", "type": "string", "facet": True},
    {"name": "revision", "type": "int64"},
    {"name": "content", "type": "string"},
    # The evidence quotes (the user's own words), searched beside the content at a lower weight.
    {"name": "quote", "type": "string", "optional": True},
    # The client devices the memory was captured on (the device-scoped search filters on them).
    {"name": "capture_device_ids", "type": "string[]", "optional": True},
    {"name": "category", "type": "string", "facet": True},
    {"name": "updated_at", "type": "float"},
]
OPTIONAL_FIELDS = frozenset({"quote", "capture_device_ids"})  # added to an older collection in place
# Field weights of a term match: the memory's content counts fully, its evidence quote less.
QUERY_BY = "content,quote"
FIELD_WEIGHT = {"content": 1.0, "quote": 0.5}
# BM25's term-frequency saturation and length normalisation (docs/benchmarks.md: tuned on the
# LoCoMo development split).
BM25_K1 = 1.2
BM25_B = 0.75
MAX_TERMS = 8
TERM_CANDIDATES = 50
FILTER_CHUNK = 100
IMPORT_BATCH = 200
MAX_PER_PAGE = 250
_TOKEN = re.compile(r"\w+", re.UNICODE)

T = TypeVar("T")


def _field_counts(text: str) -> Counter[str]:
    return Counter(t.casefold() for t in _TOKEN.findall(text or ""))


def bm25_scores(terms: Sequence[str], idf: dict[str, float], docs: dict[str, dict[str, Any]],
                matched: dict[str, dict[str, set[str]]]) -> dict[str, float]:
    """BM25F over the candidates: a term's frequency is its count in the content plus
    ``FIELD_WEIGHT["quote"]`` times its count in the quote, the document length the same weighted
    sum, normalised by the mean length of the candidates (``b``), saturated by ``k1``. A term the
    index matched by prefix or typo counts once in the field it matched. Divided by
    BM25's bound (every term's idf times ``k1 + 1``), so a score lies in 0..1 and compares across
    one result page."""
    counts = {mid: {f: _field_counts(str(doc.get(f) or "")) for f in FIELD_WEIGHT} for mid, doc in docs.items()}
    lengths = {mid: sum(w * sum(counts[mid][f].values()) for f, w in FIELD_WEIGHT.items()) for mid in docs}
    mean = (sum(lengths.values()) / len(lengths)) if lengths else 0.0
    bound = sum(idf[t] for t in terms) * (BM25_K1 + 1.0)
    out: dict[str, float] = {}
    for mid, by_term in matched.items():
        norm = BM25_K1 * (1.0 - BM25_B + BM25_B * (lengths[mid] / mean if mean else 1.0))
        total = 0.0
        for term, fields in by_term.items():
            tf = sum(w * counts[mid][f].get(term, 0) for f, w in FIELD_WEIGHT.items())
            if tf <= 0.0:
                tf = max(FIELD_WEIGHT[f] for f in fields)
            total += idf[term] * tf * (BM25_K1 + 1.0) / (tf + norm)
        out[mid] = min(1.0, total / bound) if bound else 0.0
    return out


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


@tracing.spanned("keyword_index")
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
        create: bool = True,
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
        # False in deployed functions (STRATA_PROVIDER_SETUP=check): a missing collection is an
        # operator's job (`strata setup`), and their keys may not create one anyway.
        self._create = create

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

    def _write(self, action: str, fn: Callable[..., T], *args: Any) -> T:
        """A write to the collection; when the collection is gone (dropped since it was checked),
        create it again and write once more."""
        self._ensure()
        try:
            return self._call(action, fn, *args)
        except PermanentError as exc:
            if not isinstance(exc.__cause__, ts_errors.ObjectNotFound):
                raise
        self._ready = False
        self.ensure_ready()
        return self._call(action, fn, *args)

    def _missing(self) -> ConfigurationError:
        return ConfigurationError(
            f"typesense collection {self.collection!r} does not exist at {self._export_url}: "
            "run `strata setup` with the admin key once (docs/deploy.md)")

    def _delete_where(self, filter_by: str) -> int:
        result = self._write("delete", self._documents.delete, {"filter_by": filter_by})
        return int(result.get("num_deleted", 0))

    # ------------------------------------------------------------------ port
    def ensure_ready(self) -> None:
        """Create the collection if missing (409 from a racing creator is fine); check its fields."""
        try:
            info = self._client.collections[self.collection].retrieve()
        except ts_errors.ObjectNotFound:
            if not self._create:
                raise self._missing() from None
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
        absent = [f for f in SCHEMA_FIELDS if f["name"] in OPTIONAL_FIELDS and f["name"] not in present]
        if absent:  # a collection from before the field existed: add it in place (an idempotent patch)
            try:
                self._client.collections[self.collection].update({"fields": absent})  # type: ignore[typeddict-item]
            except ts_errors.ObjectAlreadyExists:
                pass
            except (ts_errors.TypesenseClientError, httpx.HTTPError) as exc:
                if _status_of(exc) not in (400, 409) or "already" not in str(exc).lower():
                    raise _translate(exc, "add fields") from exc
            present.update({f["name"]: f["type"] for f in absent})
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
            del row["context"]  # embedded by the vector side only; the keyword index keeps content and quote
            row["revision"] = int(row["revision"])
            row["updated_at"] = float(row["updated_at"])
            row["capture_device_ids"] = list(row["capture_device_ids"])
            rows.append(row)
        for chunk in _chunks(rows, IMPORT_BATCH):
            results = self._write("import", self._documents.import_, list(chunk), {"action": "upsert"})
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

    def search(self, uid: str, query: str, *, layers: Sequence[str], limit: int,
               devices: Sequence[str] | None = None) -> list[Hit]:
        """Any-term matching with field weights: one request (``multi_search``) holds a count of the
        user's documents and one search per query term (at most ``MAX_TERMS``), each returning the
        matching documents' content and quote; the candidates are ranked by :func:`bm25_scores`."""
        terms = list(dict.fromkeys(t.casefold() for t in _TOKEN.findall(query)))[:MAX_TERMS]
        if limit <= 0 or not layers or not terms or (devices is not None and not devices):
            return []
        self._ensure()
        scope = f" && {_any_of('capture_device_ids', sorted(devices))}" if devices is not None else ""
        per_page = min(max(limit, TERM_CANDIDATES), MAX_PER_PAGE)
        common = {
            "collection": self.collection,
            "query_by": QUERY_BY,
            "filter_by": f"uid:={_quote(uid)} && {_any_of('layer', layers)}{scope}",
            "include_fields": "id,uid,memory_id,layer,content,quote",
            "highlight_fields": QUERY_BY,
            "per_page": per_page,
            "drop_tokens_threshold": 0,
            "typo_tokens_threshold": 1,
        }
        searches = [{"q": "*", "query_by": "content", "per_page": 0}] + [{"q": term} for term in terms]
        result: dict[str, Any] = self._call("search", self._client.multi_search.perform,  # type: ignore[arg-type]
                                            {"searches": searches}, common)
        answers = _checked_answers(result, len(searches))
        total = int(answers[0].get("found") or 0)
        idf, docs, matched = _term_matches(uid, terms, answers[1:], total)
        scores = bm25_scores(terms, idf, docs, matched)
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
        return [Hit(memory_id=mid, score=round(score, 6), provider_id=str(docs[mid].get("id", "")))
                for mid, score in ranked]

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


def _checked_answers(result: dict[str, Any], expected: int) -> list[dict[str, Any]]:
    """The answers of one ``multi_search``, one per search; a failed search raises (retryable or not)."""
    answers: list[dict[str, Any]] = list(result.get("results", []))
    if len(answers) != expected:
        raise ProviderUnavailable(f"typesense multi_search answered {len(answers)} results for {expected}")
    for answer in answers:
        if answer.get("error"):
            code = int(answer.get("code") or 0)
            error = ProviderUnavailable if code in (408, 429) or code >= 500 else PermanentError
            raise error(f"typesense search failed: {answer.get('error')}")
    return answers


def _term_matches(uid: str, terms: list[str], answers: list[dict[str, Any]], total: int
                  ) -> tuple[dict[str, float], dict[str, dict[str, Any]], dict[str, dict[str, set[str]]]]:
    """Each term's idf, the matched documents by memory id, and per memory id the fields each term
    matched in: what :func:`bm25_scores` ranks."""
    idf: dict[str, float] = {}
    docs: dict[str, dict[str, Any]] = {}
    matched: dict[str, dict[str, set[str]]] = {}  # memory id -> term -> fields it matched in
    for term, answer in zip(terms, answers, strict=True):
        found = int(answer.get("found") or 0)
        idf[term] = math.log(1.0 + (total - found + 0.5) / (found + 0.5))
        for h in answer.get("hits", []):
            doc = h.get("document", {})
            if doc.get("uid") != uid or not doc.get("memory_id"):
                continue
            fields = {str(x.get("field")) for x in h.get("highlights", [])} | set(h.get("highlight") or {})
            docs[doc["memory_id"]] = doc
            matched.setdefault(doc["memory_id"], {})[term] = fields & set(FIELD_WEIGHT) or {"content"}
    return idf, docs, matched
