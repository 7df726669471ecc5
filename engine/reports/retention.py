"""Retention: notifications older than HERALD_REPORT_RETENTION_DAYS go, with their
attempts and events, in small batches (each its own short transaction, so no table is
locked for long); a day goes only once it is rolled up, so its counts stay."""

from __future__ import annotations

import datetime as dt
import logging
import time

from engine import runtime
from engine.database.db import database
from engine.database.models import Notification, Workspace, utcnow
from engine.database.models.reports import ReportDay
from engine.reports import whole_months
from engine.reports.projection import N
from engine.reports.rollups import as_date, as_time

log = logging.getLogger("herald.reports")
BATCH = 500
# One run stops after this long; the next run goes on where it stopped.
RUN_SECONDS = 20.0


def cutoff(now: dt.datetime | None = None) -> dt.datetime:
    days = runtime.settings().report_retention_days
    return dt.datetime.combine((now or utcnow()).date() - dt.timedelta(days=days), dt.time())


def _delete_batch(where: str, params: tuple) -> int:
    """Delete up to BATCH notifications matching ``where`` (their rows in other tables go
    by ON DELETE CASCADE), in one short transaction."""
    db = database.obj
    sql = (f'DELETE FROM "{N}" WHERE "id" IN (SELECT "id" FROM "{N}" WHERE {where} '
           f"LIMIT {BATCH})")
    with database.atomic():
        return db.execute_sql(sql, params).rowcount


def prune(now: dt.datetime | None = None, run_seconds: float = RUN_SECONDS) -> int:
    """Delete the detail of rolled-up days before the cutoff, and test sends before it;
    returns the notifications deleted."""
    limit = cutoff(now)
    deadline = time.monotonic() + run_seconds
    db = database.obj
    p = db.param
    at = Notification.created_at.db_value
    deleted = whole_months.drop(limit)  # PostgreSQL: whole months as partition drops
    days = (ReportDay.select().where(ReportDay.day < limit.date(), ReportDay.pruned == False)  # noqa: E712
            .order_by(ReportDay.day))
    for row in days:
        day = as_date(row.day)
        start = dt.datetime.combine(day, dt.time())
        if as_time(row.rolled_until) < start + dt.timedelta(days=1):
            continue  # not counted to its end yet
        params = (Notification.workspace.db_value(row.workspace_id), at(start),
                  at(start + dt.timedelta(days=1)))
        while (count := _delete_batch(f'"workspace_id" = {p} AND "created_at" >= {p} AND '
                                      f'"created_at" < {p}', params)):
            deleted += count
            if time.monotonic() > deadline:
                return deleted
        ReportDay.update(pruned=True).where(ReportDay.id == row.id).execute()
    # Test sends are never rolled up (nor counted); through the workspace's time index.
    for (workspace_id,) in Workspace.select(Workspace.id).tuples():
        params = (Notification.workspace.db_value(workspace_id), at(limit), True)
        while time.monotonic() <= deadline and (count := _delete_batch(
                f'"workspace_id" = {p} AND "created_at" < {p} AND "is_test" = {p}', params)):
            deleted += count
    if deleted:
        log.info("retention: deleted %d notifications created before %s", deleted, limit)
    return deleted
