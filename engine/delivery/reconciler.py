"""Re-enqueue what Redis forgot: the database, not the queue, is the record of accepted sends.

Runs in every worker (one at a time, through a Redis lock) and much faster than RQ's own
maintenance, which leaves a killed worker's job in StartedJobRegistry for up to 10 minutes.
A row whose attempts reached its channel's maximum is ended instead: however its attempts
ended (a crash, a database gone), a notification is never tried more often than that.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from typing import Any

from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus

from engine import runtime
from engine.delivery import outcome_events
from engine.delivery.retry import max_attempts
from engine.store import notification_store
from engine.store.db import database
from engine.store.models import DeliveryAttempt, Notification, utcnow
from engine.store.queueing import JOB_FUNCTION, enqueue_notification, queue

log = logging.getLogger("herald.reconciler")
LOCK_KEY = "herald:reconciler:lock"
PENDING = {JobStatus.SCHEDULED, JobStatus.DEFERRED}


def _job_pending(notification_id: str) -> bool:
    """True only when the job will really run: scheduled, or queued AND in the queue list.

    A worker killed between taking a job off the list and marking it started leaves a job
    whose hash still says "queued" but that no worker will ever see: it must be re-enqueued,
    as must a job whose function is not today's JOB_FUNCTION.
    Re-enqueuing a job that does run is harmless (the job's claim lets only one through).
    """
    try:
        job = Job.fetch(notification_id, connection=runtime.redis())
        if job.func_name != JOB_FUNCTION:
            # Enqueued by a release whose job function had another path (the move into
            # engine/delivery/ changed it once): RQ cannot import it, so it would only fail.
            # Enqueuing again rewrites the job with today's path (docs/operations.md).
            return False
    except NoSuchJobError:
        return False
    except Exception:  # a job hash RQ cannot read: replaced the same way
        return False
    status = job.get_status(refresh=False)
    if status == JobStatus.QUEUED:
        return queue().get_job_position(notification_id) is not None
    return status in PENDING


def reconcile(batch: int = 500) -> dict[str, int]:
    """One pass: enqueue due retries, lost queued rows and rows stuck in `sending`; end those
    of them that had every attempt their channel allows."""
    settings = runtime.settings()
    now = utcnow()
    grace = now - dt.timedelta(seconds=settings.reconcile_after_seconds)
    due_retry = (Notification.status == "queued") & (Notification.next_attempt_at <= now)
    lost = ((Notification.status == "queued") & Notification.next_attempt_at.is_null()
            & (Notification.updated_at < grace))
    stuck = (Notification.status == "sending") & (Notification.updated_at < grace)
    counts = {"retries": 0, "lost": 0, "stuck": 0, "exhausted": 0}
    database.connect(reuse_if_open=True)
    for kind, condition in (("retries", due_retry), ("lost", lost), ("stuck", stuck)):
        rows = (Notification.select(Notification.id, Notification.workspace,
                                    Notification.channel, Notification.status,
                                    Notification.attempts)
                .where(condition).order_by(Notification.updated_at).limit(batch))
        for row in rows:
            nid = str(row.id)
            if row.attempts >= max_attempts(row.channel, settings.webhook_max_attempts):
                counts["exhausted"] += _give_up(row, condition)
                continue
            if kind != "stuck" and _job_pending(nid):
                continue
            enqueue_notification(nid)
            counts[kind] += 1
    if any(counts.values()):
        log.info("reconciler re-enqueued or ended %s", counts)
    return counts


def _give_up(row: Notification, condition: Any) -> int:
    """End a row that had its last attempt: 1, or 0 when a job took it meanwhile.

    A row left `sending` had an attempt that recorded nothing (the worker died, the database
    went away): that attempt gets its row. The notification ends `delivered` when an earlier
    attempt reached a recipient of its fan-out, else `failed`.
    """
    error = (f"gave up after {row.attempts} attempts"
             + (f": attempt {row.attempts} never finished" if row.status == "sending" else ""))
    with database.atomic() as transaction:
        reached = notification_store.reached_a_recipient(row.id)
        status = "delivered" if reached else "failed"
        ended = (Notification.update(status=status, last_error=None if reached else error,
                                     next_attempt_at=None, updated_at=utcnow())
                 .where(Notification.id == row.id, condition).execute())
        if not ended:  # claimed since it was read
            transaction.rollback()
            return 0
        attempt: dict[str, Any] = {}
        if row.status == "sending":
            attempt = {"notification": row.id, "number": row.attempts, "outcome": "permanent",
                       "error": error}
            DeliveryAttempt.create(**attempt)
    log.warning("notification %s %s: %s", row.id, status, error)
    row.status = status
    outcome_events.emit_outcome(row, attempt)
    return 1


def run_periodically(stop: threading.Event, interval: float | None = None) -> None:
    """Loop until ``stop`` is set; only the holder of the Redis lock reconciles in a period."""
    settings = runtime.settings()
    interval = interval or max(0.5, min(5.0, settings.reconcile_after_seconds / 2))
    while not stop.wait(interval):
        try:
            if runtime.redis().set(LOCK_KEY, "1", nx=True, px=int(interval * 900)):
                reconcile()
        except Exception:
            log.exception("reconciler pass failed")
