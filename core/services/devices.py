"""Client device provenance: the ``{platform}_{hash}`` id and the throttled registry upsert."""

from __future__ import annotations

import re
import time
from datetime import datetime

from core.domain import fence, paths
from core.domain.changes import Change
from core.errors import BadRequest, GenerationChanged, WritesBlocked
from core.ports import Ports, Write
from core.services import controls

PLATFORMS = ("macos", "windows", "ios", "android", "web")
_HASH = re.compile(r"^[0-9a-f]{8}$")
THROTTLE_SECONDS = 3600
_last_upsert: dict[tuple[str, str], float] = {}


def device_from_headers(headers: dict[str, str]) -> tuple[str | None, str | None, str | None]:
    """(client_device_id, platform, app_version); None when the headers are absent or malformed."""
    raw_hash = (headers.get("x-device-id-hash") or "").strip().lower()
    platform = (headers.get("x-app-platform") or "").strip().lower()
    version = (headers.get("x-app-version") or "").strip()[:64] or None
    if not raw_hash or platform not in PLATFORMS or not _HASH.match(raw_hash):
        return None, platform or None, version
    return f"{platform}_{raw_hash}", platform, version


SCOPES = ("current", "all", "explicit")


def scope_filter(scope: str, device_ids: list[str] | tuple[str, ...], current: str | None) -> frozenset[str] | None:
    """The spec's universal retrieval filter ``device_scope=current|all|explicit`` as the set of
    capture devices a read keeps (None: every device, and memories of no known device). ``current``
    is the requesting device (its ``X-Device-Id-Hash`` and ``X-App-Platform`` headers); ``explicit``
    names the devices (``device_ids``)."""
    if scope == "all":
        return None
    if scope == "current":
        if current is None:
            raise BadRequest("device_scope=current needs X-Device-Id-Hash and X-App-Platform headers",
                             code="validation_error")
        return frozenset({current})
    if scope == "explicit":
        if not device_ids:
            raise BadRequest("device_scope=explicit needs device_ids", code="validation_error")
        return frozenset(device_ids)
    raise BadRequest("device_scope must be current, all or explicit", code="validation_error")


def record_device(ctx: Ports, uid: str, device_id: str | None, platform: str | None, version: str | None,
                  now: datetime) -> None:
    """Upsert ``users/{uid}/client_devices/{id}`` at most once an hour per process and device.
    Nothing is written while the account is being wiped (the upsert is a fenced write)."""
    if not device_id:
        return
    key = (uid, device_id)
    moment = time.monotonic()
    if moment - _last_upsert.get(key, -THROTTLE_SECONDS * 2) < THROTTLE_SECONDS:
        return
    if controls.is_on(ctx, controls.WRITES):
        return
    ref = paths.doc(uid, paths.CLIENT_DEVICES, device_id)
    wipe_ref = paths.account_deletion(uid)
    found = ctx.store.get_all([ref, wipe_ref])  # one lookup for both
    account = fence.of(found[wipe_ref])
    if account.deleting:
        return
    _last_upsert[key] = moment
    data = {"platform": platform, "device_class": "desktop" if platform in ("macos", "windows") else "mobile"
            if platform in ("ios", "android") else "browser", "last_seen_at": now, "app_version": version,
            "label": device_id}
    if found[ref] is None:
        data["first_seen_at"] = now
    try:
        with fence.expect(uid, account.generation):
            ctx.store.write(Change("device.seen", [Write("set", ref, data, merge=True)], fenced=uid))
    except (GenerationChanged, WritesBlocked):
        _last_upsert.pop(key, None)  # a wipe began meanwhile: record nothing
