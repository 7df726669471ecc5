"""CSV export of the feed under the current filters, streamed: rows leave as they are read
(a server-side cursor on PostgreSQL), so a million rows never sit in memory at once.

On PostgreSQL the database writes each row's cells as text and Python only hands them to
the csv module (hundreds of thousands of rows a second); SQLite's rows are turned into the
same cells in Python (_as_cells).
"""

from __future__ import annotations

import csv
import io
import uuid
from collections.abc import Iterator

from engine.database.db import database
from engine.database.models import Notification, Template
from engine.formats.spreadsheet_cells import inert, pg_inert
from engine.reports import lookup, projection
from engine.reports.counts import template_names
from engine.reports.feed import as_datetime, as_uuid, recipients
from engine.reports.filters import ReportFilters

HEADER = ("correlationId", "notificationId", "createdAt", "templateId", "templateName",
          "versionNumber", "channel", "recipient", "status", "complained", "opened",
          "clicked", "unsubscribed")
CHUNK = 5000
EXPORT_WORK_MEM_MB = 128  # per export, for its few hash tables and its sort (PostgreSQL)
RECIPIENT = HEADER.index("recipient")
_cell = inert  # engine/formats/spreadsheet_cells.py: one rule for every CSV
# A recipient kept as a keyed hash (purged or erased) reads "purged", as in the feed.
_SHOWN = "CASE WHEN substr({0}\"term\", 1, 2) = 'h:' THEN 'purged' ELSE {0}\"term\" END"
_pg_cell = pg_inert


def _pg_sql(f: ReportFilters) -> tuple[str, list]:
    """Every row's cells as text; the recipients read from the lookup index by the range's
    times (one scan), not notification by notification."""
    db = database.obj
    q = projection.Query(db)
    sql = projection.projected(projection.selection(q, f, tail_from=lookup.tail_from()))
    ws = Notification.workspace.db_value(f.workspace_id)
    at = Notification.created_at.db_value
    sql += (
        ', rcp AS (SELECT l."notification_id" AS nid, '
        f"string_agg({_SHOWN.format('l.')}, ' ' ORDER BY l.\"term\") AS terms "
        f'FROM "{projection.LOOKUP}" l WHERE l."workspace_id" = {q.value(ws)} '
        f"AND l.\"kind\" = 'r' AND l.\"created_at\" >= {q.value(at(f.start_at))} "
        f'AND l."created_at" < {q.value(at(f.end_before))} GROUP BY l."notification_id") '
        f'SELECT {_pg_cell("proj.correlation_id")}, proj."id"::text, '
        "to_char(proj.\"created_at\", 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), "
        "COALESCE(proj.\"template_id\"::text, ''), "
        f"COALESCE({_pg_cell('t.name')}, ''), proj.\"version_number\", proj.\"channel\", "
        f'{_pg_cell("rcp.terms")}, proj."status", proj."complained", proj."opened", '
        'proj."clicked", proj."unsubscribed" FROM proj '
        'LEFT JOIN rcp ON rcp.nid = proj."id" '
        f'LEFT JOIN "{Template._meta.table_name}" t ON t."id" = proj."template_id" '
        'ORDER BY proj."created_at" DESC, proj."id" DESC')
    return sql, q.params


def _sqlite_sql(f: ReportFilters) -> tuple[str, list]:
    """The rows of the export with their recipients (SQLite: a development database)."""
    db = database.obj
    q = projection.Query(db)
    sql = projection.projected(projection.selection(q, f, tail_from=lookup.tail_from()))
    sql += (f', rcp AS (SELECT "notification_id" AS nid, group_concat({_SHOWN.format("")}, '
            "' ') AS terms "
            f'FROM "{projection.LOOKUP}" WHERE "kind" = \'r\' AND "notification_id" IN '
            '(SELECT "id" FROM sel) GROUP BY "notification_id") '
            'SELECT proj.*, rcp.terms FROM proj LEFT JOIN rcp ON rcp.nid = proj."id" '
            'ORDER BY proj."created_at" DESC, proj."id" DESC')
    return sql, q.params


def _as_cells(names: dict[str, str], chunk: list[tuple]) -> list[tuple]:
    """SQLite's rows as the cells PostgreSQL writes itself (_pg_sql)."""
    cells = []
    for (nid, created, template, version, channel, correlation, status, complained,
         opened, clicked, unsubscribed, terms) in chunk:
        template_id = str(as_uuid(template)) if template else ""
        cells.append((_cell(correlation), str(as_uuid(nid)),
                      as_datetime(created).isoformat(timespec="milliseconds") + "Z",
                      template_id, _cell(names.get(template_id, "")), version, channel,
                      None if terms is None else _cell(terms), status, complained, opened,
                      clicked, unsubscribed))
    return cells


def _rows(f: ReportFilters) -> Iterator[list[tuple]]:
    """The export's cells in chunks, through a server-side cursor on PostgreSQL."""
    db = database.obj
    postgres = projection.is_postgres(db)
    with projection.snapshot(work_mem_mb=EXPORT_WORK_MEM_MB):
        if postgres:
            sql, params = _pg_sql(f)
            cursor = db.connection().cursor(name=f"herald_export_{uuid.uuid4().hex}",
                                            withhold=True)
            cursor.itersize = CHUNK
            cursor.execute(sql, params)
        else:
            names = {str(t): n for t, n in known_templates(f.workspace_id).items()}
            sql, params = _sqlite_sql(f)
            cursor = db.execute_sql(sql, params)
        try:
            while chunk := cursor.fetchmany(CHUNK):
                yield chunk if postgres else _as_cells(names, chunk)
        finally:
            cursor.close()


def _with_recipients(chunk: list[tuple]) -> list[tuple]:
    """Rows the lookup index has not reached yet get their recipients from their own row."""
    missing = [uuid.UUID(row[1]) for row in chunk if row[RECIPIENT] is None]
    if not missing:
        return chunk
    late = recipients(missing)
    return [row if row[RECIPIENT] is not None else
            (*row[:RECIPIENT], _cell(" ".join(late.get(uuid.UUID(row[1]), []))),
             *row[RECIPIENT + 1:]) for row in chunk]


def export_csv(f: ReportFilters) -> Iterator[str]:
    """The CSV text, a header row first, in pieces of about CHUNK rows."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(HEADER)
    yield buffer.getvalue()
    for chunk in _rows(f):
        buffer.seek(0)
        buffer.truncate()
        writer.writerows(_with_recipients(chunk))
        yield buffer.getvalue()


def known_channels(workspace_id: object) -> list[str]:
    """The channels of the workspace's templates, sorted (a filter's choices)."""
    return sorted({t.channel for t in Template.select(Template.channel)
                   .where(Template.workspace == workspace_id)})


def known_templates(workspace_id: object) -> dict[uuid.UUID, str]:
    """The workspace's templates (a filter's choices)."""
    ids = [t.id for t in Template.select(Template.id).where(Template.workspace == workspace_id)]
    return template_names(workspace_id, ids)
