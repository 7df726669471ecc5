"""Unsent lists do not pile up: a list checked and never sent (nor scheduled) is removed
UNSENT_DAYS after its check, a refused or never-finished check after a day, and a workspace
keeps at most MAX_UNSENT unsent lists (a new upload removes the oldest beyond that). A
list that was sent, is sending or is scheduled stays: its page and the Reports filter use
it."""

from __future__ import annotations

import datetime as dt
from typing import Any

from engine.database.models import utcnow
from engine.database.models.lists import RecipientList

UNSENT_DAYS = 7
MAX_UNSENT = 20
_ABANDONED = dt.timedelta(days=1)


def expire(workspace_id: Any | None = None, now: dt.datetime | None = None) -> int:
    """Remove the lists past their time (of one workspace, or all): how many."""
    now = now or utcnow()
    old = (((RecipientList.status == "checked")
            & (RecipientList.created_at < now - dt.timedelta(days=UNSENT_DAYS)))
           | (RecipientList.status.in_(["refused", "checking"])
              & (RecipientList.created_at < now - _ABANDONED)))
    if workspace_id is not None:
        old &= RecipientList.workspace == workspace_id
    removed = RecipientList.delete().where(old).execute()
    if workspace_id is not None:
        unsent = (RecipientList.select(RecipientList.id)
                  .where(RecipientList.workspace == workspace_id,
                         RecipientList.status == "checked")
                  .order_by(RecipientList.created_at.desc()).offset(MAX_UNSENT - 1))
        removed += RecipientList.delete().where(RecipientList.id.in_(
            [row.id for row in unsent])).execute()
    return removed
