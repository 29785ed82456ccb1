"""Firestore ``document.deleted`` on users/{uid}/conversations/{id}: cascade the delete into memories."""

import functions_framework

from core.functions_entry import cascade_from_trigger
from core.start_check import start_check

# Deployed (STRATA_PROVIDER_SETUP=check): fail at start, naming `strata setup`, if the provider
# schema is missing.
start_check("delete_cascade")


@functions_framework.cloud_event
def delete_cascade(cloud_event):
    cascade_from_trigger(cloud_event)
