"""What a notification keeps once purged: what the reports count (status, channel, template,
version, times, provider, events' kinds and times), each recipient as a keyed hash; what
it loses: payload (tags, recipients, rendered content, attachments), errors and answers
that may quote an address, clicked URLs, callbacks' bodies, what the dev inbox caught.

One function, ``scrub``, for a batch of finished notifications in one transaction: the
daily purge and an erasure both go through it.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections import Counter
from collections.abc import Iterable
from typing import Any

from peewee import Cast, PostgresqlDatabase, Value, fn

from engine.database.db import database
from engine.database.models import DeliveryAttempt, Notification, TrackingEvent, utcnow
from engine.database.models.callbacks import Callback
from engine.database.models.inbox import CaughtWebhook, InboxMessage
from engine.database.models.reports import NotificationEvent, NotificationLookup
from engine.database.secrets import recipient_hash
from engine.database.vocabulary import HASH_PREFIX, PURGED_KEY, NotificationStatus, purged_at
from engine.reports.recipients import payload_recipients

# Final: nothing will be sent for it again (a cancelled one's list was cancelled).
FINISHED = (NotificationStatus.DELIVERED, NotificationStatus.FAILED,
            NotificationStatus.SUPPRESSED, NotificationStatus.CANCELLED)
COUNTED = ("notifications", "attempts", "events", "trackingEvents", "callbacks",
           "caughtWebhooks", "inboxMessages")


def is_purged(payload: Any) -> bool:
    """Whether a notification's payload is what a purge left (``{"purgedAt": ...}``)."""
    return purged_at(payload) is not None


def hashed(value: str | None) -> str | None:
    """A recipient as a purged row keeps it (None stays None; a hash stays itself)."""
    return None if value is None else recipient_hash(value)


def _rehash(model: Any, column: Any, where: Any) -> int:
    """Every plain value of ``column`` among the rows ``where`` becomes its hash, in one
    statement (PostgreSQL: an UPDATE from a VALUES list) or one prepared UPDATE a row."""
    rows = [(row_id, recipient_hash(value)) for row_id, value in model.select(
        model._meta.primary_key, column).where(where, column.is_null(False),
                                               ~column.startswith(HASH_PREFIX)).tuples()]
    if not rows:
        return 0
    db = database.obj
    table, name = model._meta.table_name, column.column_name
    key = model._meta.primary_key.column_name
    if isinstance(db, PostgresqlDatabase):
        for start in range(0, len(rows), 1000):
            chunk = rows[start:start + 1000]
            values = ", ".join(["(%s, %s)"] * len(chunk))
            db.execute_sql(f'UPDATE "{table}" AS t SET "{name}" = v.h FROM (VALUES {values}) '
                           f'AS v(k, h) WHERE t."{key}" = v.k',
                           [item for pair in chunk for item in pair])
    else:
        cursor = db.cursor()
        cursor.executemany(f'UPDATE "{table}" SET "{name}" = ? WHERE "{key}" = ?',
                           [(hashed, row_id) for row_id, hashed in rows])
    return len(rows)


def _as_is(value: Any) -> Any:
    return value


def _among(column: Any, values: list[Any], kind: str = "uuid") -> Any:
    """``column`` IN ``values``: on PostgreSQL one array parameter (a batch's 500 ids as
    literals cost more to build than to run), elsewhere an IN list."""
    if isinstance(database.obj, PostgresqlDatabase):
        array = Value([str(v) for v in values], converter=_as_is, unpack=False)
        return column == fn.ANY(Cast(array, f"{kind}[]"))
    return column.in_(values)


def _stripped(tried: Any) -> Any:
    """A failover's providers tried, without their errors (which may quote an address)."""
    if not isinstance(tried, list):
        return tried
    return [{"provider": t.get("provider"), "outcome": t.get("outcome")}
            for t in tried if isinstance(t, dict)]


def _lookup(rows: list[tuple[uuid.UUID, Any, dt.datetime]], workspace_id: Any) -> None:
    """Each notification's indexed recipients replaced by their hashes, so the reports'
    exact-address search finds it still (engine/reports/projection.py hashes the term too)."""
    ids = [nid for nid, _, _ in rows]
    NotificationLookup.delete().where(NotificationLookup.notification.in_(ids),
                                      NotificationLookup.kind == "r").execute()
    terms = [{"workspace": workspace_id, "notification": nid, "kind": "r",
              "term": recipient_hash(term[:320]), "created_at": created}
             for nid, payload, created in rows for term in sorted(set(
                 payload_recipients(payload)))]
    for start in range(0, len(terms), 500):
        NotificationLookup.insert_many(terms[start:start + 500]).on_conflict_ignore().execute()


def scrub(workspace_id: Any, ids: Iterable[uuid.UUID], now: dt.datetime | None = None,
          dry_run: bool = False) -> Counter:
    """Purge these notifications of the workspace, those finished and not purged yet, in
    one transaction; what it removed (or would), by COUNTED. A notification still queued
    or sending is never touched (the caller keeps it for later)."""
    ids = list(ids)
    done: Counter = Counter({name: 0 for name in COUNTED})
    if not ids:
        return done
    at = (now or utcnow()).replace(microsecond=0)
    with database.atomic():
        query = Notification.select(
            Notification.id, Notification.payload, Notification.created_at).where(
                Notification.id.in_(ids), Notification.workspace == workspace_id,
                Notification.status.in_([str(s) for s in FINISHED]))
        if not dry_run and database.obj.for_update:
            query = query.for_update()  # a status change waits for the purge, not the reverse
        rows = [(n.id, n.payload, n.created_at) for n in query if not is_purged(n.payload)]
        chosen = [nid for nid, _, _ in rows]
        if not chosen:
            return done
        texts = [str(nid) for nid in chosen] + [nid.hex for nid in chosen]
        attempts = _among(DeliveryAttempt.notification, chosen)
        tracking = _among(TrackingEvent.notification, chosen)
        events = _among(NotificationEvent.notification, chosen)
        finished_callbacks = (_among(Callback.notification_id, chosen)
                              & Callback.status.in_(("delivered", "failed")))
        caught = _among(CaughtWebhook.notification_id, texts, "text")
        inbox = _among(InboxMessage.notification_id, texts, "text")
        done["notifications"] = len(chosen)
        if dry_run:
            done["attempts"] = DeliveryAttempt.select().where(attempts).count()
            done["events"] = NotificationEvent.select().where(events).count()
            done["trackingEvents"] = TrackingEvent.select().where(tracking).count()
            done["callbacks"] = Callback.select().where(finished_callbacks).count()
            done["caughtWebhooks"] = CaughtWebhook.select().where(caught).count()
            done["inboxMessages"] = InboxMessage.select().where(inbox).count()
            return done
        _lookup(rows, workspace_id)
        Notification.update(payload={PURGED_KEY: at.isoformat() + "Z"}, last_error=None,
                            idempotency_key=None, idempotency_digest=None).where(
            _among(Notification.id, chosen)).execute()
        _rehash(DeliveryAttempt, DeliveryAttempt.recipient, attempts)
        done["attempts"] = DeliveryAttempt.update(response_excerpt=None, error=None).where(
            attempts).execute()
        for attempt_id, tried in DeliveryAttempt.select(
                DeliveryAttempt.id, DeliveryAttempt.providers_tried).where(
                attempts, DeliveryAttempt.providers_tried.is_null(False)).tuples():
            DeliveryAttempt.update(providers_tried=_stripped(tried)).where(
                DeliveryAttempt.id == attempt_id).execute()
        _rehash(TrackingEvent, TrackingEvent.recipient, tracking)
        done["trackingEvents"] = TrackingEvent.update(url=None).where(tracking).execute()
        _rehash(NotificationEvent, NotificationEvent.recipient, events)
        done["events"] = NotificationEvent.update(detail=None).where(events).execute()
        _rehash(Callback, Callback.recipient, finished_callbacks)
        done["callbacks"] = Callback.update(body="", error=None).where(
            finished_callbacks).execute()
        done["caughtWebhooks"] = CaughtWebhook.delete().where(caught).execute()
        done["inboxMessages"] = InboxMessage.delete().where(inbox).execute()
    return done


def erase_callbacks(workspace_id: Any, key: str, ids: list[uuid.UUID]) -> int:
    """An erasure's callbacks: those to ``key`` or of its notifications, whatever their
    state, emptied with their recipient hashed. One not sent yet is never sent: it ends
    failed, "erased" (the person asked for their data to go, this included)."""
    from peewee import fn

    mine = (Callback.workspace == workspace_id) & (
        (fn.LOWER(Callback.recipient) == key) | Callback.notification_id.in_(ids or [None]))
    Callback.update(status="failed", error="erased before it was sent",
                    next_attempt_at=None).where(
        mine, Callback.status.not_in(("delivered", "failed"))).execute()
    changed = _rehash(Callback, Callback.recipient, mine)
    return max(changed, Callback.update(body="").where(mine, Callback.body != "").execute())
