"""Fixtures shared by the e2e suites: an HTTP client on the stack's ``api`` function and a
service-layer context on the same emulators."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from core.bootstrap import Context


@pytest.fixture(scope="module")
def http(stack: dict[str, Any]) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stack["api_url"], timeout=30.0) as client:
        yield client


@pytest.fixture
def ctx(stack: dict[str, Any]) -> Context:
    return Context()
