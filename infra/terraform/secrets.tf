# Provider keys live in Secret Manager and reach functions as secret environment variables.
# Terraform creates the secrets, never their values (values would land in the state file): add a
# version with `gcloud secrets versions add` before the first full apply (see docs/deploy.md).

locals {
  secrets = {
    typesense = { id = "strata-typesense-api-key", env = "STRATA_TYPESENSE_API_KEY", what = "Typesense API key" }
    pinecone  = { id = "strata-pinecone-api-key", env = "PINECONE_API_KEY", what = "Pinecone API key" }
    llm       = { id = "strata-llm-api-key", env = "STRATA_LLM_API_KEY", what = "LLM endpoint API key" }
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
