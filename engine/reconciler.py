"""Re-enqueue what Redis forgot: the database, not the queue, is the record of accepted sends.

Runs in every worker (one at a time, through a Redis lock) and much faster than RQ's own
maintenance, which leaves a killed worker's job in StartedJobRegistry for up to 10 minutes.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading

from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus

from engine import runtime
from engine.db import database
from engine.models import Notification, utcnow
from engine.queueing import enqueue_notification, queue

log = logging.getLogger("herald.reconciler")
LOCK_KEY = "herald:reconciler:lock"
PENDING = {JobStatus.SCHEDULED, JobStatus.DEFERRED}


def _job_pending(notification_id: str) -> bool:
    """True only when the job will really run: scheduled, or queued AND in the queue list.

    A worker killed between taking a job off the list and marking it started leaves a job
    whose hash still says "queued" but that no worker will ever see: it must be re-enqueued.
    Re-enqueuing a job that does run is harmless (the job's claim lets only one through).
    """
    try:
        job = Job.fetch(notification_id, connection=runtime.redis())
    except NoSuchJobError:
        return False
    status = job.get_status(refresh=False)
    if status == JobStatus.QUEUED:
        return queue().get_job_position(notification_id) is not None
    return status in PENDING


def reconcile(batch: int = 500) -> dict[str, int]:
    """One pass: enqueue due retries, lost queued rows and rows stuck in `sending`."""
    settings = runtime.settings()
    now = utcnow()
    grace = now - dt.timedelta(seconds=settings.reconcile_after_seconds)
    due_retry = (Notification.status == "queued") & (Notification.next_attempt_at <= now)
    lost = ((Notification.status == "queued") & Notification.next_attempt_at.is_null()
            & (Notification.updated_at < grace))
    stuck = (Notification.status == "sending") & (Notification.updated_at < grace)
    counts = {"retries": 0, "lost": 0, "stuck": 0}
    database.connect(reuse_if_open=True)
    for kind, condition in (("retries", due_retry), ("lost", lost), ("stuck", stuck)):
        rows = (Notification.select(Notification.id).where(condition)
                .order_by(Notification.updated_at).limit(batch))
        for row in rows:
            nid = str(row.id)
            if kind != "stuck" and _job_pending(nid):
                continue
            enqueue_notification(nid)
            counts[kind] += 1
    if any(counts.values()):
        log.info("reconciler re-enqueued %s", counts)
    return counts


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
