"""Every setting value the docs name is one the code accepts, and Terraform agrees with the settings.

The docs name values in three ways, each read here and loaded through :mod:`core.config`:

- ``STRATA_X=value`` anywhere in docs/*.md and README.md (shell examples, prose);
- docs/configuration.md's table: a row's variables with every value in its default column (the
  Terraform default in parentheses included) and, in its meaning column, the words of a setting
  with declared choices (``choices`` or a ``Literal``), the numbers of a number and the words of a
  flag;
- Terraform assignments (``extractor = "openai"``, in tfvars examples and prose) of a variable
  whose validation lists its values: the value must be in that list and load as the setting the
  variable sets.

Then infra/terraform: each ``STRATA_*`` a function's environment sets from a variable loads with
the variable's default, each value a variable's ``contains([...], var.x)`` validation allows loads,
and where the setting declares its choices the two lists are the same.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, get_args, get_origin, get_type_hints

import hcl2
import pytest

from core import config
from core.errors import ConfigurationError

REPO = Path(__file__).resolve().parents[2]
DOCS = sorted((REPO / "docs").glob("*.md")) + [REPO / "README.md"]
CONFIG_DOC = REPO / "docs" / "configuration.md"
TERRAFORM = REPO / "infra" / "terraform"

# Words in a choice setting's row that are not values of it (a field of the request, an error code).
NOT_VALUES = {"reasoning_effort", "llm_truncated_reply", "temperature", "max_tokens", "response_format"}
# Values the docs name as ones a process refuses (configuration.md: "a value that does not parse or
# is out of range"): each must stay refused.
REFUSED_ON_PURPOSE = {("embedding_dim", "abc"), ("walk_pages", "0")}
# STRATA_* variables the docs name that are not settings: the tests' and benchmarks' knobs and the
# shell variables of the API examples. Each must be read by the code or set in the docs' examples.
FIELD_BY_ENV = {name.upper(): field for field in config.names() for name in config.env_names(field)}


def _choices(field: str) -> tuple[Any, ...]:
    declared = config._fields()[field].metadata.get("choices") or ()
    kind = get_type_hints(config.Settings)[field]
    return tuple(declared) or (get_args(kind) if get_origin(kind) is Literal else ())


def _kind(field: str) -> Any:
    kind = get_type_hints(config.Settings)[field]
    return str if get_origin(kind) is Literal else kind


@pytest.fixture()
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for field in config.names():
        for name in config.env_names(field):
            monkeypatch.delenv(name, raising=False)
    return monkeypatch


def _refusal(field: str, value: Any) -> str | None:
    try:
        config.load(**{field: value})
    except ConfigurationError as exc:
        return str(exc)
    return None


# --------------------------------------------------------------------------- what the docs name
def assignments() -> Iterator[tuple[str, str, str]]:
    """(doc, field, value) for each ``STRATA_X=value`` of a setting's variable."""
    for doc in DOCS:
        for match in re.finditer(r"\b([A-Z][A-Z0-9_]*)=('[^']*'|\"[^\"]*\"|[^\s`|)\"',;]*)", doc.read_text("utf-8")):
            name, value = match.group(1), match.group(2).strip("'\"")
            if name in FIELD_BY_ENV and "$" not in value and "<" not in value:
                yield doc.name, FIELD_BY_ENV[name], value


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def table_values() -> Iterator[tuple[str, str, str]]:
    """(where, field, value) from docs/configuration.md's table (see the module docstring)."""
    for line in CONFIG_DOC.read_text("utf-8").splitlines():
        if not line.startswith("| `") or line.count("|") < 4:
            continue
        variables, default, meaning = _cells(line)[:3]
        fields = list(dict.fromkeys(FIELD_BY_ENV[v] for v in re.findall(r"`([A-Z0-9_]+)`", variables)
                                    if v in FIELD_BY_ENV))
        if not fields:
            continue
        outside = re.sub(r"\([^)]*\)", "", default)
        plain = re.findall(r"`([^`]+)`", outside)
        for index, field in enumerate(fields):
            # `200`, `24000` for two variables: one each; any other default value: every variable's.
            picked = [plain[index]] if len(plain) == len(fields) > 1 else list(plain)
            picked += re.findall(r"`([^`]+)`", " ".join(re.findall(r"\(([^)]*)\)", default)))
            for value in picked:
                if not re.fullmatch(r"[A-Z][A-Z0-9_]+", value):  # another variable named, not a value
                    yield f"configuration.md default of {field}", field, value
            for value in re.findall(r"`([^`]+)`", meaning):
                # A number in a row of several variables ("`0` turns a kind off") is not every one's.
                if _meaning_value(field, value) and (len(fields) == 1 or _choices(field)):
                    yield f"configuration.md row of {field}", field, value


def _meaning_value(field: str, value: str) -> bool:
    kind = _kind(field)
    if _choices(field):
        return bool(re.fullmatch(r"[a-z][a-z0-9_]*", value)) and value not in NOT_VALUES
    if kind is bool:
        return value.lower() in config._TRUE | config._FALSE
    if kind in (int, float):
        return bool(re.fullmatch(r"[0-9][0-9_.]*", value))
    return False


def _first_mention() -> list[tuple[str, str, str]]:
    seen: dict[tuple[str, str], str] = {}
    for where, field, value in [*assignments(), *table_values()]:
        if (field, value) not in REFUSED_ON_PURPOSE:
            seen.setdefault((field, value), where)
    return [(where, field, value) for (field, value), where in sorted(seen.items())]


DOC_VALUES = _first_mention()


def test_the_docs_name_values_at_all() -> None:
    fields = {field for _, field, _ in DOC_VALUES}
    assert {"extractor", "embedder", "llm_on_failure", "llm_reasoning_effort", "wipe_conversations",
            "provider_setup", "keyword_purge"} <= fields


@pytest.mark.parametrize(("where", "field", "value"), DOC_VALUES, ids=[f"{f}={v}" for _, f, v in DOC_VALUES])
def test_every_value_the_docs_name_is_accepted(clean_env: pytest.MonkeyPatch, where: str, field: str,
                                               value: str) -> None:
    refused = _refusal(field, value)
    assert refused is None, f"{where} names {config.env_name(field)}={value!r}, which is refused: {refused}"


@pytest.mark.parametrize(("field", "value"), sorted(REFUSED_ON_PURPOSE))
def test_the_docs_counter_examples_are_refused(clean_env: pytest.MonkeyPatch, field: str, value: str) -> None:
    assert any((f, v) == (field, value) for _, f, v in assignments())
    assert _refusal(field, value) is not None


def test_every_choice_of_a_setting_is_named_in_its_row() -> None:
    named: dict[str, set[str]] = {}
    for _, field, value in table_values():
        named.setdefault(field, set()).add(value)
    for field in config.names():
        missing = {c for c in _choices(field) if c} - named.get(field, set())
        assert not missing, f"docs/configuration.md's row of {config.env_name(field)} does not name {sorted(missing)}"


def test_every_strata_variable_the_docs_name_exists() -> None:
    """A misspelt setting in a doc would be silently ignored: each name is a setting, or a variable
    the code reads, or one the docs' own examples set."""
    code = "\n".join(p.read_text("utf-8", errors="replace") for pattern in ("core/**/*.py", "strata_dev/**/*.py",
                                                                           "tests/**/*.py", "Makefile", "mk/*.mk")
                     for p in REPO.glob(pattern))
    docs = "\n".join(doc.read_text("utf-8") for doc in DOCS)
    for name in sorted(set(re.findall(r"\bSTRATA_[A-Z0-9_]*[A-Z0-9]\b", docs)) - set(FIELD_BY_ENV)):
        assert name in code or re.search(rf"\b{name}=", docs), f"the docs name {name}: no setting, and nothing reads it"


# --------------------------------------------------------------------------- Terraform
def _variables() -> dict[str, dict[str, Any]]:
    with (TERRAFORM / "variables.tf").open(encoding="utf-8") as handle:
        parsed = hcl2.load(handle)
    out: dict[str, dict[str, Any]] = {}
    for block in parsed["variable"]:
        for name, body in block.items():
            out[name.strip('"')] = body
    return out


def _allowed(body: dict[str, Any], variable: str) -> list[str] | None:
    """The values ``contains([...], var.NAME)`` in the variable's validation allows, if it has one."""
    for validation in body.get("validation", []):
        condition = str(validation.get("condition", ""))
        match = re.search(r"contains\(\[([^\]]*)\],\s*var\." + re.escape(variable) + r"\)", condition)
        if match:
            return re.findall(r'"([^"]*)"', match.group(1))
    return None


def _unquote(value: Any) -> Any:
    if isinstance(value, str) and len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1]
    if isinstance(value, dict):
        return {_unquote(k): _unquote(v) for k, v in value.items()}
    return value


def environment() -> dict[str, str]:
    """``STRATA_X`` -> its expression in the functions' environment (infra/terraform/functions.tf)."""
    text = (TERRAFORM / "functions.tf").read_text("utf-8")
    return {m.group(1): m.group(2).strip() for m in
            re.finditer(r"^\s*(STRATA_[A-Z0-9_]+)\s*=\s*(.+?)\s*(?:#.*)?$", text, re.MULTILINE)}


VARIABLES = _variables()


def terraform_values() -> Iterator[tuple[str, str, str, list[str] | None]]:
    """(STRATA_X, field, the variable's default or the literal, the validation's list) per setting."""
    for env, expr in environment().items():
        field = FIELD_BY_ENV.get(env)
        if field is None:
            continue
        literal = re.fullmatch(r'"([^"$]*)"', expr)
        if literal:
            yield env, field, literal.group(1), None
            continue
        ref = re.fullmatch(r"(?:tostring\()?var\.([a-z_]+)((?:\.[a-z_]+)*)\)?", expr)
        if not ref:
            continue  # a resource's or a local's value: no default to check
        variable, path = ref.group(1), ref.group(2)
        body = VARIABLES[variable]
        default = _unquote(body.get("default"))
        for key in path.strip(".").split(".") if path else []:
            default = default[key]
        yield env, field, str(default), _allowed(body, variable) if not path else None


TERRAFORM_VALUES = list(terraform_values())


def test_terraform_sets_the_settings_with_choices() -> None:
    assert {field for _, field, _, allowed in TERRAFORM_VALUES if allowed} >= {
        "embedder", "extractor", "router", "llm_auth", "llm_reasoning_effort", "llm_response_format"}


@pytest.mark.parametrize(("env", "field", "default", "allowed"), TERRAFORM_VALUES, ids=[v[0] for v in TERRAFORM_VALUES])
def test_terraform_defaults_and_validations_agree_with_the_settings(
        clean_env: pytest.MonkeyPatch, env: str, field: str, default: str, allowed: list[str] | None) -> None:
    refused = _refusal(field, default)
    assert refused is None, f"Terraform sets {env}={default!r} by default, which is refused: {refused}"
    for value in allowed or []:
        refused = _refusal(field, value)
        assert refused is None, f"Terraform's validation allows {env}={value!r}, which is refused: {refused}"
    if allowed is not None and _choices(field):
        assert set(allowed) == set(_choices(field)), (
            f"Terraform allows {sorted(allowed)} for {env}, the settings {sorted(_choices(field))}")


def tfvars_in_docs() -> Iterator[tuple[str, str, str]]:
    """(doc, variable, value) for each ``variable = "value"`` of a variable with a list of values."""
    checked = {name for name, body in VARIABLES.items() if _allowed(body, name) is not None}
    for doc in DOCS:
        for match in re.finditer(r"\b([a-z_]+)\s*=\s*\"([^\"$]*)\"", doc.read_text("utf-8")):
            if match.group(1) in checked:
                yield doc.name, match.group(1), match.group(2)


TFVARS = sorted({(variable, value): doc for doc, variable, value in tfvars_in_docs()}.items())
TFVARS_ROWS = [(doc, variable, value) for (variable, value), doc in TFVARS]


def test_the_docs_set_terraform_variables() -> None:
    assert any(variable == "extractor" for _, variable, _ in TFVARS_ROWS)


@pytest.mark.parametrize(("doc", "variable", "value"), TFVARS_ROWS, ids=[f"{v}={x}" for _, v, x in TFVARS_ROWS])
def test_every_terraform_value_the_docs_name_is_allowed(clean_env: pytest.MonkeyPatch, doc: str, variable: str,
                                                        value: str) -> None:
    allowed = _allowed(VARIABLES[variable], variable)
    assert allowed is not None and value in allowed, (
        f"{doc} sets {variable} = {value!r}; Terraform allows {allowed}")
    for env, expr in environment().items():
        if re.fullmatch(rf"(?:tostring\()?var\.{variable}\)?", expr) and env in FIELD_BY_ENV:
            refused = _refusal(FIELD_BY_ENV[env], value)
            assert refused is None, f"{doc} sets {variable} = {value!r}, which {env} refuses: {refused}"


@pytest.mark.parametrize(("field", "value"), [("extractor", "llm"), ("router", "llm"), ("embedder", "word2vec")])
def test_a_model_setting_the_code_does_not_know_stops_the_start(clean_env: pytest.MonkeyPatch, field: str,
                                                              value: str) -> None:
    """docs/deploy.md once said extractor = "llm": every capture then failed and was redelivered.
    The extractor, router and embedder declare their choices, so such a value stops the process."""
    refused = _refusal(field, value)
    assert refused is not None and config.env_name(field) in refused
