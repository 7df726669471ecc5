"""The callbacks' sweep: a job can be lost (Redis restarted or flushed, a worker killed in a
pass), the rows cannot. Every SWEEP_SECONDS one worker enqueues a job for each workspace
with callbacks due for longer than GRACE_SECONDS."""

from __future__ import annotations

import datetime as dt
import logging
import threading

from engine import runtime
from engine.callbacks import queue
from engine.callbacks.sending import DUE
from engine.database.db import database
from engine.database.models import utcnow
from engine.database.models.callbacks import Callback

log = logging.getLogger("herald.callbacks")
SWEEP_SECONDS = 30.0
GRACE_SECONDS = 60.0
LOCK = "herald:callbacks:sweep"


def sweep_once() -> int:
    """Enqueue a job per workspace with callbacks overdue; returns how many."""
    before = utcnow() - dt.timedelta(seconds=GRACE_SECONDS)
    overdue = (Callback.select(Callback.workspace).distinct()
               .where(Callback.status.in_(DUE),
                      ((Callback.next_attempt_at.is_null() & (Callback.created_at <= before))
                       | (Callback.next_attempt_at <= before)))
               .tuples())
    workspaces = [row[0] for row in overdue]
    for workspace_id in workspaces:
        queue.enqueue(workspace_id, waiting=False)  # a lost job's mark may stand
    return len(workspaces)


def run_periodically(stop: threading.Event) -> None:
    """The worker's sweep thread: one pass per SWEEP_SECONDS across every worker."""
    while not stop.wait(SWEEP_SECONDS):
        try:
            if runtime.redis().set(LOCK, 1, nx=True, ex=int(SWEEP_SECONDS) - 1):
                database.connect(reuse_if_open=True)
                sweep_once()
        except Exception:
            log.exception("the callbacks sweep failed; it runs again in %.0f s", SWEEP_SECONDS)
