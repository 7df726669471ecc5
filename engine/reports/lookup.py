"""The lookup index: each notification's recipients and correlation id, written by the
report job after the send, never on it (a send stays one INSERT, docs/reports.md).

Rows the job has not reached yet, those created since its high-water mark less a margin,
are searched in the notification rows themselves (engine/reports/projection.py), so a
search finds a notification the moment it is accepted.
"""

from __future__ import annotations

import datetime as dt
import json
import time
import uuid
from typing import Any

from engine.database.db import database
from engine.database.models import Notification, Workspace, utcnow
from engine.database.models.reports import NotificationLookup, ReportCursor
from engine.reports.projection import HOST_PATTERN, LOOKUP, N, is_postgres
from engine.reports.recipients import payload_recipients

CURSOR = "lookup"
# A row committed this long after its created_at is still indexed (an API process's
# transaction and clock skew are far shorter).
MARGIN = dt.timedelta(minutes=5)
BATCH = 5000
RUN_SECONDS = 30.0


def tail_from() -> dt.datetime | None:
    """From when rows may not be indexed yet; None before the job's first run."""
    row = ReportCursor.get_or_none(ReportCursor.name == CURSOR)
    return row.at - MARGIN if row else None


def _terms(payload_keys: Any, url: Any, correlation_id: str) -> list[tuple[str, str]]:
    keys = json.loads(payload_keys) if isinstance(payload_keys, str) else payload_keys
    payload = {"suppressionKeys": keys or [], "url": url}
    terms = [("r", term[:320]) for term in payload_recipients(payload)]
    return [*terms, ("c", correlation_id)]


def _unindexed(workspace_id: Any, since: dt.datetime) -> list[tuple]:
    """Up to BATCH notifications of the workspace created since ``since`` with no lookup
    rows: (id, created_at, correlation id, suppression keys as JSON, webhook URL)."""
    db = database.obj
    p = db.param
    if is_postgres(db):
        keys, url = "n.\"payload\"::json -> 'suppressionKeys'", "n.\"payload\"::json ->> 'url'"
    else:
        keys = "json_extract(n.\"payload\", '$.suppressionKeys')"
        url = "json_extract(n.\"payload\", '$.url')"
    sql = (f'SELECT n."id", n."created_at", n."correlation_id", {keys}, {url} FROM "{N}" n '
           f'WHERE n."workspace_id" = {p} AND n."created_at" >= {p} AND NOT EXISTS (SELECT 1 '
           f'FROM "{LOOKUP}" l WHERE l."notification_id" = n."id" AND l."kind" = \'c\') '
           f'ORDER BY n."created_at" LIMIT {BATCH}')
    params = (Notification.workspace.db_value(workspace_id),
              Notification.created_at.db_value(since))
    return list(db.execute_sql(sql, params).fetchall())


# PostgreSQL indexes a batch in one statement (a million rows in seconds, not minutes):
# the same terms as _terms, the webhook host read by a pattern instead of urlsplit.
_PG_BATCH = f"""WITH batch AS (
  SELECT n."id", n."workspace_id", n."created_at", n."correlation_id", n."payload"::json AS p
  FROM "{N}" n WHERE n."workspace_id" = %s AND n."created_at" >= %s AND NOT EXISTS (
    SELECT 1 FROM "{LOOKUP}" l WHERE l."notification_id" = n."id" AND l."kind" = 'c')
  ORDER BY n."created_at" LIMIT {BATCH * 10}),
terms AS (
  SELECT "id", "workspace_id", "created_at", 'c' AS kind, "correlation_id" AS term FROM batch
  UNION ALL
  SELECT "id", "workspace_id", "created_at", 'r', left(k, 320) FROM batch,
    json_array_elements_text(CASE WHEN json_typeof(p -> 'suppressionKeys') = 'array'
                             THEN p -> 'suppressionKeys' ELSE '[]'::json END) AS k
  UNION ALL
  SELECT "id", "workspace_id", "created_at", 'r', lower(substring(p ->> 'url' FROM
    '{HOST_PATTERN}')) FROM batch WHERE p ->> 'url' IS NOT NULL),
ins AS (
  INSERT INTO "{LOOKUP}" ("workspace_id", "notification_id", "kind", "term", "created_at")
  SELECT "workspace_id", "id", kind, term, "created_at" FROM terms WHERE term IS NOT NULL
  ON CONFLICT DO NOTHING)
SELECT COUNT(*), MAX("created_at") FROM batch"""


def _index_postgres(workspace_id: Any, since: dt.datetime, deadline: float
                    ) -> tuple[int, dt.datetime | None, bool]:
    """Index the unindexed notifications of the workspace since ``since``, in batches, until
    ``deadline``: (rows, the newest indexed, whether every row was reached)."""
    db = database.obj
    total, newest = 0, None
    while True:
        with database.atomic():
            count, latest = db.execute_sql(_PG_BATCH, (
                Notification.workspace.db_value(workspace_id),
                Notification.created_at.db_value(since))).fetchone()
        total += count
        if latest is not None:
            newest = latest if newest is None else max(newest, latest)
            since = latest  # the batch took every row before it: never scanned again
        if count < BATCH * 10:
            return total, newest, True
        if time.monotonic() > deadline:
            return total, newest, False


def _index_python(workspace_id: Any, since: dt.datetime, deadline: float
                  ) -> tuple[int, dt.datetime | None, bool]:
    """As _index_postgres, the terms read in Python (SQLite: a development database)."""
    total, newest = 0, None
    while True:
        rows = _unindexed(workspace_id, since)
        lookups = []
        for nid, created, correlation, keys, url in rows:
            created = created if isinstance(created, dt.datetime) else \
                dt.datetime.fromisoformat(str(created))
            newest = since = created if newest is None else max(newest, created)
            lookups += [{"workspace": workspace_id, "notification": uuid.UUID(str(nid)),
                         "kind": kind, "term": term, "created_at": created}
                        for kind, term in _terms(keys, url, correlation)]
        if lookups:
            with database.atomic():
                for start in range(0, len(lookups), 500):
                    NotificationLookup.insert_many(
                        lookups[start:start + 500]).on_conflict_ignore().execute()
        total += len(rows)
        if len(rows) < BATCH:
            return total, newest, True
        if time.monotonic() > deadline:
            return total, newest, False


def index_new(now: dt.datetime | None = None, run_seconds: float = RUN_SECONDS) -> int:
    """Index the notifications created since the high-water mark, for at most about
    ``run_seconds`` (the next run goes on); returns rows indexed. The mark moves to where
    every workspace is indexed, so a workspace cut short is searched from there."""
    now = now or utcnow()
    cursor = ReportCursor.get_or_none(ReportCursor.name == CURSOR)
    since = cursor.at - MARGIN if cursor else dt.datetime(1970, 1, 1)
    deadline = time.monotonic() + run_seconds
    index = _index_postgres if is_postgres(database.obj) else _index_python
    written, mark = 0, now
    for (workspace_id,) in Workspace.select(Workspace.id).tuples():
        count, newest, complete = index(workspace_id, since, deadline)
        written += count
        if not complete:
            mark = min(mark, newest or since + MARGIN)
    if cursor is None or mark > cursor.at:
        (ReportCursor.insert(name=CURSOR, at=mark)
         .on_conflict(conflict_target=[ReportCursor.name], update={ReportCursor.at: mark})
         .execute())
    return written


def recipients_of(ids: list[uuid.UUID]) -> dict[uuid.UUID, list[str]]:
    """The indexed recipients of these notifications (missing: not indexed yet)."""
    found: dict[uuid.UUID, list[str]] = {}
    for start in range(0, len(ids), 500):
        rows = (NotificationLookup.select(NotificationLookup.notification,
                                          NotificationLookup.term)
                .where(NotificationLookup.notification.in_(ids[start:start + 500]),
                       NotificationLookup.kind == "r")
                .order_by(NotificationLookup.term).tuples())
        for nid, term in rows:
            found.setdefault(uuid.UUID(str(nid)), []).append(term)
    return found
