"""The callbacks' own RQ queue, ``herald-callbacks``: workers serve it after the delivery
queues, and each job's pass runs on a pass slot of the worker, apart from the delivery slots
(engine/callbacks/jobs.py, engine/worker/handoff.py), so a slow receiver never holds a
delivery. One job names a workspace, not a callback: it sends
whatever of that workspace is due, in order."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

from rq import Queue

from engine import runtime
from engine.queue.queueing import CALLBACK_QUEUE_NAME

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


def due_second(at: dt.datetime) -> int:
    """The whole second (epoch) a job for ``at`` is scheduled at: rounded up, never down.

    RQ's scheduled registry scores a job by whole seconds, truncated, and its scheduler
    moves it as soon as that second has come: a retry due at 12:00:01.7 would run at
    12:00:01.2, find its callback not yet due and end, leaving it to the sweep a minute
    later (a failed callback "sometimes not retried")."""
    return math.ceil(at.timestamp())


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
        second = due_second(dt.datetime.now(dt.UTC) + dt.timedelta(seconds=delay))
        # One job per workspace and second: every pass that finds the same retry waiting
        # asks for it again (jobs._pass), and the same id schedules it once.
        _queue().enqueue_at(dt.datetime.fromtimestamp(second, dt.UTC), JOB_FUNCTION,
                            workspace_id, job_id=f"herald-callbacks-{workspace_id}-{second}",
                            **options)
        return
    if waiting and not runtime.redis().set(queued_key(workspace_id), 1, nx=True,
                                           ex=QUEUED_SECONDS):
        return  # the job waiting will read what was recorded before this
    _queue().enqueue(JOB_FUNCTION, workspace_id, **options)
