"""Firestore ``document.deleted`` on users/{uid}/conversations/{id}: cascade the delete into memories."""

import functions_framework

from core.functions_entry import conversation_deleted
from core.start_check import start_check

# Deployed (STRATA_PROVIDER_SETUP=check): fail at start, naming `strata setup`, if the provider
# schema is missing.
start_check("delete_cascade")


@functions_framework.cloud_event
def delete_cascade(cloud_event):
    conversation_deleted(cloud_event)
