"""A sending list is never left without a job: one whose job Redis lost (a restart without
persistence, a flush), whose job failed for good, or whose worker died while running it
(the job reads ``started`` but its lease has run out) is enqueued again from the first row
not yet accepted. Rows a dead run accepted after its last recorded batch are accepted again
harmlessly: each row's Idempotency-Key makes the second accept a replay, so no row is sent
twice. The lists' pass (engine/lists/sweeping.py) runs this every few seconds; the list's
page too."""

from __future__ import annotations

import datetime as dt
import logging

from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus

from engine import runtime
from engine.database.models import utcnow
from engine.database.models.lists import RecipientList
from engine.lists import sending
from engine.queue.queueing import queue

log = logging.getLogger("herald.lists")
_PENDING = {JobStatus.SCHEDULED, JobStatus.DEFERRED}


def _job_alive(list_id, job_id: str) -> bool:
    """True when the job will run, or runs: queued (and in its queue), scheduled for a retry,
    or started by a worker whose run still holds the list's lease (or just began)."""
    redis = runtime.redis()
    try:
        job = Job.fetch(job_id, connection=redis)
    except NoSuchJobError:
        return False
    except Exception:  # a hash RQ cannot read: replaced
        return False
    status = job.get_status(refresh=False)
    if status == JobStatus.QUEUED:
        return queue(job.origin).get_job_position(job_id) is not None
    if status == JobStatus.STARTED:
        if redis.exists(sending.lease_key(list_id)):
            return True
        began = job.started_at
        lease = dt.timedelta(milliseconds=sending.LEASE_MS)
        return began is not None and utcnow() - began.replace(tzinfo=None) < lease
    return status in _PENDING


def resume_if_lost(kept: RecipientList) -> bool:
    """Enqueue the list's job again when it has none that will run: True when it did."""
    if kept.status != sending.SENDING or kept.finished_at is not None:
        return False
    if kept.resume_at is not None and kept.resume_at > utcnow():
        return False  # waiting for its next row's local time (engine/lists/sweeping.py)
    job_id = runtime.redis().get(sending.pointer_key(kept.id))
    if job_id is not None and _job_alive(kept.id, job_id.decode()):
        return False
    fresh = RecipientList.select(RecipientList.accepted, RecipientList.refused).where(
        RecipientList.id == kept.id).first()
    log.warning("list %s had lost its job: enqueued again from row index %d", kept.id,
                fresh.accepted + len(fresh.refused or []))
    sending.enqueue(kept.id, fresh.accepted + len(fresh.refused or []))
    return True
