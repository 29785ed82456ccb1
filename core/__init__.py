"""Strata's service code: domain, services, adapters and the HTTP API."""

# The package version (pyproject.toml's, checked by tests/unit/test_openapi_document.py): the
# OpenAPI document's info.version, so a generated client names the API it was generated from.
__version__ = "0.1.0"
