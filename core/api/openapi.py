"""OpenAPI 3.1 document generated from the route table and the pydantic models."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from core.api.schemas import Error


def _schema(model: type[BaseModel], components: dict[str, Any]) -> dict[str, Any]:
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    for name, definition in schema.pop("$defs", {}).items():
        components[name] = definition
    components[model.__name__] = schema
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def document(routes: list[Any]) -> dict[str, Any]:
    components: dict[str, Any] = {}
    error_ref = _schema(Error, components)
    paths: dict[str, Any] = {}
    for r in routes:
        operation: dict[str, Any] = {
            "summary": r.summary,
            "operationId": r.handler.__name__,
            "responses": {
                "200": {"description": "OK", "content": {"application/json": {
                    "schema": _schema(r.response_model, components) if r.response_model else {}}}},
                "400": {"description": "Bad input", "content": {"application/json": {"schema": error_ref}}},
                "401": {"description": "No or bad token", "content": {"application/json": {"schema": error_ref}}},
                "404": {"description": "Not found", "content": {"application/json": {"schema": error_ref}}},
            },
        }
        params = [{"name": n, "in": "path", "required": True, "schema": {"type": "string"}}
                  for n in re.findall(r"\{(\w+)\}", r.pattern)]
        params += [{"name": n, "in": "query", "required": False, "schema": {"type": "string"}} for n in r.query_params]
        if params:
            operation["parameters"] = params
        if r.body_model is not None:
            operation["requestBody"] = {"required": True, "content": {"application/json": {
                "schema": _schema(r.body_model, components)}}}
        if r.auth:
            operation["security"] = [{"firebase": []}]
        paths.setdefault(r.pattern, {})[r.method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {"title": "Strata memory API", "version": "1"},
        "paths": paths,
        "components": {"schemas": components, "securitySchemes": {
            "firebase": {"type": "http", "scheme": "bearer", "bearerFormat": "Firebase ID token"}}},
    }
