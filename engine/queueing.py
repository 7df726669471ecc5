"""Hand accepted notifications to RQ: one job per notification, job id = notification id."""

from __future__ import annotations

from rq import Queue

from engine import runtime

QUEUE_NAME = "herald"
JOB_TIMEOUT = 300


def queue() -> Queue:
    return Queue(QUEUE_NAME, connection=runtime.redis())


def enqueue_notification(notification_id: str) -> None:
    """Enqueue after the row is committed; enqueuing twice is harmless (the job claims the row).

    Through one pipeline: RQ's own enqueue would take two round trips to Redis.
    """
    target = queue()
    with target.connection.pipeline() as pipe:
        target.enqueue(
            "engine.jobs.deliver_notification", notification_id, job_id=notification_id,
            job_timeout=JOB_TIMEOUT, pipeline=pipe,
            # The database keeps the outcome; Redis keeps nothing once the job is done.
            result_ttl=0, failure_ttl=3600,
        )
        pipe.execute()
