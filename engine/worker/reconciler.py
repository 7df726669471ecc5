"""Re-enqueue what Redis forgot: the database, not the queue, is the record of accepted sends.

Runs in every worker (one at a time, through a Redis lock) and much faster than RQ's own
maintenance, which leaves a killed worker's job in StartedJobRegistry for up to 10 minutes.
A row left ``sending`` whose delivery a live worker still has in flight (its lease,
engine/worker/inflight.py) is left alone. A row whose attempts reached its channel's
maximum is ended instead: however its attempts
ended (a crash, a database gone), a notification is never tried more often than that. A
row whose send was answered 503 though the database committed it unheard is deleted
(engine/queue/unheard_commits.py).

A queued row is taken up once it is ``HERALD_RECONCILE_AFTER_SECONDS`` old, except when the
worker knows Redis lost jobs (it restarted, was emptied or was away: redis_watch,
redis_outages): then every queued row whose job is gone is enqueued at once.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
import uuid
from typing import Any

from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus
from rq.scripts import release_lock

from engine import runtime
from engine.database import notification_facts
from engine.database.db import database, drop_connection
from engine.database.models import DeliveryAttempt, Notification, utcnow
from engine.database.vocabulary import NotificationStatus, Outcome
from engine.delivery import outcome_events
from engine.delivery.attempts import attempt_row
from engine.delivery.queue import JOB_FUNCTION, enqueue_notification
from engine.delivery.retry import max_attempts
from engine.observability.outages import DATABASE_DOWN
from engine.plugins.manager import default_registry
from engine.queue import redis_outages, unheard_commits
from engine.queue.queueing import queue
from engine.worker import inflight
from engine.worker.redis_watch import RedisWatch

log = logging.getLogger("herald.reconciler")
LOCK_KEY = "herald:reconciler:lock"
URGENT_LOCK_KEY = "herald:reconciler:urgent"
URGENT_LOCK_MS = 30_000  # freed at the end of the pass; this only bounds a dead holder's
TICK_SECONDS = 0.2  # how soon the end of an outage is acted on
LOOK_SECONDS = 1.0  # how often RedisWatch looks for a Redis that lost its jobs
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
        return queue(job.origin).get_job_position(notification_id) is not None
    return status in PENDING


def reconcile(batch: int = 500) -> dict[str, int]:
    """One pass: enqueue due retries, lost queued rows and rows stuck in `sending`; end those
    of them that had every attempt their channel allows."""
    settings = runtime.settings()
    now = utcnow()
    grace = now - dt.timedelta(seconds=settings.reconcile_after_seconds)
    due_retry = ((Notification.status == NotificationStatus.QUEUED)
                 & (Notification.next_attempt_at <= now))
    stuck = ((Notification.status == NotificationStatus.SENDING)
             & (Notification.updated_at < grace))
    counts = {"retries": 0, "lost": 0, "stuck": 0, "exhausted": 0, "dropped": 0,
              "pending": 0}
    database.connect(reuse_if_open=True)
    for kind, condition in (("retries", due_retry), ("lost", _lost(grace)), ("stuck", stuck)):
        for row in _rows(condition).order_by(Notification.updated_at).limit(batch):
            counts[_take_up(row, kind, condition)] += 1
    _report(counts)
    return counts


def reconcile_lost_now(batch: int = 500) -> dict[str, int]:
    """After Redis lost its jobs: every queued row whose job is gone, however recent, page by
    page (a pass of reconcile() reads the oldest ``batch`` rows of each kind only)."""
    lost = _lost(utcnow())
    counts = {"lost": 0, "exhausted": 0, "dropped": 0, "pending": 0}
    database.connect(reuse_if_open=True)
    after: tuple[Any, Any] | None = None
    while True:
        page = lost if after is None else lost & (
            (Notification.updated_at > after[0])
            | ((Notification.updated_at == after[0]) & (Notification.id > after[1])))
        rows = list(_rows(page).order_by(Notification.updated_at, Notification.id).limit(batch))
        for row in rows:
            counts[_take_up(row, "lost", lost)] += 1
        if len(rows) < batch:
            _report(counts)
            return counts
        after = (rows[-1].updated_at, rows[-1].id)


def _lost(before: dt.datetime) -> Any:
    """Queued rows no retry is waiting for, last touched before ``before``."""
    return ((Notification.status == NotificationStatus.QUEUED)
            & Notification.next_attempt_at.is_null() & (Notification.updated_at < before))


def _rows(condition: Any) -> Any:
    return (Notification.select(Notification.id, Notification.workspace, Notification.channel,
                                Notification.status, Notification.attempts,
                                Notification.updated_at, Notification.correlation_id)
            .where(condition))


def _take_up(row: Notification, kind: str, condition: Any) -> str:
    """Enqueue one row again, or end it: the counter it adds to."""
    if kind == "stuck" and inflight.held(str(row.id)):
        return "pending"  # under way in a live worker (a lease it renews), not stuck
    if row.attempts >= max_attempts(row.channel, runtime.settings().webhook_max_attempts):
        return "exhausted" if _give_up(row, condition) else "pending"
    if kind != "stuck" and _job_pending(str(row.id)):
        return "pending"
    if kind == "lost" and unheard_commits.marked(str(row.id)):
        return "dropped" if _drop(row, condition) else "pending"
    when = default_registry().channel(row.channel).bulk_when
    bulk = when is not None and notification_facts.payload_field(row.id, when[0]) == when[1]
    enqueue_notification(str(row.id), bulk=bulk, workspace=row.workspace_id)
    log.info("re-enqueued notification %s: %s", row.id, _WHY.get(kind, kind),
             extra={**_ids(row), "reason": kind})
    return kind


def _drop(row: Notification, condition: Any) -> int:
    """Delete a row whose send was answered 503 though the database committed it unheard
    (engine/queue/unheard_commits.py): its sender was told nothing was accepted. 1, or 0
    when a job took it meanwhile."""
    if not Notification.delete().where(Notification.id == row.id, condition).execute():
        return 0
    log.warning("dropped notification %s: its send was answered 503 service.unavailable, "
                "and the database had committed its row without saying so", row.id,
                extra={**_ids(row), "reason": "unheard commit"})
    return 1


_WHY = {"retries": "its retry is due", "lost": "queued, and its job is gone from Redis",
        "stuck": "left sending by a worker that stopped"}


def _ids(row: Notification) -> dict[str, str]:
    return {"notificationId": str(row.id), "correlationId": row.correlation_id,
            "workspaceId": str(row.workspace_id), "channel": row.channel}


def _report(counts: dict[str, int]) -> None:
    counts.pop("pending")  # rows whose job is still in Redis: nothing was done
    if any(counts.values()):
        log.info("reconciler re-enqueued or ended %s", counts)


def _give_up(row: Notification, condition: Any) -> int:
    """End a row that had its last attempt: 1, or 0 when a job took it meanwhile.

    A row left `sending` had an attempt that recorded nothing (the worker died, the database
    went away): that attempt gets its row. The notification ends `delivered` when an earlier
    attempt reached a recipient of its fan-out, else `failed`.
    """
    unfinished = row.status == NotificationStatus.SENDING
    error = (f"gave up after {row.attempts} attempts"
             + (f": attempt {row.attempts} never finished" if unfinished else ""))
    with database.atomic() as transaction:
        reached = notification_facts.reached_a_recipient(row.id)
        status = NotificationStatus.DELIVERED if reached else NotificationStatus.FAILED
        ended = (Notification.update(status=status, last_error=None if reached else error,
                                     next_attempt_at=None, updated_at=utcnow())
                 .where(Notification.id == row.id, condition).execute())
        if not ended:  # claimed since it was read
            transaction.rollback()
            return 0
        attempt: dict[str, Any] = {}
        if unfinished:
            attempt = attempt_row(row, Outcome.PERMANENT, error=error)
            DeliveryAttempt.create(**attempt)
    log.warning("notification %s %s: %s", row.id, status, error,
                extra={**_ids(row), "outcome": str(status), "reason": error})
    row.status = status
    outcome_events.emit_outcome(row, attempt)
    return 1


def run_periodically(stop: threading.Event, interval: float | None = None,
                     urgent: bool = False) -> None:
    """Loop until ``stop`` is set: a pass a period by one worker at a time (a Redis lock), and
    one at once when Redis lost jobs or was away (a look every ``LOOK_SECONDS``), or when
    ``urgent`` (a worker replacing one that died)."""
    interval = interval or max(0.5, min(5.0, runtime.settings().reconcile_after_seconds / 2))
    watch, outages = RedisWatch(), redis_outages.outages_ended()
    next_look = next_pass = 0.0
    while True:
        now = time.monotonic()
        try:
            if now >= next_look or redis_outages.outages_ended() != outages:
                next_look = now + min(LOOK_SECONDS, interval)
                reason = watch.loss()
                if reason is None and redis_outages.outages_ended() != outages:
                    reason = "Redis was unreachable for a while"
                outages = redis_outages.outages_ended()
                if reason is not None:
                    log.warning("%s: re-enqueueing at once the queued notifications whose job "
                                "it does not hold", reason)
                    urgent, next_pass = True, now
            if now >= next_pass:
                next_pass = now + interval
                urgent = _one_pass(interval, urgent)
                if urgent:  # another worker's urgent pass is under way: ours follows it
                    next_pass = now + TICK_SECONDS
        except Exception as error:
            if redis_outages.waiting_stopped():
                return
            if isinstance(error, DATABASE_DOWN):
                # Else every later pass gets the dead connection, and the rows a restart
                # left `sending` wait for ever (logged once per incident: nothing says so).
                drop_connection()
            log.exception("reconciler pass failed")
        if stop.wait(TICK_SECONDS):
            return


def _one_pass(interval: float, urgent: bool) -> bool:
    """A pass, if no other worker is making one; True while an urgent pass is still owed."""
    redis = runtime.redis()
    if urgent:
        token = uuid.uuid4().hex
        if not redis.set(URGENT_LOCK_KEY, token, nx=True, px=URGENT_LOCK_MS):
            return True
        try:
            reconcile_lost_now()
            reconcile()
        finally:
            release_lock(redis, URGENT_LOCK_KEY, token)  # RQ's: only if still ours
    elif redis.set(LOCK_KEY, "1", nx=True, px=int(interval * 900)):
        reconcile()
    return False
