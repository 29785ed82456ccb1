"""Unit tests run on the in-memory parts alone, whatever the process's environment says.

``config.Settings`` reads the environment, and an integration or e2e test earlier in the same
pytest session exports the local stack's (emulator hosts, which turn on local mode, and the
stack's settings). Each unit test runs with every variable a setting is read from unset, as it
does in a session of its own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core import config


@pytest.fixture(autouse=True)
def _no_stack_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for field in config.names():
        for name in config.env_names(field):
            monkeypatch.delenv(name, raising=False)
    yield
