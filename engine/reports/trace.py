"""`herald notifications show`: one notification end to end, for an operator, found by its
id or by the correlation id a caller holds (in any workspace)."""

from __future__ import annotations

import uuid
from typing import Any

from config.redaction import mask_secrets
from engine.catalog.keys import iso
from engine.database.models import DeliveryAttempt, Notification, TrackingEvent
from engine.database.models.reports import NotificationEvent
from engine.database.vocabulary import purged_at, shown_recipient

TRACKED = {"open": "opened", "click": "clicked", "unsubscribe": "unsubscribed"}


def find_all(ident: str) -> list[Notification]:
    """The notification with id ``ident``, else every one with that correlation id, the
    newest first (a caller may reuse one); [] when none."""
    ident = ident.strip()
    try:
        found = Notification.get_or_none(Notification.id == uuid.UUID(ident))
    except ValueError:
        found = None
    if found is not None:
        return [found]
    if not ident or len(ident) > Notification.correlation_id.max_length:
        return []
    # notification_correlation_id (migration step 13) answers this by index.
    return list(Notification.select().where(Notification.correlation_id == ident)
                .order_by(Notification.created_at.desc(), Notification.id))


def _attempt(row: DeliveryAttempt) -> dict[str, Any]:
    return {"number": row.number, "provider": row.provider, "outcome": row.outcome,
            "statusCode": row.status_code,
            "error": mask_secrets(row.error) if row.error else None,
            "at": iso(row.started_at), "durationMs": row.duration_ms,
            "recipient": shown_recipient(row.recipient), "deliveredVia": row.delivered_via,
            # A list of providers: each one tried, in order, with its outcome (failover).
            "providersTried": [{"provider": t.get("provider"), "outcome": t.get("outcome"),
                                "error": mask_secrets(t["error"]) if t.get("error") else None}
                               for t in row.providers_tried or []]}


def _events(notification: Notification) -> list[dict[str, Any]]:
    """Provider and mail-server reports (engine/reports/events.py), then opens, clicks and
    unsubscribes, in time order."""
    events = [{"kind": e.kind, "source": e.source, "recipient": shown_recipient(e.recipient),
               "detail": e.detail, "at": e.occurred_at}
              for e in NotificationEvent.select().where(
                  NotificationEvent.notification == notification.id)]
    events += [{"kind": TRACKED.get(t.kind, t.kind), "source": "tracking",
                "recipient": shown_recipient(t.recipient), "detail": None,
                "at": t.created_at}
               for t in TrackingEvent.select().where(
                   TrackingEvent.notification == notification.id)]
    events.sort(key=lambda e: e["at"])
    return [{**e, "at": iso(e["at"])} for e in events]


def trace(notification: Notification) -> dict[str, Any]:
    """The notification, its attempts in order and what was reported about it since."""
    attempts = (DeliveryAttempt.select()
                .where(DeliveryAttempt.notification == notification.id)
                .order_by(DeliveryAttempt.number, DeliveryAttempt.id))
    return {
        "id": str(notification.id),
        "correlationId": notification.correlation_id,
        "workspaceId": str(notification.workspace_id),
        "templateId": str(notification.template_id) if notification.template_id else None,
        "version": notification.version_number,
        # The language variant that rendered (its tag), null for the version's own text.
        "variant": (notification.payload or {}).get("variant"),
        "channel": notification.channel,
        "status": notification.status,
        "isTest": notification.is_test,
        # Past its workspace's retention (docs/operations.md, "Data retention"): recipients
        # and content are gone, "purged" says when; null while it holds them.
        "purged": purged_at(notification.payload),
        "createdAt": iso(notification.created_at),
        "updatedAt": iso(notification.updated_at),
        "nextAttemptAt": iso(notification.next_attempt_at),
        "lastError": mask_secrets(notification.last_error) if notification.last_error else None,
        "attempts": [_attempt(row) for row in attempts],
        "events": _events(notification),
    }
