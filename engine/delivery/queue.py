"""The delivery job's enqueue, beside the job (engine/delivery/jobs.py): one job per
notification, job id = notification id, on the priority queue or the bulk queue
(docs/delivery.md, "Queues and fairness") and in its workspace's lane.

``JOB_FUNCTION`` is the path RQ writes into every job: a job already in Redis names it, so
``deliver_notification`` never moves (tests/engine/worker/test_rq_contract.py).
"""

from __future__ import annotations

import uuid
from typing import Any

from engine.plugins.channel_contract import goes_bulk
from engine.plugins.manager import default_registry
from engine.queue.queueing import BULK_QUEUE_NAME, QUEUE_NAME, JobSpec, writer

JOB_FUNCTION = "engine.delivery.jobs.deliver_notification"
JOB_TIMEOUT = 300
# The database keeps the outcome; Redis keeps nothing once the job is done.
RESULT_TTL = 0
FAILURE_TTL = 3600
SPEC = JobSpec(JOB_FUNCTION, JOB_TIMEOUT, RESULT_TTL, FAILURE_TTL)


def is_bulk(channel: str, payload: Any) -> bool:
    """Whether a notification's job goes to the bulk queue: its channel's ``bulk_when``
    (Marketing email)."""
    return goes_bulk(default_registry().channel(channel), payload)


def _lane(workspace: uuid.UUID | str | None) -> str | None:
    return str(workspace).lower() if workspace else None


def enqueue_notification(notification_id: str,
                         record: tuple[str, str, int] | None = None,
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


def enqueue_notifications(jobs: list[tuple[str, bool, uuid.UUID | str | None]]) -> None:
    """``enqueue_notification`` for each (id, bulk, workspace), all in one round trip."""
    writer(SPEC).enqueue_each([(job_id, BULK_QUEUE_NAME if bulk else QUEUE_NAME, _lane(ws))
                               for job_id, bulk, ws in jobs])
