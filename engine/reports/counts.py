"""The counts of a report: totals, by day, by template and by channel, with their rates.

Days the report job has rolled up are read from ReportRollup; every other day (today, a
day with a late event, any day when a recipient or correlation id is searched) from the
notifications themselves, through the same projection, in the same statement.
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass, field

from engine import runtime
from engine.database.db import database
from engine.database.models import Notification, Template, utcnow
from engine.database.models.reports import NO_TEMPLATE, ReportDay, ReportRollup
from engine.reports import lookup, projection, rollups
from engine.reports.filters import ReportFilters

# The counts the Reports page shows, in order (docs/reports.md names them).
LABELS = ("Accepted", "Delivered", "Bounced", "Failed", "Complained", "Opened", "Clicked",
          "Unsubscribed")
# Report statuses that are neither delivered, bounced nor failed.
OTHER_STATUSES = ("queued", "sending", "suppressed", "cancelled")
ROLLUP = ReportRollup._meta.table_name


def empty() -> dict[str, int]:
    return {label: 0 for label in (*LABELS, "Suppressed", "Cancelled", "Pending")}


@dataclass
class Counts:
    totals: dict[str, int]
    by_day: list[tuple[dt.date, dict[str, int]]]
    by_template: list[tuple[uuid.UUID | None, str, dict[str, int]]]
    by_channel: list[tuple[str, dict[str, int]]]
    notice: str | None = None
    rates: dict[str, float | None] = field(default_factory=dict)


def _add(into: dict[str, int], status: str, accepted: int, flags: tuple[int, ...]) -> None:
    into["Accepted"] += accepted
    label = {"delivered": "Delivered", "bounced": "Bounced", "failed": "Failed",
             "suppressed": "Suppressed", "cancelled": "Cancelled"}.get(status, "Pending")
    into[label] += accepted
    for name, value in zip(("Complained", "Opened", "Clicked", "Unsubscribed"), flags,
                           strict=True):
        into[name] += int(value or 0)


def rates(totals: dict[str, int]) -> dict[str, float | None]:
    """Delivery rates over accepted notifications; engagement over delivered ones."""
    def share(part: str, whole: str) -> float | None:
        return totals[part] / totals[whole] if totals[whole] else None

    return {"Delivered": share("Delivered", "Accepted"), "Bounced": share("Bounced", "Accepted"),
            "Failed": share("Failed", "Accepted"), "Suppressed": share("Suppressed", "Accepted"),
            "Cancelled": share("Cancelled", "Accepted"), "Pending": share("Pending", "Accepted"),
            "Complained": share("Complained", "Delivered"),
            "Opened": share("Opened", "Delivered"), "Clicked": share("Clicked", "Delivered"),
            "Unsubscribed": share("Unsubscribed", "Delivered")}


def _day(value: object) -> dt.date:
    return value if isinstance(value, dt.date) else dt.date.fromisoformat(str(value)[:10])


def _marks(f: ReportFilters) -> dict[dt.date, dt.datetime]:
    """Each day of the range with a rollup, and until when it counts (none when searching:
    a search is counted from the notifications themselves)."""
    if f.searching:
        return {}
    rows = ReportDay.select(ReportDay.day, ReportDay.rolled_until).where(
        ReportDay.workspace == f.workspace_id, ReportDay.day >= f.start, ReportDay.day <= f.end)
    return {rollups.as_date(r.day): rollups.as_time(r.rolled_until) for r in rows}


def _live_spans(f: ReportFilters, marks: dict[dt.date, dt.datetime]) -> list[projection.Span]:
    """The times of the range no rollup counts, as few spans as they make."""
    spans: list[projection.Span] = []
    for i in range((f.end - f.start).days + 1):
        day = f.start + dt.timedelta(days=i)
        start = marks.get(day, dt.datetime.combine(day, dt.time()))
        end = dt.datetime.combine(day, dt.time()) + rollups.DAY
        if start >= end:
            continue
        if spans and spans[-1][1] == start:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return spans


def _rows(f: ReportFilters) -> list[tuple]:
    """(day, template id, channel, status, accepted, complained, opened, clicked,
    unsubscribed) for every group: what the rollups count, and the rest from the
    notifications themselves, read in one snapshot."""
    db = database.obj
    with projection.snapshot():
        marks = _marks(f)
        spans = _live_spans(f, marks)
        q = projection.Query(db)
        parts = []
        if spans:
            parts.append(projection.grouped(db, projection.projected(projection.selection(
                q, f, spans=spans, tail_from=lookup.tail_from()))))
        if marks:
            parts.append(_rollups(q, f, sorted(marks)))
        return list(db.execute_sql(" UNION ALL ".join(parts), q.params).fetchall())


def _rollups(q: projection.Query, f: ReportFilters, days: list[dt.date]) -> str:
    conditions = [f'r."workspace_id" = {q.value(Notification.workspace.db_value(f.workspace_id))}',
                  f'r."day" IN ({", ".join(q.value(ReportRollup.day.db_value(d)) for d in days)})']
    if f.template_id is not None:
        template = ReportRollup.template_id.db_value(f.template_id)
        conditions.append(f'r."template_id" = {q.value(template)}')
    if f.channel is not None:
        conditions.append(f'r."channel" = {q.value(f.channel)}')
    if f.status is not None:
        conditions.append(f'r."status" = {q.value(f.status)}')
    return ('SELECT r."day", r."template_id", r."channel", r."status", r."accepted", '
            'r."complained", r."opened", r."clicked", r."unsubscribed" '
            f'FROM "{ROLLUP}" r WHERE ' + " AND ".join(conditions))


def counts(f: ReportFilters) -> Counts:
    """Everything the Reports page counts for ``f``."""
    totals = empty()
    days = {f.start + dt.timedelta(days=i): empty() for i in range((f.end - f.start).days + 1)}
    templates: dict[uuid.UUID | None, dict[str, int]] = {}
    channels: dict[str, dict[str, int]] = {}
    for day, template, channel, status, accepted, *flags in _rows(f):
        template_id = uuid.UUID(str(template)) if template else None
        template_id = None if template_id == NO_TEMPLATE else template_id
        for into in (totals, days.setdefault(_day(day), empty()),
                     templates.setdefault(template_id, empty()),
                     channels.setdefault(channel, empty())):
            _add(into, status, int(accepted), tuple(flags))
    names = template_names(f.workspace_id, [t for t in templates if t is not None])
    by_template = sorted(((t, names.get(t, "(deleted template)") if t else "(no template)", c)
                          for t, c in templates.items()), key=lambda row: -row[2]["Accepted"])
    result = Counts(totals, sorted(days.items()), by_template, sorted(channels.items()),
                    notice=retention_notice(f))
    result.rates = rates(totals)
    return result


def template_names(workspace_id: object, ids: list[uuid.UUID]) -> dict[uuid.UUID, str]:
    if not ids:
        return {}
    rows = Template.select(Template.id, Template.name).where(
        Template.workspace == workspace_id, Template.id.in_(ids))
    return {row.id: row.name for row in rows}


def retention_cutoff(today: dt.date | None = None) -> dt.date:
    """The first day whose notifications are kept (HERALD_REPORT_RETENTION_DAYS)."""
    days = runtime.settings().report_retention_days
    return (today or utcnow().date()) - dt.timedelta(days=days)


def retention_notice(f: ReportFilters) -> str | None:
    """What a range reaching past the retention must say: counts from rollups, no rows."""
    cutoff = retention_cutoff()
    if f.start >= cutoff:
        return None
    days = runtime.settings().report_retention_days
    tail = ("the search finds nothing there" if f.searching else
            "their counts come from daily rollups")
    return (f"Notifications are kept for {days} days (HERALD_REPORT_RETENTION_DAYS): the feed "
            f"has none before {cutoff.isoformat()} and {tail}.")
