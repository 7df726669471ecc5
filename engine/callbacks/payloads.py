"""A callback's body: the fields docs/callbacks.md lists, in that order, as compact JSON
written once (every retry sends these exact bytes, so a receiver may dedupe on them)."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from engine.catalog.keys import iso

OUTCOMES = ("delivered", "failed", "bounced", "complained", "suppressed", "opened", "clicked",
            "unsubscribed")
TRACKING_OUTCOMES = ("opened", "clicked")  # switched off with the workspace's tracking switch
TEST_TYPE = "callback.test"


def body(event: str, *, notification_id: Any, correlation_id: str | None,
         template_id: Any, channel: str | None, recipient: str | None,
         occurred_at: dt.datetime, detail: dict[str, Any] | None = None) -> str:
    """``event`` is a type (``notification.delivered``...) or TEST_TYPE."""
    return json.dumps({
        "type": event,
        "notificationId": str(notification_id) if notification_id else None,
        "correlationId": correlation_id,
        "templateId": str(template_id) if template_id else None,
        "channel": channel,
        "recipient": recipient,
        "occurredAt": iso(occurred_at),
        "detail": detail or {},
    }, ensure_ascii=False, separators=(",", ":"))
