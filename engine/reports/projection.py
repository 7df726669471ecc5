"""The one definition of what a notification counts as, written once as SQL.

Every report reads notifications through ``projected``: the counts group its rows, the
feed pages through them, the export streams them, the daily rollups store their groups.
So the numbers and the rows agree by construction (docs/reports.md, "Agreement").

A notification's report status is ``bounced`` when a hard bounce was reported for it (a
provider's webhook, a DSN) or when its only attempt was refused in the SMTP session as a
hard bounce (a ``suppressed`` attempt of a ``suppressed`` notification); else its own
status (queued, sending, delivered, failed, suppressed). Complained, opened, clicked and
unsubscribed are flags: at least one such event. Test sends are never selected.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from peewee import Database, PostgresqlDatabase

from engine.database.db import database
from engine.database.models import DeliveryAttempt, Notification, TrackingEvent
from engine.database.models.reports import NotificationEvent, NotificationLookup
from engine.database.secrets import recipient_hash
from engine.reports.filters import ReportFilters

N = Notification._meta.table_name
EVENTS = NotificationEvent._meta.table_name
TRACKING = TrackingEvent._meta.table_name
ATTEMPTS = DeliveryAttempt._meta.table_name
LOOKUP = NotificationLookup._meta.table_name
# The columns of a projected row, in order.
COLUMNS = ("id", "created_at", "template_id", "version_number", "channel", "correlation_id",
           "status", "complained", "opened", "clicked", "unsubscribed")


def is_postgres(db: Database) -> bool:
    return isinstance(db, PostgresqlDatabase)


def day_of(db: Database, column: str) -> str:
    """The UTC day of a timestamp column, as SQL."""
    return f"CAST({column} AS DATE)" if is_postgres(db) else f"date({column})"


class Query:
    """SQL text and its parameters, built in order."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.p = db.param
        self.params: list[Any] = []

    def value(self, value: Any) -> str:
        self.params.append(value)
        return self.p


def _bounced(q: Query, workspace: Any) -> str:
    """Whether notification ``n`` bounced: uncorrelated sets, each computed once."""
    return (f'(n."id" IN (SELECT "notification_id" FROM "{EVENTS}" WHERE "workspace_id" = '
            f"{q.value(workspace)} AND \"kind\" = 'bounced') OR (n.\"status\" = 'suppressed' "
            f'AND n."id" IN (SELECT "notification_id" FROM "{ATTEMPTS}" '
            "WHERE \"outcome\" = 'suppressed')))")


def _search(q: Query, f: ReportFilters, tail_from: Any) -> list[str]:
    """Recipient and correlation id conditions: through the lookup index, and for the
    newest rows the indexer has not reached yet, through the row itself."""
    conditions = []
    ws = Notification.workspace.db_value(f.workspace_id)
    for kind, term in (("r", f.recipient), ("c", f.correlation_id)):
        if term is None:
            continue
        indexed = (f'SELECT "notification_id" FROM "{LOOKUP}" WHERE "workspace_id" = '
                   f'{q.value(ws)} AND "kind" = {q.value(kind)} AND "term" ')
        # A purged notification's recipients are indexed as their keyed hash.
        indexed += (f'= {q.value(term)}' if kind == "c" else
                    f'IN ({q.value(term)}, {q.value(recipient_hash(term))})')
        recent = (f'SELECT n2."id" FROM "{N}" n2 WHERE n2."workspace_id" = {q.value(ws)} '
                  f'AND n2."created_at" >= {q.value(tail_from)} AND ')
        if kind == "c":
            recent += f'n2."correlation_id" = {q.value(term)}'
        else:
            recent += (f'(n2."payload" LIKE {q.value(_needle(term))} ESCAPE \'!\' OR '
                       f'{webhook_host(q.db, "n2")} = {q.value(term)})')
        conditions.append(f'n."id" IN ({indexed} UNION {recent})')
    return conditions


# A webhook's host in its URL, lower-cased (what urlsplit(url).hostname gives for the URLs
# the API accepts); lookup.py indexes the same.
HOST_PATTERN = r"^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?([^/:?#\[\]]+)"


def _url_host(url: str | None) -> str | None:
    try:
        return urlsplit(url).hostname if url else None
    except ValueError:
        return None


def webhook_host(db: Database, alias: str) -> str:
    """SQL of the webhook host of notification ``alias`` (NULL for other channels)."""
    if is_postgres(db):
        return (f'lower(substring({alias}."payload"::json ->> \'url\' FROM '
                f"'{HOST_PATTERN}'))")
    db.register_function(_url_host, "herald_url_host", 1)  # this thread's connection too
    return f'herald_url_host(json_extract({alias}."payload", \'$.url\'))'


def _needle(term: str) -> str:
    """A LIKE pattern finding the key as a JSON string in the payload's suppressionKeys."""
    escaped = term.replace("!", "!!").replace("%", "!%").replace("_", "!_")
    return f'%"{escaped}"%'


@contextlib.contextmanager
def snapshot(work_mem_mb: int | None = None) -> Iterator[None]:
    """One transaction for a report's statements: on PostgreSQL one snapshot (REPEATABLE
    READ), so the rolled-up days read first and the counts read next agree; no JIT (its
    compilation cost more than these queries take); and index probes priced as on SSDs,
    so a day's events are looked up by notification instead of every event being read
    into a hash (0.8 s instead of 0.05 s on a day of 11,000 of a million)."""
    db = database.obj
    outer = db.in_transaction()
    with database.atomic():
        if is_postgres(db):
            if not outer:
                db.execute_sql("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            db.execute_sql("SET LOCAL jit = off; SET LOCAL random_page_cost = 1.1")
            if work_mem_mb:  # an export's hashes and sort in memory, not in batches on disk
                db.execute_sql(f"SET LOCAL work_mem = '{int(work_mem_mb)}MB'")
        yield


Span = tuple[dt.datetime, dt.datetime]


def selection(q: Query, f: ReportFilters, *, spans: list[Span] | None = None,
              tail_from: Any = None, after: tuple[Any, Any] | None = None,
              limit: int | None = None, notification_id: Any = None) -> str:
    """SELECT of the notifications ``f`` names (``sel``), only those created within
    ``spans`` ([start, end) times) when given: test sends never."""
    ws = Notification.workspace.db_value(f.workspace_id)
    at = Notification.created_at.db_value
    where = [f'n."workspace_id" = {q.value(ws)}', f'n."is_test" = {q.value(False)}']
    spans = spans if spans is not None else [(f.start_at, f.end_before)]
    where.append("(" + " OR ".join(
        f'(n."created_at" >= {q.value(at(start))} AND n."created_at" < {q.value(at(end))})'
        for start, end in spans) + ")")
    if f.template_id is not None:
        where.append(f'n."template_id" = {q.value(Notification.template.db_value(f.template_id))}')
    if f.channel is not None:
        where.append(f'n."channel" = {q.value(f.channel)}')
    if f.status == "bounced":
        where.append(_bounced(q, ws))
    elif f.status is not None:
        where.append(f'n."status" = {q.value(f.status)}')
        where.append(f"NOT {_bounced(q, ws)}")
    where.extend(_search(q, f, tail_from if tail_from is not None else at(f.start_at)))
    if f.list_pattern is not None:
        # LIKE, not a range: a range of text compares by collation on PostgreSQL.
        where.append(f'n."correlation_id" LIKE {q.value(f.list_pattern)}')
    if notification_id is not None:
        where.append(f'n."id" = {q.value(Notification.id.db_value(notification_id))}')
    if after is not None:
        where.append(f'(n."created_at", n."id") < ({q.value(at(after[0]))}, '
                     f'{q.value(Notification.id.db_value(after[1]))})')
    sql = ('SELECT n."id", n."created_at", n."template_id", n."version_number", n."channel", '
           f'n."correlation_id", n."status" FROM "{N}" n WHERE ' + " AND ".join(where))
    if limit is not None:
        sql += f' ORDER BY n."created_at" DESC, n."id" DESC LIMIT {int(limit)}'
    return sql


def projected(selection_sql: str) -> str:
    """WITH sel, ev, fl, proj: ``proj`` holds COLUMNS for every selected notification."""
    return f"""WITH sel AS ({selection_sql}),
ev AS (
  SELECT e."notification_id" AS nid, e."kind" AS k FROM sel
   JOIN "{EVENTS}" e ON e."notification_id" = sel."id"
   WHERE e."kind" IN ('bounced', 'complained')
  UNION ALL
  SELECT t."notification_id", t."kind" FROM sel
   JOIN "{TRACKING}" t ON t."notification_id" = sel."id"
  UNION ALL
  SELECT a."notification_id", 'refused' FROM sel
   JOIN "{ATTEMPTS}" a ON a."notification_id" = sel."id"
   WHERE sel."status" = 'suppressed' AND a."outcome" = 'suppressed'),
fl AS (
  SELECT nid,
   MAX(CASE WHEN k IN ('bounced', 'refused') THEN 1 ELSE 0 END) AS b,
   MAX(CASE WHEN k = 'complained' THEN 1 ELSE 0 END) AS c,
   MAX(CASE WHEN k = 'open' THEN 1 ELSE 0 END) AS o,
   MAX(CASE WHEN k = 'click' THEN 1 ELSE 0 END) AS cl,
   MAX(CASE WHEN k = 'unsubscribe' THEN 1 ELSE 0 END) AS u
  FROM ev GROUP BY nid),
proj AS (
  SELECT sel."id", sel."created_at", sel."template_id", sel."version_number", sel."channel",
   sel."correlation_id",
   CASE WHEN fl.b = 1 THEN 'bounced' ELSE sel."status" END AS "status",
   COALESCE(fl.c, 0) AS "complained", COALESCE(fl.o, 0) AS "opened",
   COALESCE(fl.cl, 0) AS "clicked", COALESCE(fl.u, 0) AS "unsubscribed"
  FROM sel LEFT JOIN fl ON fl.nid = sel."id")"""


def grouped(db: Database, projection_sql: str) -> str:
    """Counts of ``proj`` by (day, template, channel, status): the rollup's grain."""
    day = day_of(db, '"created_at"')
    return (f'{projection_sql} SELECT {day} AS "day", "template_id", "channel", "status", '
            'COUNT(*), SUM("complained"), SUM("opened"), SUM("clicked"), SUM("unsubscribed") '
            f'FROM proj GROUP BY {day}, "template_id", "channel", "status"')
