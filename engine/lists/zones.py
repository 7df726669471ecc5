"""Time zones: the schedule's, and each recipient's own (the optional ``time zone`` column).

With that column, a scheduled list sends each row at the schedule's local time in the row's
own zone: scheduled for 09:00 Europe/London, a row in America/New_York goes at 09:00 in New
York. When the list starts, each row's moment is worked out and the rows are ordered by it
(``arrange``); rows whose moment is earlier than the list's own (their 09:00 has passed)
go at once, and the list counts them (``late_rows``). A row with an empty cell goes at the
schedule's own time. A list sent at once (``Send N notifications``) sends every row at once.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo
from functools import cache

from engine.database.models.lists import RecipientList

DEFAULT_ZONE = "UTC"


@cache
def names() -> tuple[str, ...]:
    """Every IANA time zone name this system knows, sorted (the select's options)."""
    return tuple(sorted(zoneinfo.available_timezones()))


@cache
def _known() -> frozenset[str]:
    return frozenset(names())


def known(name: str) -> bool:
    return name in _known()


def zone(name: str | None) -> zoneinfo.ZoneInfo | None:
    """The zone of an IANA name, or None for a name that is not one."""
    return zoneinfo.ZoneInfo(name) if name and known(name) else None


def _moment(wall: dt.datetime, place: zoneinfo.ZoneInfo) -> dt.datetime:
    return wall.replace(tzinfo=place).astimezone(dt.UTC).replace(tzinfo=None)


def arrange(kept: RecipientList) -> int:
    """Before a scheduled list with a ``time zone`` column starts: each row's moment
    appended to it (ISO 8601, UTC), the rows ordered by it, and the rows whose moment is
    earlier than the schedule's counted. Returns that count (0 for a list without the
    column)."""
    rows = kept.rows or []
    if not rows or len(rows[0]) < 4 or kept.scheduled_for is None:
        return 0
    base = zone(kept.time_zone) or dt.UTC
    wall = kept.scheduled_for.replace(tzinfo=dt.UTC).astimezone(base).replace(tzinfo=None)
    timed = sorted(((_moment(wall, zone(row[3]) or base), row) for row in rows),
                   key=lambda pair: (pair[0], pair[1][0]))
    late = sum(1 for moment, _ in timed if moment < kept.scheduled_for)
    RecipientList.update(rows=[[*row[:4], moment.isoformat()] for moment, row in timed],
                         late_rows=late).where(
        RecipientList.id == kept.id, RecipientList.status == "scheduled").execute()
    return late


def due(row: list) -> dt.datetime | None:
    """The row's moment (naive UTC) when ``arrange`` gave it one."""
    return dt.datetime.fromisoformat(row[4]) if len(row) > 4 else None
