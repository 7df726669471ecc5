"""Daily rollups: the counts of a day's notifications kept in ReportRollup, so a month of
counts reads a few hundred rows instead of every notification, and outlives the
notifications (retention).

Each day's rollup covers its notifications created before ``ReportDay.rolled_until``. The
report job moves that mark forward each minute, to GRACE ago or to the oldest notification
of the day still queued or sending, whichever is earlier, adding the counts of the
notifications it passes. A counted notification never changes status again (only an
unfinished one does); an event on it later (an open, a bounce) updates the rollup in the
event's own transaction (engine/reports/events.py). So the rollups are exact at every
moment, and a page reads from the notifications only the minutes since the mark.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Iterable
from typing import Any

from peewee import SqliteDatabase

from engine.database.db import database
from engine.database.models import Notification, Workspace, utcnow
from engine.database.models.reports import NO_TEMPLATE, ReportDay, ReportRollup
from engine.reports import projection
from engine.reports.filters import ReportFilters

log = logging.getLogger("herald.reports")
# How long after its creation a notification is surely committed (the API commits within
# milliseconds); the mark never passes a time less than this ago.
GRACE = dt.timedelta(minutes=2)
RUN_SECONDS = 30.0
DAY = dt.timedelta(days=1)
FLAGS = ("complained", "opened", "clicked", "unsubscribed")


def as_date(value: Any) -> dt.date:
    return value if isinstance(value, dt.date) else dt.date.fromisoformat(str(value)[:10])


def as_time(value: Any) -> dt.datetime:
    return value if isinstance(value, dt.datetime) else dt.datetime.fromisoformat(str(value))


def add(workspace_id: Any, day: dt.date, groups: Iterable[tuple], sign: int = 1) -> None:
    """Add (or with ``sign`` -1, take away) counts: rows of (template, channel, status,
    accepted, complained, opened, clicked, unsubscribed)."""
    for template, channel, status, accepted, *flags in groups:
        values = {"workspace": workspace_id, "day": day,
                  "template_id": template or NO_TEMPLATE, "channel": channel,
                  "status": status, "accepted": sign * int(accepted),
                  **{name: sign * int(v or 0) for name, v in zip(FLAGS, flags, strict=True)}}
        columns = ("accepted", *FLAGS)
        (ReportRollup.insert(**values)
         .on_conflict(conflict_target=[ReportRollup.workspace, ReportRollup.day,
                                       ReportRollup.template_id, ReportRollup.channel,
                                       ReportRollup.status],
                      update={getattr(ReportRollup, c): getattr(ReportRollup, c) + values[c]
                              for c in columns})
         .execute())


def lock_day(workspace_id: Any, day: dt.date, exclusive: bool) -> ReportDay | None:
    """The day's row, locked for the transaction (the job: exclusive; an event: shared);
    SQLite takes its write lock at the transaction's start instead."""
    query = ReportDay.select().where(ReportDay.workspace == workspace_id, ReportDay.day == day)
    if not isinstance(database.obj, SqliteDatabase):
        query = query.for_update("FOR UPDATE" if exclusive else "FOR SHARE")
    return query.first()


def _oldest_unfinished(workspace_id: Any, start: dt.datetime, end: dt.datetime
                       ) -> dt.datetime | None:
    return (Notification.select(Notification.created_at)
            .where(Notification.workspace == workspace_id, Notification.is_test == False,  # noqa: E712
                   Notification.status.in_(["queued", "sending"]),
                   Notification.created_at >= start, Notification.created_at < end)
            .order_by(Notification.created_at).scalar())


def advance(workspace_id: Any, day: dt.date, now: dt.datetime) -> bool:
    """Move the day's mark as far as it may go, adding the counts it passes."""
    day_start = dt.datetime.combine(day, dt.time())
    limit = min(day_start + DAY, now - GRACE)
    with database.atomic():
        ReportDay.insert(workspace=workspace_id, day=day, rolled_until=day_start) \
            .on_conflict_ignore().execute()
        row = lock_day(workspace_id, day, exclusive=True)
        start = as_time(row.rolled_until)
        if limit <= start:
            return False
        unfinished = _oldest_unfinished(workspace_id, start, limit)
        if unfinished is not None:
            limit = min(limit, as_time(unfinished))
        if limit <= start:
            return False
        db = database.obj
        q = projection.Query(db)
        f = ReportFilters(workspace_id, day, day)
        sql = projection.grouped(db, projection.projected(
            projection.selection(q, f, spans=[(start, limit)])))
        add(workspace_id, day, [row[1:] for row in db.execute_sql(sql, q.params).fetchall()])
        ReportDay.update(rolled_until=limit).where(ReportDay.id == row.id).execute()
    return True


def _days_with_sends(workspace_id: Any, start: dt.datetime, end: dt.datetime) -> list[dt.date]:
    db = database.obj
    p = db.param
    day = projection.day_of(db, '"created_at"')
    sql = (f'SELECT DISTINCT {day} FROM "{projection.N}" WHERE "workspace_id" = {p} AND '
           f'"created_at" >= {p} AND "created_at" < {p}')
    at = Notification.created_at.db_value
    rows = db.execute_sql(sql, (Notification.workspace.db_value(workspace_id), at(start),
                                at(end))).fetchall()
    return sorted(as_date(d) for (d,) in rows)


def _candidates(workspace_id: Any, now: dt.datetime) -> list[dt.date]:
    """Days whose mark may move: those not rolled up to their end, and days with sends
    after the last day that has a row."""
    rows = list(ReportDay.select(ReportDay.day, ReportDay.rolled_until)
                .where(ReportDay.workspace == workspace_id))
    days = {as_date(r.day) for r in rows
            if as_time(r.rolled_until) < dt.datetime.combine(as_date(r.day), dt.time()) + DAY}
    last = max((as_date(r.day) for r in rows), default=None)
    if last is None:
        first = (Notification.select(Notification.created_at)
                 .where(Notification.workspace == workspace_id)
                 .order_by(Notification.created_at).scalar())
        start = dt.datetime.combine(as_time(first).date(), dt.time()) if first else None
    else:
        start = dt.datetime.combine(last, dt.time()) + DAY
    if start is not None and start < now:
        days.update(_days_with_sends(workspace_id, start, now + DAY))
    return sorted(days)


def close_days(now: dt.datetime | None = None, run_seconds: float = RUN_SECONDS) -> int:
    """Move every day's mark forward, oldest first, for about ``run_seconds`` at most
    (the next run goes on); returns how many days moved."""
    now = now or utcnow()
    deadline = time.monotonic() + run_seconds
    moved = 0
    for (workspace_id,) in Workspace.select(Workspace.id).tuples():
        for day in _candidates(workspace_id, now):
            if time.monotonic() > deadline:
                return moved
            moved += advance(workspace_id, day, now)
    return moved
