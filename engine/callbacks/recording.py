"""Callbacks made from recorded outcomes: called once an outcome is committed, they write
one Callback row per recipient and outcome, then enqueue the workspace's callback job.

A failure here is logged and never reaches the delivery, report or tracking request that
recorded the outcome: the outcome is the record, its callback a copy (docs/callbacks.md,
"What is guaranteed").
"""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from engine.callbacks import queue
from engine.callbacks.payloads import OUTCOMES, TRACKING_OUTCOMES, body
from engine.callbacks.targets import target
from engine.database.db import database
from engine.database.models import Notification, utcnow
from engine.database.models.callbacks import Callback

log = logging.getLogger("herald.callbacks")


@dataclass
class Outcome:
    """One recipient's outcome, before it is written."""

    outcome: str  # one of OUTCOMES
    recipient: str | None
    occurred_at: dt.datetime
    detail: dict[str, Any] = field(default_factory=dict)


def wanted(notification: Notification, outcome: str) -> bool:
    """Whether an outcome of ``notification`` is called back: never for a test send, never
    without a callback URL, opens and clicks only while the workspace's switch is on."""
    if notification.is_test:
        return False
    found = target(notification.workspace_id)
    if found is None:
        return False
    return found.tracking or outcome not in TRACKING_OUTCOMES


def record(notification: Notification, outcomes: Iterable[Outcome]) -> int:
    """Write the callbacks of ``outcomes`` in their order (one insert) and enqueue the
    workspace's job; returns how many were written."""
    try:
        rows = [_row(notification, o) for o in outcomes if wanted(notification, o.outcome)]
        if not rows:
            return 0
        with database.atomic():
            for start in range(0, len(rows), 500):
                Callback.insert_many(rows[start:start + 500]).execute()
        queue.enqueue(notification.workspace_id)
        return len(rows)
    except Exception:
        log.exception("callbacks of notification %s could not be recorded", notification.id)
        return 0


def _row(notification: Notification, outcome: Outcome) -> dict[str, Any]:
    assert outcome.outcome in OUTCOMES, outcome.outcome
    event = f"notification.{outcome.outcome}"
    return {"workspace": notification.workspace_id, "notification_id": notification.id,
            "delivery_id": str(uuid.uuid4()), "event": event,
            "recipient": outcome.recipient, "created_at": utcnow(), "updated_at": utcnow(),
            "body": body(event, notification_id=notification.id,
                         correlation_id=notification.correlation_id,
                         template_id=notification.template_id, channel=notification.channel,
                         recipient=outcome.recipient, occurred_at=outcome.occurred_at,
                         detail=outcome.detail)}


# Provider reports (engine/reports/events.py) called back; "delivered" is not: it was
# called back when the provider took the message, and soft bounces and deferrals are not
# outcomes (docs/callbacks.md).
REPORTED = {"bounced": "bounced", "complained": "complained"}
TRACKED = {"open": "opened", "click": "clicked", "unsubscribe": "unsubscribed"}


def reported(notification: Notification, kind: str, recipient: str | None, source: str,
             detail: str | None, occurred_at: dt.datetime | None) -> int:
    """A provider's or mail server's report, recorded."""
    outcome = REPORTED.get(kind)
    if outcome is None:
        return 0
    extra = {"source": source, **({"description": detail} if detail else {})}
    return record(notification, [Outcome(outcome, recipient, occurred_at or utcnow(), extra)])


def tracked(notification: Notification, kind: str, recipient: str | None,
            url: str | None = None) -> int:
    """An open, click or one-click unsubscribe, recorded."""
    outcome = TRACKED.get(kind)
    if outcome is None:
        return 0
    return record(notification, [Outcome(outcome, recipient, utcnow(),
                                         {"url": url} if url else {})])
