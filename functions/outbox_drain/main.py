"""Pub/Sub (projection topic): drain a user's outbox into Typesense, Pinecone and the graph, and
purge an account wipe's Typesense rows (this function alone holds the Typesense write key)."""

import functions_framework

from core.functions_entry import drain_outbox
from core.start_check import start_check

# Deployed (STRATA_PROVIDER_SETUP=check): fail at start, naming `strata setup`, if the provider
# schema is missing.
start_check("outbox_drain")


@functions_framework.cloud_event
def outbox_drain(cloud_event):
    drain_outbox(cloud_event)
