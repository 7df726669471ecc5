"""Where a list is: its rows accepted so far, and its notifications' outcomes counted as the
Reports page counts them (engine/reports/, the list as one filter)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.database.models import Workspace, utcnow
from engine.database.models.lists import RecipientList
from engine.lists import scheduling
from engine.reports import counts
from engine.reports.filters import ReportFilters

# The list page's counts, in order: the report's labels, "Pending" shown as queued.
SHOWN = (("Queued", "Pending"), ("Delivered", "Delivered"), ("Failed", "Failed"),
         ("Bounced", "Bounced"), ("Suppressed", "Suppressed"), ("Cancelled", "Cancelled"))
# Every column but the rows themselves: a list page never reads 50,000 rows.
_SUMMARY = [f for f in RecipientList._meta.sorted_fields if f.name != "rows"]


@dataclass
class Progress:
    kept: RecipientList
    totals: dict[str, int]

    @property
    def shown(self) -> list[tuple[str, int]]:
        return [(label, self.totals.get(key, 0)) for label, key in SHOWN]

    @property
    def not_accepted(self) -> int:
        return self.kept.row_count - self.kept.accepted - len(self.kept.refused or [])

    @property
    def sentence(self) -> str:
        """Where the list stands, in words (the page's status line)."""
        k = self.kept
        of = f"{k.accepted:,} of {k.row_count:,} rows accepted"
        late = (f" {k.late_rows:,} {'row' if k.late_rows == 1 else 'rows'} whose local "
                "time had passed when the list started went at once." if k.late_rows else "")
        if k.status == "sending" and k.resume_at is not None:
            return (f"Sending: {of}; the others go at their recipients' local time, the "
                    f"next at {k.resume_at:%H:%M} UTC on {k.resume_at.day} "
                    f"{k.resume_at:%b %Y}.{late}")
        if k.status == "sending":
            return f"Sending: {of}.{late}"
        if k.status == "sent":
            return f"Sent: {of}.{late}"
        if k.status == "scheduled":
            return scheduling.shown(k)
        if k.status == "failed":
            return f"Not sent: {k.problem}"
        if k.status != "cancelled":
            return ""
        never = k.row_count - k.accepted - len(k.refused or [])
        gone = k.accepted - k.cancelled
        if k.cancelled == 0 and never == 0:
            return (f"The cancel came too late: all {k.accepted:,} accepted rows had already "
                    "gone to the provider, and nothing was stopped.")
        return (f"Cancelled: {never + k.cancelled:,} of {k.row_count:,} rows were stopped and "
                f"are not sent ({never:,} never accepted, {k.cancelled:,} taken back from "
                f"the queue); {gone:,} had already gone to the provider.")


def summary(workspace: Workspace, list_id: Any) -> RecipientList | None:
    """A list of this workspace without its rows, or None."""
    try:
        return (RecipientList.select(*_SUMMARY)
                .where(RecipientList.id == list_id, RecipientList.workspace == workspace)
                .first())
    except ValueError:
        return None


def progress(kept: RecipientList) -> Progress:
    """The list's counts: its notifications from the day it was sent to today."""
    start = (kept.sent_at or kept.created_at).date()
    chosen = ReportFilters(kept.workspace_id, start, max(start, utcnow().date()),
                           list_id=kept.id)
    return Progress(kept, counts.counts(chosen).totals)


def sent_lists(workspace: Workspace, limit: int = 50) -> list[RecipientList]:
    """The workspace's lists that were sent (or are sending), newest first: the Reports
    page's List filter."""
    return list(RecipientList.select(RecipientList.id, RecipientList.filename,
                                     RecipientList.created_at)
                .where(RecipientList.workspace == workspace,
                       RecipientList.sent_at.is_null(False))
                .order_by(RecipientList.created_at.desc()).limit(limit))
