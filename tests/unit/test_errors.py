"""The error tree: one home, every class with a status, a code and a retryability, drawn in the
module docstring; no error class is defined anywhere else in ``core``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from core import errors
from core.domain.states import IllegalState, assert_legal_state

CORE = Path(errors.__file__).resolve().parent
TREE = [cls for cls in vars(errors).values() if isinstance(cls, type) and issubclass(cls, errors.StrataError)]


@pytest.mark.parametrize("cls", TREE, ids=lambda cls: cls.__name__)
def test_every_error_has_status_code_and_retryability(cls: type[errors.StrataError]) -> None:
    assert isinstance(cls.status, int) and 400 <= cls.status <= 599
    assert re.fullmatch(r"[a-z][a-z0-9_]*", cls.code)
    assert isinstance(cls.retryable, bool)
    assert re.search(rf"^\s*[│├└─ ]*{cls.__name__}\s", errors.__doc__ or "", re.M), "missing from the drawn tree"


def test_retryable_branch_and_status_agree() -> None:
    for cls in TREE:
        if issubclass(cls, errors.RetryableError):
            assert cls.retryable and cls.status == 503
        if issubclass(cls, errors.PermanentError):
            assert not cls.retryable


def _exception_classes(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
            if any(name.endswith(("Error", "Exception")) or name in errors.__dict__ for name in bases):
                found.append(node.name)
    return found


def test_no_error_class_is_defined_outside_errors_py() -> None:
    outside = {str(p.relative_to(CORE)): names for p in CORE.rglob("*.py") if p.name != "errors.py"
               and (names := [n for n in _exception_classes(p) if n not in _models(p)])}
    assert outside == {}


def _models(path: Path) -> set[str]:
    """Classes that merely share a name pattern (pydantic models such as the API's ``Error`` body)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
            and any(getattr(b, "id", "") == "BaseModel" for b in node.bases)}


def test_illegal_state_is_a_strata_error_not_a_value_error() -> None:
    with pytest.raises(IllegalState) as caught:
        assert_legal_state("long_term", "active", "pending")
    assert isinstance(caught.value, errors.StrataError) and not isinstance(caught.value, ValueError)
    assert caught.value.code == "illegal_state" and not caught.value.retryable


def test_method_not_allowed_and_pinecone_failures_keep_their_extras() -> None:
    assert errors.MethodNotAllowed("no", ["GET"]).allowed == ["GET"]
    failure = errors.ApiFailure(404, "no such vector")
    assert failure.status == 404 and failure.body() == {"code": 5, "message": "no such vector", "details": []}
