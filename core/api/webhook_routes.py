"""Developer webhook routes: ``PUT|GET|DELETE /v1/users/developer/webhooks/{type}``.

Kept apart from :mod:`core.api.routes` so the webhook surface is one self-contained module. The
only type is ``memory_created`` (a frozen legacy name: it fires on conversation creation); any
other type is 404. The URL is checked here (form, scheme, resolved addresses) and again when a
delivery runs.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from core.api.declare import Request, Response, route
from core.domain.webhooks import MAX_URL_CHARS
from core.errors import TargetRefused
from core.services import webhooks


class WebhookPut(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    url: str = Field(min_length=1, max_length=MAX_URL_CHARS,
                     description="https URL on a public host (local mode: http and loopback too); "
                                 "deliveries append ?uid=")
    enabled: bool = Field(default=True, description="deliver (true) or keep the URL but send nothing (false)")


class WebhookConfig(BaseModel):
    type: str = Field(description="the webhook type (memory_created: conversation created)")
    url: str | None
    enabled: bool


class WebhookDeleted(BaseModel):
    type: str
    deleted: bool = Field(description="false when no webhook of this type was set")


PATH = "/v1/users/developer/webhooks/{webhook_type}"
UNKNOWN_TYPE = (404, "unknown_webhook_type")


@route("PUT", PATH, "Set the user's developer webhook of this type: {url, enabled}", body=WebhookPut,
       response=WebhookConfig, raises=(TargetRefused, UNKNOWN_TYPE), operation_id="setWebhook",
       key_scope=None)  # where conversations are sent: the user's own token, never an agent's key
def webhook_put(req: Request) -> Response:
    return 200, webhooks.put_config(req.ctx, req.uid, req.params["webhook_type"], req.body.url, req.body.enabled)


@route("GET", PATH, "The user's developer webhook of this type (url null when none is set)",
       response=WebhookConfig, raises=(UNKNOWN_TYPE,), operation_id="getWebhook", key_scope=None)
def webhook_get(req: Request) -> Response:
    return 200, webhooks.get_config(req.ctx, req.uid, req.params["webhook_type"])


@route("DELETE", PATH, "Remove the user's developer webhook of this type", response=WebhookDeleted, raises=(UNKNOWN_TYPE,),
       operation_id="deleteWebhook", key_scope=None)
def webhook_delete(req: Request) -> Response:
    return 200, webhooks.delete_config(req.ctx, req.uid, req.params["webhook_type"])
