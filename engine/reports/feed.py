"""The feed: a workspace's notifications newest first, paged by keyset (created_at, id),
and one notification's timeline."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass, field
from typing import Any

from engine.database.db import database
from engine.database.models import Notification
from engine.database.vocabulary import shown_recipient
from engine.reports import lookup, projection
from engine.reports.counts import template_names
from engine.reports.filters import FilterError, ReportFilters
from engine.reports.recipients import payload_recipients

PAGE_SIZE = 50


@dataclass
class FeedRow:
    id: uuid.UUID
    created_at: dt.datetime
    template_id: uuid.UUID | None
    template_name: str
    version_number: int
    channel: str
    correlation_id: str
    status: str
    complained: bool
    opened: bool
    clicked: bool
    unsubscribed: bool
    recipients: list[str] = field(default_factory=list)


@dataclass
class FeedPage:
    rows: list[FeedRow]
    next_cursor: str | None  # pass back as ``cursor`` for the next (older) page


def encode_cursor(created_at: dt.datetime, notification_id: uuid.UUID) -> str:
    return f"{created_at.isoformat()}_{notification_id.hex}"


def decode_cursor(cursor: str) -> tuple[dt.datetime, uuid.UUID]:
    """The position a cursor names; anything else is a FilterError (it is typed by users)."""
    at, _, ident = cursor.strip().partition("_")
    try:
        return dt.datetime.fromisoformat(at).replace(tzinfo=None), uuid.UUID(hex=ident)
    except ValueError:
        raise FilterError("cursor", "not a position in this feed") from None


def as_datetime(value: Any) -> dt.datetime:
    return value if isinstance(value, dt.datetime) else dt.datetime.fromisoformat(str(value))


def as_uuid(value: Any) -> uuid.UUID | None:
    return None if value is None else uuid.UUID(str(value))


def feed(f: ReportFilters, cursor: str | None = None, size: int = PAGE_SIZE) -> FeedPage:
    """One page of the notifications ``f`` names, after ``cursor`` (newest first)."""
    size = max(1, min(int(size), 500))
    after = decode_cursor(cursor) if cursor else None
    db = database.obj
    q = projection.Query(db)
    sql = projection.projected(projection.selection(
        q, f, tail_from=lookup.tail_from(), after=after, limit=size + 1))
    sql += ' SELECT * FROM proj ORDER BY "created_at" DESC, "id" DESC'
    with projection.snapshot():
        raw = list(db.execute_sql(sql, q.params).fetchall())
    more = len(raw) > size
    raw = raw[:size]
    ids = [as_uuid(r[0]) for r in raw]
    names = template_names(f.workspace_id, [t for r in raw if (t := as_uuid(r[2]))])
    found = recipients(ids)
    rows = [FeedRow(ids[i], as_datetime(r[1]), as_uuid(r[2]),
                    names.get(as_uuid(r[2]), "(deleted template)") if r[2] else "(no template)",
                    r[3], r[4], r[5], r[6], bool(r[7]), bool(r[8]), bool(r[9]), bool(r[10]),
                    [shown_recipient(t) or "" for t in found.get(ids[i], [])])
            for i, r in enumerate(raw)]
    nxt = encode_cursor(rows[-1].created_at, rows[-1].id) if more and rows else None
    return FeedPage(rows, nxt)


def recipients(ids: list[uuid.UUID | None]) -> dict[uuid.UUID, list[str]]:
    """Each notification's recipients: from the lookup index, else read from its row."""
    wanted = [i for i in ids if i is not None]
    found = lookup.recipients_of(wanted)
    missing = [i for i in wanted if i not in found]
    for start in range(0, len(missing), 500):
        rows = Notification.select(Notification.id, Notification.payload).where(
            Notification.id.in_(missing[start:start + 500]))
        found.update((row.id, payload_recipients(row.payload)) for row in rows)
    return found


