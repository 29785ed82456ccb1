"""Firestore ``document.written`` on users/{uid}/conversations/{id}: capture completed conversations."""

import functions_framework

from core.functions_entry import capture_conversation


@functions_framework.cloud_event
def on_conversation_complete(cloud_event):
    capture_conversation(cloud_event)
