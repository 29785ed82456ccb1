"""The developer webhook. ``memory_created`` is a frozen legacy name: it fires on *conversation*
creation and ships the conversation payload. It is never renamed."""

from __future__ import annotations

import logging
from typing import Any

from core.bootstrap import Context

log = logging.getLogger(__name__)
MEMORY_CREATED = "memory_created"  # frozen: means "conversation created"


def conversation_created(ctx: Context, uid: str, conversation_id: str, conversation: dict[str, Any]) -> bool:
    url = ctx.settings.webhook_url
    if not url:
        return False
    import httpx

    payload = {"type": MEMORY_CREATED, "uid": uid, "conversation": {"id": conversation_id, **conversation}}
    try:
        httpx.post(url, json=payload, timeout=5.0, params={"uid": uid}).raise_for_status()
    except httpx.HTTPError as exc:
        log.warning("webhook %s failed: %s", MEMORY_CREATED, exc)
        return False
    return True
