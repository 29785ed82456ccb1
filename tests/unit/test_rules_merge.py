"""strata_dev.rules: merging Strata's fragment into an app's firestore.rules (the emulator test of
the merged file is tests/integration/test_rules_merge_emulator.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import ConfigurationError
from strata_dev import rules

REPO = Path(__file__).resolve().parents[2]
APP = (REPO / "examples" / "app-rules" / "firestore.rules").read_text()


def test_default_rules_file_is_the_fragment_merged_into_an_empty_app():
    assert (REPO / "infra" / "firestore.rules").read_text() == rules.default_rules(), \
        "infra/firestore.rules is stale: run `python -m strata_dev.rules --write-default`"


def test_merge_keeps_the_app_and_adds_the_fragment_once():
    merged = rules.merge(APP)
    for line in APP.splitlines():
        assert line in merged
    assert merged.count(rules.BEGIN) == 1 and merged.count(rules.END) == 1
    assert "match /users/{strataUid}/conversations/{strataConversationId}" in merged
    # Inside the documents block: the section starts after it opens.
    assert merged.index("match /databases/{database}/documents") < merged.index(rules.BEGIN)


def test_merging_again_replaces_the_section():
    once = rules.merge(APP)
    assert rules.merge(once) == once
    changed = rules.merge(once, fragment="match /users/{u}/conversations/{c} {\n  allow read: if false;\n}\n")
    assert changed.count(rules.BEGIN) == 1 and "allow read: if false;" in changed
    assert "strataOwner" not in changed


@pytest.mark.parametrize("opening, why", [
    ("match /{document=**} {\n      allow read: if true;\n    }", "recursive wildcard"),
    ("match /users/{uid}/{rest=**} {\n      allow read: if true;\n    }", "recursive wildcard"),
    ("match /users/{uid} {\n      match /{coll}/{id} {\n        allow read: if true;\n      }\n    }",
     "wildcard collection under users"),
    ("match /users/{uid}/memory_items/{id} {\n      allow read: if true;\n    }", "memory_items is Strata's"),
    ("match /users/{uid} {\n      match /conversations/{id} {\n        allow write: if true;\n      }\n    }",
     "conversations is Strata's"),
    ("match /account_deletions/{uid} {\n      allow read: if true;\n    }", "top-level collections"),
    ("match /{coll}/{id} {\n      allow read: if true;\n    }", "top-level collections"),
])
def test_app_rules_that_would_open_strata_are_refused(opening: str, why: str):
    app = APP.replace("match /catalogue/{itemId} {", opening + "\n\n    match /catalogue/{itemId} {")
    with pytest.raises(ConfigurationError, match=why):
        rules.merge(app)
    assert rules.main(["--check", "--app", str(REPO / "examples" / "app-rules" / "firestore.rules")]) == 0


def test_a_commented_out_wildcard_is_not_a_rule():
    app = APP.replace("match /catalogue/{itemId} {", "// match /{document=**} { allow read; }\n    match /catalogue/{itemId} {")
    assert rules.BEGIN in rules.merge(app)


def test_file_without_a_documents_block_is_refused():
    with pytest.raises(ConfigurationError, match="documents"):
        rules.merge("rules_version = '2';\nservice cloud.firestore {\n}\n")
