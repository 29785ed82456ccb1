# Provider keys live in Secret Manager and reach functions as secret environment variables.
# Terraform creates the secrets, never their values (values would land in the state file): add a
# version with `gcloud secrets versions add` before the first full apply (see docs/deploy.md).

locals {
  secrets = {
    # Two Typesense keys, both scoped to the collection (`strata setup --typesense-keys` makes them;
    # docs/deploy.md): the write key (documents:*) only the functions that drain the outbox
    # (outbox_drain; consolidate, which drains before and after its pass) and the operator commands
    # hold; the search key (documents:search, collections:get: no write or delete of any kind) the
    # api and delete_cascade mount under the same variable. An account wipe's keyword purge is the drain's
    # (the api asks it over the projection topic: STRATA_KEYWORD_PURGE = "drain").
    typesense        = { id = "${local.resource_prefix}typesense-api-key", env = "STRATA_TYPESENSE_API_KEY", what = "Typesense write key (outbox drain, consolidate, operators)" }
    typesense_search = { id = "${local.resource_prefix}typesense-search-key", env = "STRATA_TYPESENSE_API_KEY", what = "Typesense search-only key: documents:search, collections:get (api, delete_cascade)" }
    pinecone         = { id = "${local.resource_prefix}pinecone-api-key", env = "PINECONE_API_KEY", what = "Pinecone API key" }
    llm              = { id = "${local.resource_prefix}llm-api-key", env = "STRATA_LLM_API_KEY", what = "LLM endpoint API key (extraction, routing)" }
    # The OpenAI-compatible embedder's own key, mounted by the functions that embed; never the LLM
    # key (the chat model's key stays with extraction and routing).
    embedding = { id = "${local.resource_prefix}embedding-api-key", env = "STRATA_EMBEDDING_API_KEY", what = "OpenAI-compatible embeddings endpoint API key" }
    # The key of uid_hash in every function's log lines and spans (core/logs.py): without it a
    # reader of the logs could hash guessed uids and compare; `strata uid-hash --find` needs it too.
    log_hash = { id = "${local.resource_prefix}log-hash-key", env = "STRATA_LOG_HASH_KEY", what = "HMAC key of uid_hash in logs and spans (every function)" }
  }
}

resource "google_secret_manager_secret" "provider" {
  #checkov:skip=CKV_GCP_128:Automatic replication with Google-managed keys is the intended setting; a customer-managed key would add a KMS dependency for three API keys.
  for_each = local.secrets

  project   = var.project_id
  secret_id = each.value.id
  labels    = merge(var.labels, { purpose = each.key })

  annotations = {
    description = each.value.what
  }

  replication {
    auto {}
  }

  depends_on = [google_project_service.services]
}
