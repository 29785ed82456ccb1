"""Client device provenance: the ``{platform}_{hash}`` id and the throttled registry upsert."""

from __future__ import annotations

import re
import time
from datetime import datetime

from core.bootstrap import Context

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


def record_device(ctx: Context, uid: str, device_id: str | None, platform: str | None, version: str | None,
                  now: datetime) -> None:
    """Upsert ``users/{uid}/client_devices/{id}`` at most once an hour per process and device."""
    if not device_id:
        return
    key = (uid, device_id)
    moment = time.monotonic()
    if moment - _last_upsert.get(key, -THROTTLE_SECONDS * 2) < THROTTLE_SECONDS:
        return
    _last_upsert[key] = moment
    ref = ctx.paths.doc(uid, "client_devices", device_id)
    snap = ref.get()
    data = {"platform": platform, "device_class": "desktop" if platform in ("macos", "windows") else "mobile"
            if platform in ("ios", "android") else "browser", "last_seen_at": now, "app_version": version,
            "label": device_id}
    if not snap.exists:
        data["first_seen_at"] = now
    ref.set(data, merge=True)
