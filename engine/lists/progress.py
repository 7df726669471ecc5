"""Where a list is: its rows accepted so far, and its notifications' outcomes counted as the
Reports page counts them (engine/reports/, the list as one filter)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.reports import counts
from engine.reports.filters import ReportFilters
from engine.store.models import RecipientList, Workspace, utcnow

# The list page's counts, in order: the report's labels, "Pending" shown as queued.
SHOWN = (("Queued", "Pending"), ("Delivered", "Delivered"), ("Failed", "Failed"),
         ("Bounced", "Bounced"), ("Suppressed", "Suppressed"))
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
