"""The callbacks' own RQ queue, ``herald-callbacks``: workers serve it after the delivery
queues, and its jobs hand their work to a thread of their own (engine/callbacks/jobs.py), so
a slow receiver never holds a delivery. One job names a workspace, not a callback: it sends
whatever of that workspace is due, in order."""

from __future__ import annotations

import datetime as dt
from typing import Any

from rq import Queue

from engine import runtime
from engine.store.queueing import CALLBACK_QUEUE_NAME

JOB_FUNCTION = "engine.callbacks.jobs.send_callbacks"
JOB_TIMEOUT = 600
FAILURE_TTL = 3600
# A workspace's job waiting in the queue: each outcome recorded asks for a job, and a burst
# (a fan-out's deliveries) queued one each, every one after the first run through RQ to
# find nothing due. While this mark stands, the job already queued will read those rows:
# it takes the mark away as it starts (jobs.send_callbacks). A lost job leaves the mark
# until it expires; the sweep enqueues past it (``waiting=False``) meanwhile.
QUEUED_SECONDS = JOB_TIMEOUT


def queued_key(workspace_id: Any) -> str:
    return f"herald:callbacks:queued:{workspace_id}"


def _queue() -> Queue:
    return runtime.redis_bound("callbacks", lambda redis: Queue(CALLBACK_QUEUE_NAME,
                                                                 connection=redis))


def enqueue(workspace_id: Any, delay: float | None = None, *, waiting: bool = True) -> None:
    """A job to send the workspace's due callbacks, now or after ``delay`` seconds (RQ's
    scheduler moves it to the queue then); none now when one is already waiting to start
    (``waiting``). Enqueuing more than needed is harmless."""
    options = {"result_ttl": 0, "failure_ttl": FAILURE_TTL, "job_timeout": JOB_TIMEOUT}
    workspace_id = str(workspace_id)
    if delay:
        _queue().enqueue_in(dt.timedelta(seconds=delay), JOB_FUNCTION, workspace_id,
                            **options)
        return
    if waiting and not runtime.redis().set(queued_key(workspace_id), 1, nx=True,
                                           ex=QUEUED_SECONDS):
        return  # the job waiting will read what was recorded before this
    _queue().enqueue(JOB_FUNCTION, workspace_id, **options)
