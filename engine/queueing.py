"""Hand accepted notifications to RQ (minimal version; the delivery engine extends it)."""

from __future__ import annotations

from rq import Queue

from engine import runtime

QUEUE_NAME = "herald"


def queue() -> Queue:
    return Queue(QUEUE_NAME, connection=runtime.redis())


def enqueue_notification(notification_id: str) -> None:
    """One RQ job per notification; the job id is the notification id (so re-enqueue is safe)."""
    queue().enqueue("engine.jobs.deliver_notification", notification_id, job_id=notification_id)
