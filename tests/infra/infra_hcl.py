"""The Terraform files parsed with python-hcl2, as plain Python values.

python-hcl2 keeps HCL's quotes on string literals and block labels (``'"memory_items"'``) and marks
blocks with ``__is_block__``; :func:`clean` turns that into plain Python values so the tests read
like the Terraform they check. Expressions stay as ``"${...}"`` strings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hcl2

REPO = Path(__file__).resolve().parents[2]
TF_ROOT = REPO / "infra" / "terraform"
TF_MODULE = TF_ROOT / "modules" / "function"


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1]
    return value


def clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {_unquote(k): clean(v) for k, v in value.items() if k not in ("__is_block__", "__comments__")}
    if isinstance(value, list):
        return [clean(v) for v in value]
    if isinstance(value, str):
        return _unquote(value)
    return value


@dataclass
class TerraformDir:
    """Every top-level block of one Terraform directory, merged across its .tf files."""

    path: Path
    resources: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    data: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    modules: dict[str, dict[str, Any]] = field(default_factory=dict)
    variables: dict[str, dict[str, Any]] = field(default_factory=dict)
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    locals: dict[str, Any] = field(default_factory=dict)
    terraform: list[dict[str, Any]] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)

    def resources_of(self, kind: str) -> dict[str, dict[str, Any]]:
        return self.resources.get(kind, {})


def load_dir(path: Path) -> TerraformDir:
    tf = TerraformDir(path)
    for file in sorted(path.glob("*.tf")):
        text = file.read_text(encoding="utf-8")
        tf.texts[file.name] = text
        doc = clean(hcl2.loads(text))
        for block in doc.get("resource", []):
            for kind, named in block.items():
                tf.resources.setdefault(kind, {}).update(named)
        for block in doc.get("data", []):
            for kind, named in block.items():
                tf.data.setdefault(kind, {}).update(named)
        for block in doc.get("module", []):
            tf.modules.update(block)
        for block in doc.get("variable", []):
            tf.variables.update(block)
        for block in doc.get("output", []):
            tf.outputs.update(block)
        for block in doc.get("locals", []):
            tf.locals.update(block)
        tf.terraform.extend(doc.get("terraform", []))
    return tf


def walk_strings(value: Any):
    """Every string anywhere inside a parsed HCL value."""
    if isinstance(value, dict):
        for v in value.values():
            yield from walk_strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from walk_strings(v)
    elif isinstance(value, str):
        yield value


IndexKey = tuple[str, str, tuple[tuple[str, str], ...]]


def declared_indexes(tf: TerraformDir) -> set[IndexKey]:
    """(collection, query scope, ((field, mode), ...)) for each composite index in firestore.tf."""
    out: set[IndexKey] = set()
    for spec in tf.locals["composite_indexes"].values():
        fields = tuple((f["field_path"], f["mode"]) for f in spec["fields"])
        out.add((spec["collection"], spec["scope"], fields))
    return out


def index_key(index: Any) -> IndexKey:
    """The same key for a core.adapters.firestore.queries.CompositeIndex."""
    return (index.collection_group, index.query_scope, tuple((f.field_path, f.mode) for f in index.fields))


def missing_indexes(required: list[Any], declared: set[IndexKey]) -> list[IndexKey]:
    """Indexes the code needs that Terraform does not declare, in the code's order."""
    return [index_key(i) for i in required if index_key(i) not in declared]
