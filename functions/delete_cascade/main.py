"""Firestore ``document.deleted`` on users/{uid}/conversations/{id}: cascade the delete into memories."""

import functions_framework

from core.functions_entry import conversation_deleted


@functions_framework.cloud_event
def delete_cascade(cloud_event):
    conversation_deleted(cloud_event)
