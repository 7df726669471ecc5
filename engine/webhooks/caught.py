"""What the dev inbox's webhook catcher keeps: each request as it arrived, and whether its
signature verified with the workspace's secret at that moment (spec 6.4, as a receiver
checks it). Development and test only, like the dev inbox.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.database.models import Notification, Workspace
from engine.database.models.callbacks import Callback
from engine.database.models.inbox import CaughtWebhook
from engine.webhooks.signatures import TOLERANCE_SECONDS, verify_webhook

KEPT_BODY_BYTES = 1024 * 1024  # a rendered part is at most 1,048,576 characters


def _verdict(raw_body: bytes, headers: Mapping[str, str]) -> tuple[bool, str, Any, Any]:
    """(verified, why, workspace id, notification id) for one caught request."""
    lowered = {k.lower(): v for k, v in headers.items()}
    delivery_id = lowered.get("x-service-delivery-id")
    if not delivery_id or "x-service-signature" not in lowered:
        return False, "not signed (no X-Service-Delivery-Id or X-Service-Signature)", None, None
    # The delivery id names the notification, hence its workspace and secret. Not indexed:
    # a development database is small, and nothing else looks a row up by it.
    row = (Notification.select(Notification.id, Notification.workspace)
           .where(Notification.delivery_id == delivery_id).first())
    if row is not None:
        workspace_id, notification_id = row.workspace_id, row.id
    else:  # a delivery callback (docs/callbacks.md): its own delivery id, indexed
        callback = (Callback.select(Callback.workspace, Callback.notification_id)
                    .where(Callback.delivery_id == delivery_id).first())
        if callback is None:
            return (False, "no notification or callback has this delivery id", None, None)
        workspace_id, notification_id = callback.workspace_id, callback.notification_id
    secret = Workspace.get_by_id(workspace_id).signing_secret
    if verify_webhook(secret, raw_body, headers):
        return True, "signature verifies", workspace_id, notification_id
    return (False, "signature does not verify with the workspace's current secret (or the "
            f"timestamp is more than {TOLERANCE_SECONDS} s away)", workspace_id,
            notification_id)


def catch(name: str, headers: Mapping[str, str], raw_body: bytes) -> CaughtWebhook:
    """Keep one request; the verdict is computed now, as a receiver would."""
    verified, verdict, workspace_id, notification_id = _verdict(raw_body, headers)
    lowered = {k.lower(): v for k, v in headers.items()}
    return CaughtWebhook.create(
        name=name, headers=dict(headers),
        body=raw_body[:KEPT_BODY_BYTES].decode("utf-8", "replace"), size_bytes=len(raw_body),
        delivery_id=(lowered.get("x-service-delivery-id") or "")[:64] or None,
        workspace_id=str(workspace_id) if workspace_id else None,
        notification_id=str(notification_id) if notification_id else None,
        verified=verified, verdict=verdict)


def latest(name: str | None = None, limit: int = 200) -> list[CaughtWebhook]:
    query = CaughtWebhook.select().order_by(CaughtWebhook.id.desc()).limit(limit)
    if name is not None:
        query = query.where(CaughtWebhook.name == name)
    return list(query)


def clear() -> int:
    return CaughtWebhook.delete().execute()
