"""OpenAPI 3.1 document generated from the route table and the pydantic models.

The route declarations that drive dispatch (:func:`core.api.declare.route`) are the only input: each
operation lists exactly the statuses its route can answer, derived from the error classes of
:mod:`core.errors` it may meet (:meth:`Route.error_statuses`), each with its body (the success
model, or the JSON error shape) and, for errors, the ``error.code`` values that status carries
(``x-error-codes``).
A 405 is no operation's answer (it is the answer to a method no operation of the path takes): it
is documented once, as ``components.responses.MethodNotAllowed``, with its ``Allow`` header."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from core import __version__
from core.api.auth import USER_HEADER, USER_ID
from core.api.edge import MAX_ID_CHARS
from core.api.schemas import Error
from core.errors import MethodNotAllowed

# The X-Strata-User header of every operation a key may call: required with a server key (the user
# it acts for), optional otherwise (it must then name the credential's own user: a 403 acting_user).
ACTING_USER: dict[str, Any] = {
    "name": USER_HEADER, "in": "header", "required": False,
    "schema": {"type": "string", "minLength": 1, "maxLength": 128, "pattern": USER_ID.pattern},
    "description": "the user id a server key acts for (required with a server key); with an ID token or a "
                   "personal key it may only name that credential's own user",
}
ERROR_TEXT = {
    400: "Bad input (unknown fields, wrong types, bad values); nothing was written",
    401: "No token or a bad one",
    402: "The memory is locked (the original's paywall lock): it cannot be deleted one by one",
    403: "A key whose scope does not allow this (a read key on a write), or an X-Strata-User naming another "
         "user than the ID token's or personal key's own",
    404: "No such id (another user's ids included), or an id no document can have",
    409: "Conflict: writes are blocked for this account (deletion in progress, incident switch), or the "
         "state moved on",
    405: "The path does not take this method; Allow lists the ones it takes",
    413: "Request body too large",
    415: "Request body is not application/json",
    422: "The conversation's transcript could not ground any extraction",
    503: "Transient: a provider or the database is unavailable; retry",
}


def _schema(model: Any, components: dict[str, Any]) -> dict[str, Any]:
    if isinstance(model, dict):
        return model
    if model is None:
        return {}
    assert issubclass(model, BaseModel)
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    for name, definition in schema.pop("$defs", {}).items():
        components[name] = definition
    components[model.__name__] = schema
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def _operation(r: Any, components: dict[str, Any], error_ref: dict[str, Any]) -> dict[str, Any]:
    responses: dict[str, Any] = {str(r.status): {
        "description": "OK" if r.status < 400 else ERROR_TEXT.get(r.status, "Refused"),
        "content": {r.media_type: {"schema": _schema(r.response_model, components)}},
    }}
    for status, codes in r.error_statuses().items():
        if status != r.status:
            responses[str(status)] = {"description": ERROR_TEXT.get(status, "Error"), "x-error-codes": codes,
                                      "content": {"application/json": {"schema": error_ref}}}
    operation: dict[str, Any] = {"summary": r.summary, "operationId": r.operation_id, "responses": responses}
    if r.deprecated:
        operation["deprecated"] = True
        operation["description"] = f"Deprecated (kept for the original system's clients): use {r.deprecated}."
    params: list[dict[str, Any]] = [
        {"name": n, "in": "path", "required": True,
         "schema": {"type": "string", "minLength": 1, "maxLength": MAX_ID_CHARS}} for n in r.path_params]
    for q in r.query_params:
        param: dict[str, Any] = {"name": q.name, "in": "query", "required": False, "schema": q.schema()}
        if q.kind == "array":
            param.update(style="form", explode=False)
        if q.description:
            param["description"] = q.description
        params.append(param)
    if r.auth and r.key_scope:  # the user a server key acts for (core.api.auth)
        params.append(ACTING_USER)
    if params:
        operation["parameters"] = params
    if r.body_model is not None:
        operation["requestBody"] = {"required": True, "content": {"application/json": {
            "schema": _schema(r.body_model, components)}}}
    if r.auth:
        operation["security"] = [{"firebase": []}]
    if r.auth and r.key_scope:
        operation["security"] += [{"personalKey": [r.key_scope]}, {"serverKey": [r.key_scope]}]
        operation["x-key-scope"] = r.key_scope
    return operation


def document(routes: list[Any]) -> dict[str, Any]:
    components: dict[str, Any] = {}
    error_ref = _schema(Error, components)
    paths: dict[str, Any] = {}
    for r in routes:
        paths.setdefault(r.pattern, {})[r.method.lower()] = _operation(r, components, error_ref)
    return {
        "openapi": "3.1.0",
        "info": {"title": "Strata memory API", "version": __version__,
                 "description": "Every error is {\"error\": {\"code\", \"message\", \"request_id\"}}; an unknown path is a JSON 404 "
                                "and a method a path does not take a JSON 405 with an Allow header. POST /mcp "
                                "(the Model Context Protocol server, JSON-RPC over streamable HTTP) is not a REST "
                                "operation and is not listed here."},
        "paths": paths,
        "components": {"schemas": components, "responses": {"MethodNotAllowed": {
            "description": ERROR_TEXT[405], "x-error-codes": [MethodNotAllowed.code],
            "headers": {"Allow": {"description": "the methods the path takes, comma-separated",
                                  "schema": {"type": "string"}}},
            "content": {"application/json": {"schema": error_ref}}}}, "securitySchemes": {
            "firebase": {"type": "http", "scheme": "bearer", "bearerFormat": "Firebase ID token"},
            "personalKey": {"type": "http", "scheme": "bearer", "bearerFormat": "personal API key (strata_pk_…)",
                            "description": "POST /v1/keys; accepted by /mcp and the /v1 routes that list it, "
                                           "scoped read or read+write"},
            "serverKey": {"type": "http", "scheme": "bearer", "bearerFormat": "server key (strata_sk_…)",
                          "description": "an operator's key for an app's backend (strata server-key create), "
                                         f"acting for the user the {USER_HEADER} header names (required with "
                                         "it); accepted by the /v1 routes that list it, scoped read or "
                                         "read+write"}}},
    }
