"""Personal API keys (``/v1/keys``: create, list, revoke, what a key wrote; :mod:`core.services.api_keys`,
:mod:`core.services.key_writes`) and the
OAuth 2.0 protected-resource metadata (RFC 9728) the MCP authorization specification asks an MCP
server to publish, named by its 401's ``WWW-Authenticate: Bearer resource_metadata="..."``.

Keys are managed with a Firebase ID token only: a key cannot mint, list or revoke keys (these
routes declare ``key_scope=None``, so a key is a 401 here). The metadata documents are public.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from core.api.declare import MCP_PATH, Request, Response, route
from core.api.schemas import Schema, Strict
from core.config import Settings
from core.errors import Conflict
from core.services import api_keys, key_writes

METADATA_PATH = "/.well-known/oauth-protected-resource"


class KeyCreate(Strict):
    name: str = Field(min_length=1, max_length=100, description="what the key is for, e.g. the agent's name")
    scope: Literal["read", "read+write"] = Field(description="read: list, search and read; read+write: also "
                                                             "create and delete")
    restricted: bool = Field(False, description="its reads also show the user's restricted memories (health, "
                                                "finances, ...); without it a key never receives one")


class Key(Schema):
    id: str
    name: str
    scope: Literal["read", "read+write"]
    restricted: bool = Field(description="whether its reads show restricted memories")
    created_at: str = Field(description="ISO 8601")
    last_used_at: str | None = Field(description="ISO 8601, recorded at most once a minute; null: never used")


class KeyCreated(Key):
    secret: str = Field(description="the key (strata_pk_…), shown this once: only its SHA-256 is stored")


class KeyList(Schema):
    keys: list[Key]


class KeyWrites(Schema):
    commits: int = Field(description="ledger commits its requests made")
    memory_ids: list[str] = Field(description="memories those commits created, edited, deleted or restored")
    conversation_ids: list[str] = Field(description="conversations it created (POST /v1/conversations)")
    truncated: bool = Field(description=f"more than {key_writes.MAX_LISTED} commits or conversations: the "
                                        "first ones are listed")


class KeyRevoked(Schema):
    id: str
    status: Literal["revoked"]
    written: KeyWrites = Field(description="what the key wrote in the account (GET /v1/keys/{key_id}/writes "
                                           "lists it again later)")


class ResourceMetadata(Schema):
    resource: str
    authorization_servers: list[str]
    bearer_methods_supported: list[str]
    scopes_supported: list[str]
    resource_name: str


@route("POST", "/v1/keys", "Create a personal API key for an agent or tool; the secret is shown once",
       body=KeyCreate, response=KeyCreated, status=201, raises=((Conflict.status, "too_many_keys"),),
       operation_id="createKey", key_scope=None)
def v1_key_create(req: Request) -> Response:
    return 201, api_keys.create(req.ctx, req.uid, req.body.name, req.body.scope, req.body.restricted)


@route("GET", "/v1/keys", "The caller's personal API keys (never their secrets)", response=KeyList,
       operation_id="listKeys", key_scope=None)
def v1_key_list(req: Request) -> Response:
    return 200, {"keys": api_keys.list_keys(req.ctx, req.uid)}


@route("DELETE", "/v1/keys/{key_id}", "Revoke a personal API key: its next call is a 401; the answer lists "
       "what it wrote", response=KeyRevoked, operation_id="revokeKey", rate="",
       key_scope=None)  # never limited: a leaked key can always be revoked
def v1_key_revoke(req: Request) -> Response:
    api_keys.revoke(req.ctx, req.uid, req.params["key_id"])  # first: the key stops working before the listing
    return 200, {"id": req.params["key_id"], "status": "revoked",
                 "written": key_writes.written(req.ctx, req.uid, req.params["key_id"])}


@route("GET", "/v1/keys/{key_id}/writes", "What a personal API key wrote in the account (revoked keys too): "
       "the memories its commits touched and the conversations it created", response=KeyWrites,
       operation_id="getKeyWrites", key_scope=None)
def v1_key_writes(req: Request) -> Response:
    return 200, key_writes.written(req.ctx, req.uid, req.params["key_id"])


# ------------------------------------------------------------------- protected-resource metadata
def base_url(settings: Settings, headers: Mapping[str, str]) -> str:
    """The API's public URL: ``STRATA_PUBLIC_URL`` when set (a deployment behind a path prefix or a
    proxy), else the scheme (``X-Forwarded-Proto``) and ``Host`` the request came with."""
    if settings.public_url:
        return settings.public_url.rstrip("/")
    scheme = (headers.get("x-forwarded-proto") or "http").split(",")[0].strip() or "http"
    return f"{scheme}://{headers.get('host') or 'localhost'}"


def metadata_url(settings: Settings, headers: Mapping[str, str]) -> str:
    """Where the MCP endpoint's metadata is: RFC 9728's well-known path with the resource's path."""
    return base_url(settings, headers) + METADATA_PATH + MCP_PATH


def metadata(settings: Settings, resource: str) -> dict[str, Any]:
    """RFC 9728 metadata: the bearer tokens accepted are Firebase ID tokens (their issuer is the
    authorization server) and personal API keys, whose scopes are ``read`` and ``read+write``."""
    return {"resource": resource,
            "authorization_servers": [f"https://securetoken.google.com/{settings.project_id}"],
            "bearer_methods_supported": ["header"], "scopes_supported": list(api_keys.SCOPES),
            "resource_name": "Strata memory API"}


@route("GET", METADATA_PATH, "OAuth protected-resource metadata (RFC 9728) of the API", auth=False,
       response=ResourceMetadata, operation_id="getResourceMetadata")
def oauth_protected_resource(req: Request) -> Response:
    return 200, metadata(req.ctx.settings, base_url(req.ctx.settings, req.headers))


@route("GET", METADATA_PATH + MCP_PATH, "OAuth protected-resource metadata (RFC 9728) of the MCP server at /mcp",
       auth=False, response=ResourceMetadata, operation_id="getMcpResourceMetadata")
def oauth_protected_resource_mcp(req: Request) -> Response:
    return 200, metadata(req.ctx.settings, base_url(req.ctx.settings, req.headers) + MCP_PATH)
