"""Firestore ``document.written`` on users/{uid}/conversations/{id}: capture completed conversations."""

import functions_framework

from core.functions_entry import conversation_written


@functions_framework.cloud_event
def on_conversation_complete(cloud_event):
    conversation_written(cloud_event)
