"""What a report is asked for: a workspace, a range of UTC days and optional filters.

Parsed from what a person typed (the Reports page's query string, a command's options):
every value is checked here, and a bad one is a FilterError naming its field.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from dataclasses import dataclass

from engine.database.models import utcnow
from engine.database.vocabulary import NotificationStatus
from engine.formats.addresses import suppression_key

# A report's statuses: the notification's own, with "bounced" in front of them (events.py).
STATUSES = ("bounced", *(str(s) for s in NotificationStatus))
# A channel's name as plugins register it (the notification column holds 10 characters).
_CHANNEL = re.compile(r"^[a-z][a-z0-9_-]{0,9}$")
DEFAULT_DAYS = 30
MAX_DAYS = 3660
_CORRELATION = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
# A recipient filter: one address or number, nothing that could not be a suppression key.
_RECIPIENT = re.compile(r'^[^\s"\\<>,;]{1,320}$')


class FilterError(ValueError):
    """A filter value that cannot be used; ``field`` names it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class ReportFilters:
    workspace_id: uuid.UUID
    start: dt.date  # first day, inclusive (UTC)
    end: dt.date    # last day, inclusive (UTC)
    template_id: uuid.UUID | None = None
    channel: str | None = None
    status: str | None = None
    recipient: str | None = None  # a suppression key
    correlation_id: str | None = None
    list_id: uuid.UUID | None = None  # a list's rows (engine/lists/): correlation list-<hex>-N

    @property
    def searching(self) -> bool:
        """A recipient, correlation id or list: counted from the detail, never from
        rollups."""
        return (self.recipient is not None or self.correlation_id is not None
                or self.list_id is not None)

    @property
    def list_pattern(self) -> str | None:
        """The LIKE pattern of the list's correlation ids (hex digits need no escaping)."""
        return f"list-{self.list_id.hex}-%" if self.list_id is not None else None

    @property
    def start_at(self) -> dt.datetime:
        return dt.datetime.combine(self.start, dt.time())

    @property
    def end_before(self) -> dt.datetime:
        return dt.datetime.combine(self.end + dt.timedelta(days=1), dt.time())


# The ways a day may be typed: ISO, and as the pages say dates ("5 Dec 2026", "5 December
# 2026"; the month's case aside).
_DAY_FORMATS = ("%Y-%m-%d", "%d %b %Y", "%d %B %Y")


def _day(field: str, raw: str) -> dt.date:
    text = " ".join(raw.split())
    for pattern in _DAY_FORMATS:
        try:
            return dt.datetime.strptime(text, pattern).date()
        except ValueError:
            continue
    shown = raw.strip()[:40]
    raise FilterError(field, f"Enter a date such as 5 Dec 2026 or 2026-12-05; got “{shown}”.")


def parse(workspace_id: object, values: dict[str, str | None],
          today: dt.date | None = None) -> ReportFilters:
    """Filters from text values (``from``, ``to``, ``template``, ``channel``, ``status``,
    ``recipient``, ``correlationId``, ``list``); blank means "any". Default: the last 30 days."""
    today = today or utcnow().date()

    def text(name: str) -> str | None:
        raw = values.get(name)
        return raw.strip() if isinstance(raw, str) and raw.strip() else None

    end = _day("to", text("to")) if text("to") else today
    start = _day("from", text("from")) if text("from") else end - dt.timedelta(
        days=DEFAULT_DAYS - 1)
    if start > end:
        raise FilterError("from", "the first day is after the last")
    if (end - start).days >= MAX_DAYS:
        raise FilterError("from", f"a range is at most {MAX_DAYS} days")
    template = None
    if (raw := text("template")) is not None:
        try:
            template = uuid.UUID(raw)
        except ValueError:
            raise FilterError("template", "not a template id") from None
    channel = text("channel")
    if channel is not None and not _CHANNEL.match(channel.lower()):
        raise FilterError("channel", "a channel's name, such as email, sms or webhook")
    status = text("status")
    if status is not None and status.lower() not in STATUSES:
        raise FilterError("status", f"one of {', '.join(STATUSES)}")
    recipient = text("recipient")
    if recipient is not None:
        if not _RECIPIENT.match(recipient):
            raise FilterError("recipient", "one email address or phone number")
        recipient = suppression_key(recipient)
    correlation = text("correlationId")
    if correlation is not None and not _CORRELATION.match(correlation):
        raise FilterError("correlationId", "letters, digits, '.', '_' and '-' only")
    list_id = None
    if (raw := text("list")) is not None:
        try:
            list_id = uuid.UUID(raw)
        except ValueError:
            raise FilterError("list", "not a list id") from None
    return ReportFilters(uuid.UUID(str(workspace_id)), start, end, template,
                         channel.lower() if channel else None,
                         status.lower() if status else None, recipient, correlation, list_id)
