"""Pub/Sub (projection topic): drain a user's outbox into Typesense, Pinecone and the graph."""

import functions_framework

from core.functions_entry import projection_message


@functions_framework.cloud_event
def outbox_drain(cloud_event):
    projection_message(cloud_event)
