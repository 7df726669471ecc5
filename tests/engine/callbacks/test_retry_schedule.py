"""A failed callback's retry is scheduled no earlier than the callback is due: RQ scores a
scheduled job by whole seconds, truncated, and a job run before its callback is due found
nothing to send and left the retry to the sweep, a minute later."""

from __future__ import annotations

import datetime as dt

from redis import Redis
from rq import Queue

from engine.callbacks.jobs import send_callbacks
from engine.callbacks.queue import JOB_FUNCTION
from engine.database.models import utcnow
from engine.database.models.callbacks import Callback
from engine.queue.queueing import CALLBACK_QUEUE_NAME
from tests.engine.callbacks.test_callbacks import _email, called_back, smtp  # noqa: F401
from tests.support.https_receiver import Scripted


def _scheduled(settings) -> list[tuple[str, float]]:
    """The callbacks queue's scheduled jobs and the second each is moved to the queue."""
    queue = Queue(CALLBACK_QUEUE_NAME, connection=Redis.from_url(settings.redis_url))
    registry = queue.scheduled_job_registry
    return [(job_id, score) for job_id, score in
            Redis.from_url(settings.redis_url).zrange(registry.key, 0, -1, withscores=True)]


def _epoch(naive_utc: dt.datetime) -> float:
    return naive_utc.replace(tzinfo=dt.UTC).timestamp()


def test_a_retry_is_scheduled_no_earlier_than_it_is_due(settings, smtp, called_back,  # noqa: F811
                                                        receiver):
    from engine.delivery.jobs import deliver_notification

    receiver.script["/cb"] = [Scripted(status=500), Scripted(status=200)]
    deliver_notification(str(_email(called_back).id))
    assert send_callbacks(str(called_back.id)) == 1
    row = Callback.get()
    assert row.status == "retrying"
    (job_id, score), = _scheduled(settings)
    assert score >= _epoch(row.next_attempt_at), (score, row.next_attempt_at)
    job = Queue(CALLBACK_QUEUE_NAME, connection=Redis.from_url(settings.redis_url)).fetch_job(
        job_id.decode())
    assert (job.func_name, job.args) == (JOB_FUNCTION, (str(called_back.id),))


def test_a_job_that_runs_before_the_retry_is_due_schedules_one_for_it(
        settings, smtp, called_back, receiver):  # noqa: F811
    from engine.delivery.jobs import deliver_notification

    receiver.script["/cb"] = [Scripted(status=500), Scripted(status=200)]
    deliver_notification(str(_email(called_back).id))
    send_callbacks(str(called_back.id))
    later = utcnow() + dt.timedelta(seconds=30)  # pushed back meanwhile (a Retry-After)
    Callback.update(next_attempt_at=later).execute()
    Redis.from_url(settings.redis_url).flushall()  # the job scheduled for it is gone
    assert send_callbacks(str(called_back.id)) == 0  # ran early: nothing due yet
    (_, score), = _scheduled(settings)
    assert _epoch(later) <= score < _epoch(later) + 2
    # Twice early: still one job for that second.
    send_callbacks(str(called_back.id))
    assert len(_scheduled(settings)) == 1
