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


def _queue() -> Queue:
    return runtime.redis_bound("callbacks", lambda redis: Queue(CALLBACK_QUEUE_NAME,
                                                                 connection=redis))


def enqueue(workspace_id: Any, delay: float | None = None) -> None:
    """A job to send the workspace's due callbacks, now or after ``delay`` seconds (RQ's
    scheduler moves it to the queue then). Enqueuing more than needed is harmless."""
    options = {"result_ttl": 0, "failure_ttl": FAILURE_TTL, "job_timeout": JOB_TIMEOUT}
    if delay:
        _queue().enqueue_in(dt.timedelta(seconds=delay), JOB_FUNCTION, str(workspace_id),
                            **options)
    else:
        _queue().enqueue(JOB_FUNCTION, str(workspace_id), **options)
