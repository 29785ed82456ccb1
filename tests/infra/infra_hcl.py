"""The Terraform files parsed with python-hcl2, as plain Python values.

python-hcl2 keeps HCL's quotes on string literals and block labels (``'"memory_items"'``) and marks
blocks with ``__is_block__``; :func:`clean` turns that into plain Python values so the tests read
like the Terraform they check. Expressions stay as ``"${...}"`` strings.
"""

from __future__ import annotations

import re
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


# -- which resources a plan declares, by mode ------------------------------------------------------
#
# `terraform plan` needs the providers (a registry download), so the tests evaluate the one thing
# the modes change instead: each resource's `count`. A count is `${COND ? 1 : 0}` where COND is
# built from locals and variables with ==, &&, || and !; anything else is refused, so a new
# conditional resource is written in a form the check can read.

_TERNARY = re.compile(r"^\$\{(.+?)\s*\?\s*(\d+)\s*:\s*(\d+)\}$", re.S)


def _condition(expr: str, tf: TerraformDir, variables: dict[str, Any], depth: int = 0) -> bool:
    assert depth < 10, f"locals refer to each other too deeply: {expr}"
    body = expr[2:-1] if expr.startswith("${") and expr.endswith("}") else expr

    def local(m: re.Match[str]) -> str:
        value = tf.locals[m.group(1)]
        return "(" + repr(_condition(value, tf, variables, depth + 1)) + ")"

    def var(m: re.Match[str]) -> str:
        name = m.group(1)
        value = variables[name] if name in variables else tf.variables[name]["default"]
        return repr(value)

    python = re.sub(r"\blocal\.([a-z_][a-z0-9_]*)", local, body)
    python = re.sub(r"\bvar\.([a-z_][a-z0-9_]*)", var, python)
    python = python.replace("&&", " and ").replace("||", " or ")
    python = re.sub(r"!(?!=)", " not ", python)
    assert re.fullmatch(r"[\sA-Za-z_0-9'\"()=!]+", python), f"cannot evaluate {expr!r}"
    value = eval(python, {"__builtins__": {}}, {"True": True, "False": False})  # noqa: S307 - checked above
    assert isinstance(value, bool), f"{expr!r} is not a condition"
    return value


def count_of(resource: dict[str, Any], tf: TerraformDir, variables: dict[str, Any]) -> int:
    """How many instances a resource has under ``variables`` (for_each resources count as 1)."""
    if "count" not in resource:
        return 1
    count = resource["count"]
    if isinstance(count, int):
        return count
    m = _TERNARY.match(str(count))
    assert m, f"count {count!r} is not of the form ${{COND ? N : M}}"
    return int(m.group(2)) if _condition("${" + m.group(1) + "}", tf, variables) else int(m.group(3))


def planned(tf: TerraformDir, variables: dict[str, Any]) -> set[str]:
    """Addresses (``kind.name``) of the resources a plan with ``variables`` declares."""
    return {f"{kind}.{name}" for kind, named in tf.resources.items() for name, res in named.items()
            if count_of(res, tf, variables) > 0}
