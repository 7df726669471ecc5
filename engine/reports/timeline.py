"""One notification's page: what it was, and everything that happened to it, in order."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass, field
from typing import Any

from engine.database import notification_store
from engine.database.db import database
from engine.database.models import DeliveryAttempt, Notification, Template, TrackingEvent
from engine.database.models.reports import NotificationEvent
from engine.database.vocabulary import SuppressionScope, purged_at, shown_recipient
from engine.reports import projection
from engine.reports.filters import ReportFilters
from engine.reports.recipients import payload_recipients

ANSWER_CHARS = 300
TRACKED = {"open": "opened", "click": "clicked", "unsubscribe": "unsubscribed"}
# The scope of the suppression an entry of this kind writes (docs/reports.md, "Suppression
# rules"): an unsubscribe stops Marketing email only, a hard bounce or a complaint every message.
SUPPRESSES = {"unsubscribed": SuppressionScope.MARKETING, "bounced": SuppressionScope.ALL,
              "complained": SuppressionScope.ALL}


@dataclass
class Entry:
    at: dt.datetime
    kind: str  # accepted, attempt, delivered, bounced, soft_bounced, deferred, complained,
    #            opened, clicked, unsubscribed, failed, suppressed
    recipient: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class Timeline:
    notification: Notification
    status: str  # the report status (projection.py)
    template_name: str
    recipients: list[str]
    entries: list[Entry]
    # Its recipients on the workspace's suppression list now, each with the row's scope.
    suppressions: dict[str, str] = field(default_factory=dict)
    # When its recipients and content were purged (docs/operations.md, "Data retention").
    purged_at: str | None = None


def find(workspace_id: Any, ident: str) -> Notification | None:
    """A notification of the workspace by its id or by the correlation id the API returned
    (the newest, when a caller reused one); another workspace's is None."""
    ident = ident.strip()
    try:
        notification_id = uuid.UUID(ident)
    except ValueError:
        notification_id = None
    if notification_id is not None:
        found = Notification.get_or_none(Notification.id == notification_id,
                                         Notification.workspace == workspace_id)
        if found is not None:
            return found
    if not ident or len(ident) > 64:
        return None
    return (Notification.select().where(Notification.workspace == workspace_id,
                                        Notification.correlation_id == ident)
            .order_by(Notification.created_at.desc()).first())


def _answer(text: str | None) -> str | None:
    if not text:
        return None
    return text if len(text) <= ANSWER_CHARS else text[:ANSWER_CHARS] + "…"


def report_status(notification: Notification) -> str:
    """The status the counts and the feed give this notification (projection.py)."""
    day = notification.created_at.date()
    f = ReportFilters(uuid.UUID(str(notification.workspace_id)), day, day)
    db = database.obj
    q = projection.Query(db)
    sql = projection.projected(projection.selection(q, f, notification_id=notification.id))
    row = db.execute_sql(sql + ' SELECT "status" FROM proj', q.params).fetchone()
    return row[0] if row else notification.status


def timeline(workspace_id: Any, ident: str) -> Timeline | None:
    """The notification's timeline, or None when the workspace has no such notification."""
    n = find(workspace_id, ident)
    if n is None:
        return None
    entries = [Entry(n.created_at, "accepted", None, {"correlationId": n.correlation_id})]
    for a in DeliveryAttempt.select().where(DeliveryAttempt.notification == n.id):
        entries.append(Entry(a.started_at, "attempt", shown_recipient(a.recipient), {
            "number": a.number, "outcome": a.outcome, "provider": a.provider,
            "statusCode": a.status_code, "durationMs": a.duration_ms,
            "providerMessageId": a.provider_message_id,
            "answer": _answer(a.response_excerpt or a.error),
            # A provider list (failover): which one took it, and each one tried in order.
            **({"deliveredVia": a.delivered_via, "providersTried": a.providers_tried}
               if a.providers_tried else {})}))
    for e in NotificationEvent.select().where(NotificationEvent.notification == n.id):
        entries.append(Entry(e.occurred_at, e.kind, shown_recipient(e.recipient),
                             {"source": e.source, "answer": _answer(e.detail)}))
    for t in TrackingEvent.select().where(TrackingEvent.notification == n.id):
        entries.append(Entry(t.created_at, TRACKED.get(t.kind, t.kind),
                             shown_recipient(t.recipient), {"url": t.url} if t.url else {}))
    status = n.status if n.is_test else report_status(n)
    if status in ("delivered", "failed", "suppressed"):
        entries.append(Entry(n.updated_at, status, None,
                             {"error": _answer(n.last_error)} if n.last_error else {}))
    for entry in entries:
        if entry.kind in SUPPRESSES:
            entry.detail["suppresses"] = SUPPRESSES[entry.kind]
    entries.sort(key=lambda e: (e.at, e.kind != "accepted"))
    template = Template.get_or_none(Template.id == n.template_id) if n.template_id else None
    recipients = payload_recipients(n.payload)
    # Suppression lists hold suppression keys: a payload without them (a webhook's) has none.
    listed = (notification_store.suppression_scopes(n.workspace_id, recipients)
              if (n.payload or {}).get("suppressionKeys") else {})
    return Timeline(n, status, template.name if template else "(no template)",
                    recipients, entries, dict(sorted(listed.items())), purged_at(n.payload))

