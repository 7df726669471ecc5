"""Times as the pages say them: "5 Dec 2026, 23:49 UTC", never ISO 8601 to a reader.

Times are stored as naive UTC; a page says so rather than guess the reader's zone (the
server does not know it, and a script rewriting times would make a page read differently
without JavaScript)."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

_ISO = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?")


def as_utc(value: Any) -> dt.datetime | None:
    """A datetime (naive is UTC) or an ISO 8601 string as naive UTC; None for anything else."""
    if isinstance(value, str):
        if not _ISO.fullmatch(value.strip()):
            return None
        try:
            value = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    if not isinstance(value, dt.datetime):
        return None
    if value.tzinfo is not None:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    return value


def in_words(value: Any, seconds: bool = False, zone: bool = True) -> str:
    """"27 Nov 2026, 09:05 UTC" for a datetime or an ISO string; anything else as it is."""
    if not value:
        return ""
    when = as_utc(value)
    if when is None:
        return str(value)
    shown = f"{when.day} {when:%b %Y, %H:%M:%S}" if seconds else f"{when.day} {when:%b %Y, %H:%M}"
    return f"{shown} UTC" if zone else shown
