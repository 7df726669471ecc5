"""`herald queue`: the delivery backlog at a glance, from RQ's own records and the rows.

RQ's APIs answer what Redis holds (the queue, its registries, the workers' heartbeats);
the database answers what only it knows: retries waiting for their time (a retry is a
queued row with ``next_attempt_at``, enqueued again by the reconciler when it is due), and
deliveries that failed (a failed delivery is a finished job to RQ, not a failed one).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from rq import Worker
from rq.job import Job

from engine import runtime
from engine.catalog.keys import iso
from engine.database.models import Notification, utcnow
from engine.database.vocabulary import NotificationStatus
from engine.queue.queueing import QUEUE_NAMES, queue


def _aware(value: dt.datetime) -> dt.datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)


def _oldest_queued_seconds(q: Any, now: dt.datetime) -> float | None:
    """How long the job at the head of the queue has waited (RQ pushes on the right)."""
    for job_id in q.get_job_ids(0, 10):  # a head whose hash expired is skipped
        job = Job.fetch(job_id, connection=q.connection) if Job.exists(
            job_id, connection=q.connection) else None
        if job is not None and job.enqueued_at is not None:
            return round(max(0.0, (now - _aware(job.enqueued_at)).total_seconds()), 1)
    return None


def _workers(now: dt.datetime) -> list[dict[str, Any]]:
    out = []
    for worker in Worker.all(connection=runtime.redis()):
        beat = worker.last_heartbeat
        out.append({
            "name": worker.name, "hostname": worker.hostname, "pid": worker.pid,
            "state": worker.get_state(), "currentJob": worker.get_current_job_id(),
            "lastHeartbeat": iso(beat),
            "secondsSinceHeartbeat": round((now - _aware(beat)).total_seconds(), 1)
            if beat else None,
        })
    return sorted(out, key=lambda w: w["name"])


def _queues(now: dt.datetime) -> list[dict[str, Any]]:
    """Each queue in the order workers serve them: the priority queue, then the bulk one
    (docs/delivery.md, "Queues and fairness")."""
    out = []
    for name in QUEUE_NAMES:
        q = queue(name)
        out.append({"name": name, "depth": q.count,
                    "oldestQueuedSeconds": _oldest_queued_seconds(q, now),
                    "started": q.started_job_registry.count,
                    "failedJobs": q.failed_job_registry.count})
    return out


def queue_status() -> dict[str, Any]:
    """Depth, due and waiting retries, the oldest queued job's age, the workers RQ has
    seen (their heartbeats expire with them), and failures of the last hour; the totals
    over both queues, and each queue under ``queues``."""
    now = dt.datetime.now(dt.UTC)
    naive_now = utcnow()
    queues = _queues(now)
    ages = [q["oldestQueuedSeconds"] for q in queues if q["oldestQueuedSeconds"] is not None]
    retry = (Notification.status == NotificationStatus.QUEUED) & \
        Notification.next_attempt_at.is_null(False)
    hour_ago = naive_now - dt.timedelta(hours=1)
    return {
        "depth": sum(q["depth"] for q in queues),
        "oldestQueuedSeconds": max(ages, default=None),
        "started": sum(q["started"] for q in queues),
        "queues": queues,
        "dueRetries": Notification.select().where(
            retry & (Notification.next_attempt_at <= naive_now)).count(),
        "waitingRetries": Notification.select().where(
            retry & (Notification.next_attempt_at > naive_now)).count(),
        "workers": _workers(now),
        "failedLastHour": {
            # Deliveries that ended failed (their rows); a scan of recent rows' status.
            "notifications": Notification.select().where(
                (Notification.status == NotificationStatus.FAILED)
                & (Notification.updated_at >= hour_ago)).count(),
            # Jobs that crashed (RQ keeps a failed job one hour: FAILURE_TTL).
            "jobs": sum(q["failedJobs"] for q in queues),
        },
    }
