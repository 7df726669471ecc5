"""The report job's retention by whole months (PostgreSQL, where the notification table is
partitioned by month): a month that the row-by-row retention (engine/reports/retention.py)
would empty entirely goes as one partition drop instead.

A month qualifies when it ends on or before the cutoff (HERALD_REPORT_RETENTION_DAYS, the
same for every workspace) and each of its notifications is one the row-by-row retention
deletes: a test send, or one whose workspace's day is rolled up to its end (its counts
stay in the rollups). A workspace's own retention (engine/retention/) never deletes a row,
so it does not hold a month back: its purged rows go with the month as they would go one
by one. The check reads the whole month, so it runs at most once an hour.
"""

from __future__ import annotations

import datetime as dt
import time

from engine.database import partition_drops, partitions
from engine.database.db import database

CHECK_SECONDS = 3600.0
_last_check = [float("-inf")]

# A non-test notification of the month whose workspace's day is not rolled up to its end.
_KEPT = """SELECT 1 FROM {table} n WHERE NOT n.is_test AND NOT EXISTS (
  SELECT 1 FROM report_day d WHERE d.workspace_id = n.workspace_id
  AND d.day = n.created_at::date AND d.rolled_until >= n.created_at::date + 1) LIMIT 1"""


def droppable(cutoff: dt.datetime) -> list[str]:
    """The notification partitions every row of which is past ``cutoff`` and rolled up."""
    db = database.obj
    found = []
    for name, _, high in partitions.partitions(db, "notification"):
        if high is None or high > cutoff:
            break
        if db.execute_sql(_KEPT.format(table=f'"{name}"')).fetchone():
            break  # the months after it wait too: the attempts' drop goes oldest first
        found.append(name)
    return found


def drop(cutoff: dt.datetime, force: bool = False, now: dt.datetime | None = None) -> int:
    """Drop the whole months past ``cutoff`` (and finish a drop interrupted before); the
    notifications dropped. ``force``: check now, whenever the last check was. Whatever the
    cutoff, a month that has not ended by ``now`` (the clock's) stays."""
    db = database.obj
    if not partitions.supported(db) or not partitions.is_partitioned(db, "notification"):
        return 0
    dropped = sum(partition_drops.drop_month(db, name)
                  for name in partition_drops.detached(db))
    if not force and time.monotonic() - _last_check[0] < CHECK_SECONDS:
        return dropped
    _last_check[0] = time.monotonic()
    limit = min(cutoff, partitions.month_start(now or partitions.utcnow()))
    return dropped + sum(partition_drops.drop_month(db, name) for name in droppable(limit))
