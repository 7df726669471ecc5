"""The delivery job's enqueue, beside the job (engine/delivery/jobs.py): one job per
notification, job id = notification id, on the priority queue or the bulk queue
(docs/delivery.md, "Queues and fairness") and in its workspace's lane.

``JOB_FUNCTION`` is the path RQ writes into every job: a job already in Redis names it, so
``deliver_notification`` never moves (tests/engine/worker/test_rq_contract.py).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from engine.plugins.channel_contract import goes_bulk
from engine.plugins.manager import default_registry
from engine.queue.queueing import BULK_QUEUE_NAME, QUEUE_NAME, JobSpec, Record, writer

JOB_FUNCTION = "engine.delivery.jobs.deliver_notification"
JOB_TIMEOUT = 300
# The database keeps the outcome; Redis keeps nothing once the job is done.
RESULT_TTL = 0
FAILURE_TTL = 3600
SPEC = JobSpec(JOB_FUNCTION, JOB_TIMEOUT, RESULT_TTL, FAILURE_TTL)
# One job of ``enqueue_notifications``: (id, bulk, workspace), and the record its enqueue
# sets (a send's Idempotency-Key record) when there is one.
Job = (tuple[str, bool, uuid.UUID | str | None]
       | tuple[str, bool, uuid.UUID | str | None, Record | None])


def is_bulk(channel: str, payload: Any) -> bool:
    """Whether a notification's job goes to the bulk queue: its channel's ``bulk_when``
    (Marketing email)."""
    return goes_bulk(default_registry().channel(channel), payload)


def _lane(workspace: uuid.UUID | str | None) -> str | None:
    return str(workspace).lower() if workspace else None


def enqueue_notification(notification_id: str,
                         record: Record | None = None,
                         bulk: bool = False,
                         workspace: uuid.UUID | str | None = None) -> None:
    """Enqueue after the row is committed; enqueuing twice is harmless (the job claims the row).

    ``record``: (key, value, seconds) set in the same call (a send's Idempotency-Key record);
    ``bulk``: on the bulk queue, which workers serve after the priority queue;
    ``workspace``: the notification's workspace id, whose lane the job joins (without it
    the job is untracked: served when it reaches the head of the queue).
    """
    writer(SPEC).enqueue(notification_id, record, BULK_QUEUE_NAME if bulk else QUEUE_NAME,
                         _lane(workspace))


def enqueue_notifications(jobs: Sequence[Job]) -> None:
    """``enqueue_notification`` for each (id, bulk, workspace[, record]), all in one round
    trip."""
    writer(SPEC).enqueue_each([
        (job[0], BULK_QUEUE_NAME if job[1] else QUEUE_NAME, _lane(job[2]),
         job[3] if len(job) > 3 else None) for job in jobs])
