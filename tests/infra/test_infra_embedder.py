"""A deployment embeds semantically by default (issue 29): Terraform's embedder is Vertex AI text
embeddings, called with each function's own service account (a role, no key), with its model,
endpoint and location passed through to the functions. ``minilm`` deploys its own build; the
OpenAI-compatible embedder has its own key, mounted by the functions that embed."""

from __future__ import annotations

import re

from core.start_check import EMBEDS
from strata_dev import packaging


def test_the_default_embedder_is_vertex_and_hashing_is_not(root):
    embedder = root.variables["embedder"]
    assert embedder["default"] == "vertex"
    condition = embedder["validation"][0]["condition"]
    allowed = set(re.findall(r'"([a-z]+)"', condition))
    assert allowed == {"vertex", "openai", "minilm", "hashing"} == set(packaging.EMBEDDERS), condition
    assert "minilm" in embedder["description"] and "EMBEDDER=minilm" in embedder["description"]


def test_the_embedder_settings_reach_the_functions(root):
    env_expr = root.locals["environment"]
    for key, variable in (("STRATA_EMBEDDER", "embedder"), ("STRATA_EMBEDDING_DIM", "embedding_dim"),
                          ("STRATA_EMBEDDING_MODEL", "embedding_model"),
                          ("STRATA_EMBEDDING_BASE_URL", "embedding_base_url"),
                          ("STRATA_VERTEX_LOCATION", "vertex_location")):
        assert re.search(rf"\b{key} = .*var\.{variable}\b", env_expr), key
        assert variable in root.variables


def test_vertex_is_authorised_by_a_role_not_a_key(root):
    roles = root.locals["common_project_roles"]
    assert "roles/aiplatform.user" in roles and 'var.embedder == "vertex"' in roles
    assert not any("VERTEX" in s["env"] for s in root.locals["secrets"].values())


def _mounted(root) -> dict[str, set[str]]:
    keys = {}
    for name, listed in re.findall(r'\b([a-z_]+)\s*=\s*\[([^\]]*)\]', root.locals["secret_env"]):
        keys[name] = {k.strip().strip('"') for k in listed.split(",") if k.strip()}
    return keys


def test_the_embedding_key_is_its_own_secret_mounted_by_the_functions_that_embed(root):
    embedding = root.locals["secrets"]["embedding"]
    # strata-embedding-api-key by default (names.tf: name_prefix takes strata-'s place).
    assert embedding["id"] == "${local.resource_prefix}embedding-api-key" and embedding["env"] == "STRATA_EMBEDDING_API_KEY"
    keys = _mounted(root)
    assert {name for name, mounted in keys.items() if "embedding" in mounted} == EMBEDS
    # The LLM key only where a model extracts (capture) or routes (consolidate), no longer for embeddings.
    assert {name for name, mounted in keys.items() if "llm" in mounted} == {"on_conversation_complete",
                                                                           "consolidate"}


def test_each_embedder_deploys_a_build_that_carries_it(root):
    """Terraform picks build/functions-minilm for minilm (``make package EMBEDDER=minilm``), whose
    lock adds the extra; the others deploy the base build."""
    package_dir = root.locals["package_dir"]
    for embedder in packaging.EMBEDDERS:
        suffix = "-minilm" if embedder == "minilm" else ""
        assert packaging.default_out(embedder).as_posix() == f"build/functions{suffix}"
    assert re.fullmatch(r'\$\{coalesce\(var\.package_dir, "\$\{local\.repo_root\}/build/functions'
                        r'\$\{var\.embedder == "minilm" \? "-minilm" : ""\}"\)\}', package_dir), package_dir
    mk = (packaging.REPO_ROOT / "mk" / "infra.mk").read_text()
    assert "--embedder $(EMBEDDER)" in mk and "build/functions$(if $(filter minilm,$(EMBEDDER)),-minilm)" in mk
