"""The lists' pass, a job a worker enqueues every few seconds (engine/worker/list_sweep.py
names it): scheduled lists whose time came are started, sending lists that lost their job
are enqueued again (engine/lists/recovery.py), unsent lists past their time are removed
(engine/lists/expiry.py). Every step is a conditional update, so two passes at once (two
workers) do each thing once."""

from __future__ import annotations

import logging

from engine import runtime
from engine.database.models import utcnow
from engine.database.models.lists import RecipientList
from engine.lists import expiry, recovery, scheduling, sending

log = logging.getLogger("herald.lists")


SWEPT_KEY = "herald:lists:swept"  # when the last pass began (UTC, ISO 8601)


def sweep() -> dict[str, int]:
    """One pass: what it did."""
    began = utcnow()
    done = {"started": scheduling.start_due(began), "resumed": 0}
    for kept in (RecipientList.select(*_SUMMARY)
                 .where(RecipientList.status == sending.SENDING,
                        RecipientList.finished_at.is_null())):
        if recovery.resume_if_lost(kept):
            done["resumed"] += 1
    done["expired"] = expiry.expire()
    if any(done.values()):
        log.info("lists' pass: %s", done)
    runtime.redis().set(SWEPT_KEY, began.isoformat(), ex=24 * 3600)
    return done


_SUMMARY = [f for f in RecipientList._meta.sorted_fields if f.name != "rows"]
