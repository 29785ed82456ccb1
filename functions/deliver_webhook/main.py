"""HTTP (Cloud Tasks, the webhook queue): deliver one developer webhook."""

import functions_framework

from core import functions_entry


@functions_framework.http
def deliver_webhook(request):
    return functions_entry.deliver_webhook(request)
