"""``strata smoke`` on the local stack: the deployment check, run the way it runs against a project.

The command signs in a test user, writes a conversation as that user through Firestore's REST API
(rules enforced), waits for its memories through the api function (list, then keyword search),
deletes the conversation, waits until nothing of it is listed or found, wipes the account and
checks the export is empty. Only the sign-in differs from a project's run (an emulator token, not
an anonymous Firebase Auth sign-up) and the base URLs.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import pytest

from strata_dev import smoke
from strata_dev.cli.main import build_parser

pytestmark = pytest.mark.e2e


def test_smoke_passes_on_the_local_stack(stack: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    # As against a project: the api URL is given (there `terraform output -raw api_url`).
    args = build_parser().parse_args(["smoke", "--json", "--api-url", stack["api_url"], "--timeout", "240"])
    assert isinstance(args, argparse.Namespace)
    assert smoke.main(args) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    steps = [line.get("step") for line in lines if "step" in line]
    assert steps == ["signed_in", "conversation_written", "memories_listed", "memories_found",
                     "conversation_deleted", "account_wiped"]
    assert lines[-1]["smoke"] == "passed"
    listed = next(line for line in lines if line.get("step") == "memories_listed")
    assert listed["count"] >= 1
    assert any("Porto" in content for content in listed["contents"])


def test_smoke_fails_clearly_without_a_target(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from core import config

    real = config.load
    monkeypatch.setattr(config, "load", lambda **kw: real(firestore_emulator_host="", auth_emulator_host="", **kw))
    args = build_parser().parse_args(["smoke", "--project", "some-project"])
    assert smoke.main(args) == 1
    assert "--api-url is required" in capsys.readouterr().out
