"""Recording what a provider or a mail server reports after a notification left: the one
writer of NotificationEvent, and the suppressions those reports imply.

A hard bounce or a complaint suppresses its address in the notification's workspace at
once; soft bounces do when SOFT_BOUNCE_LIMIT of them arrive for one address within
SOFT_BOUNCE_WINDOW (docs/reports.md, "Suppression rules").
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
from collections.abc import Iterator

from peewee import IntegrityError, SqliteDatabase

from engine.callbacks import recording as callbacks
from engine.catalog import suppressions
from engine.database.db import database
from engine.database.models import Notification, utcnow
from engine.database.models.reports import NotificationEvent
from engine.formats.addresses import suppression_key
from engine.plugins.event_contract import Reported

log = logging.getLogger("herald.reports")

KINDS = ("delivered", "bounced", "soft_bounced", "deferred", "complained")
SOFT_BOUNCE_LIMIT = 3
SOFT_BOUNCE_WINDOW = dt.timedelta(days=7)
DETAIL_CHARS = 1000
SUPPRESSION_REASON = {"bounced": "bounce", "complained": "complaint"}


def recipients_of(notification: Notification) -> set[str]:
    """The suppression keys the notification was addressed to (as the API wrote them)."""
    payload = notification.payload or {}
    keys = payload.get("suppressionKeys")
    if keys is None:  # a row written before the keys were listed
        keys = [suppression_key(a) for k in ("to", "cc", "bcc") for a in payload.get(k) or []]
    return {str(k) for k in keys}


def record(notification: Notification, report: Reported) -> bool:
    """Record ``report`` on its notification; False when it records nothing: a kind we do
    not know, an address the notification was not sent to (a report cannot suppress an
    address it had no part in), or a report already recorded (a webhook retried)."""
    if report.kind not in KINDS:
        return False
    recipient = suppression_key(report.recipient) if report.recipient else None
    addressed = recipients_of(notification)
    if recipient is None and len(addressed) == 1:
        recipient = next(iter(addressed))
    if recipient is not None and recipient not in addressed:
        log.warning("a %s report for notification %s names %s, not one of its recipients: "
                    "dropped", report.kind, notification.id, recipient)
        return False
    with changing(notification):
        try:
            with database.atomic():
                NotificationEvent.create(
                    workspace=notification.workspace_id, notification=notification.id,
                    kind=report.kind, recipient=recipient, source=report.source,
                    detail=(report.detail or "")[:DETAIL_CHARS] or None,
                    dedupe_key=report.dedupe_key[:200] if report.dedupe_key else None,
                    occurred_at=report.occurred_at or utcnow())
        except IntegrityError:
            return False  # the same report again
        if recipient is not None:
            _suppress(notification, report.kind, recipient)
    # Committed: its callback now (docs/callbacks.md).
    callbacks.reported(notification, report.kind, recipient, report.source, report.detail,
                       report.occurred_at)
    return True


def _suppress(notification: Notification, kind: str, recipient: str) -> None:
    reason = SUPPRESSION_REASON.get(kind)
    if reason is None and kind == "soft_bounced" and _soft_bounces(notification,
                                                                   recipient) >= \
            SOFT_BOUNCE_LIMIT:
        reason = "soft-bounces"
    if reason is not None:
        suppressions.add(notification.workspace_id, [recipient], reason)


def _soft_bounces(notification: Notification, recipient: str) -> int:
    since = utcnow() - SOFT_BOUNCE_WINDOW
    return (NotificationEvent.select()
            .where(NotificationEvent.workspace == notification.workspace_id,
                   NotificationEvent.recipient == recipient,
                   NotificationEvent.occurred_at >= since,
                   NotificationEvent.kind == "soft_bounced").count())


def _projected(notification: Notification) -> tuple | None:
    """The notification's rollup group and flags, by the report's one definition."""
    from engine.reports import projection
    from engine.reports.filters import ReportFilters

    day = notification.created_at.date()
    db = database.obj
    q = projection.Query(db)
    f = ReportFilters(notification.workspace_id, day, day)
    sql = projection.grouped(db, projection.projected(projection.selection(
        q, f, notification_id=notification.id)))
    row = db.execute_sql(sql, q.params).fetchone()
    return tuple(row[1:]) if row else None


@contextlib.contextmanager
def changing(notification: Notification) -> Iterator[None]:
    """Around the write of an event about ``notification``: one transaction, in which a
    notification already counted in its day's rollup moves in the rollup as the event moves
    it (bounced instead of delivered, opened...). Events of one notification are taken one
    at a time (its row's lock); the report job waits for them (the day's row)."""
    from engine.reports import rollups

    db = database.obj
    sqlite = isinstance(db, SqliteDatabase)
    transaction = db.atomic("IMMEDIATE") if sqlite and not db.in_transaction() else \
        database.atomic()
    with transaction:
        if not sqlite:
            Notification.select(Notification.id).where(
                Notification.id == notification.id).for_update().execute()
        day = rollups.lock_day(notification.workspace_id, notification.created_at.date(),
                               exclusive=False)
        counted = day is not None and not notification.is_test and \
            notification.created_at < rollups.as_time(day.rolled_until)
        before = _projected(notification) if counted else None
        yield
        if counted:
            after = _projected(notification)
            if after != before:
                for group, sign in ((before, -1), (after, 1)):
                    if group is not None:
                        rollups.add(notification.workspace_id, day.day, [group], sign)
