"""What the worker and the reconciler ask about one notification beside the hot path: its
queue (a payload field, read by the database) and what its earlier attempts came
to. Each is one small query, asked only when a decision needs it."""

from __future__ import annotations

from typing import Any

from peewee import PostgresqlDatabase

from engine.database.db import database
from engine.database.models import DeliveryAttempt, Notification
from engine.database.vocabulary import Outcome


def _quoted(name: str) -> str:
    return f'"{name}"'


def payload_field(notification_id: Any, name: str) -> Any:
    """One top-level field of the payload (its channel's ``bulk_when`` field), read by the
    database (not the whole payload, which may carry megabytes of attachments): which queue
    the reconciler puts the job back on."""
    if not name.isidentifier():
        raise ValueError(f"not a payload field name: {name!r}")
    db = database.obj
    table = _quoted(Notification._meta.table_name)
    field = (f"\"payload\"::json ->> '{name}'" if isinstance(db, PostgresqlDatabase)
             else f"json_extract(\"payload\", '$.{name}')")
    row = db.execute_sql(f'SELECT {field} FROM {table} WHERE "id" = {db.param}',
                         (Notification.id.db_value(notification_id),)).fetchone()
    return row[0] if row else None


def reached_a_recipient(notification_id: Any) -> bool:
    """Whether an attempt of the notification delivered to someone: a fan-out that stopped
    part way, or gave up, counts as delivered."""
    return DeliveryAttempt.select().where(DeliveryAttempt.notification == notification_id,
                                          DeliveryAttempt.outcome == Outcome.DELIVERED).exists()


def permanent_error(notification_id: Any) -> str | None:
    """The error of a recipient an earlier slice or attempt of a fan-out failed for good,
    if any: a fan-out whose last part only met suppressed recipients still failed."""
    row = (DeliveryAttempt.select(DeliveryAttempt.error)
           .where(DeliveryAttempt.notification == notification_id,
                  DeliveryAttempt.outcome == Outcome.PERMANENT).first())
    return (row.error or "failed") if row else None
