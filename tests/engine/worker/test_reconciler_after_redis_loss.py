"""After Redis lost its jobs the reconciler re-enqueues at once, not after the grace period."""

from __future__ import annotations

import threading

from redis import Redis

from engine import runtime
from engine.database.models import Notification
from engine.delivery.queue import enqueue_notification
from engine.queue.queueing import queue
from engine.worker import redis_watch
from engine.worker.reconciler import reconcile, reconcile_lost_now, run_periodically
from tests import factories
from tests.support.processes import wait_for


def _queued(count: int) -> list[str]:
    ws = factories.workspace()
    return [str(factories.notification(ws, factories.email_payload()).id) for _ in range(count)]


def _enqueue(nid: str) -> None:
    enqueue_notification(nid, workspace=Notification.get_by_id(nid).workspace_id)


def _in_queue() -> list[str]:
    return queue().get_job_ids()


def test_the_watch_tells_an_emptied_redis_from_one_that_kept_its_jobs(settings):
    first, second = redis_watch.RedisWatch(), redis_watch.RedisWatch()
    assert "lacks Herald's marker key" in first.loss()  # the fixture emptied Redis
    assert second.loss() is None, "the marker the first one set says nothing was lost"
    assert first.loss() is None
    Redis.from_url(settings.redis_url).flushall()
    assert "lacks Herald's marker key" in second.loss()
    # The second watch set the marker again: the first one tells by its new value.
    assert "emptied since the last look" in first.loss()
    assert first.loss() is None and second.loss() is None


def test_every_recent_queued_row_whose_job_is_gone_is_enqueued_once(settings):
    ids = _queued(7)
    for nid in ids[:2]:
        _enqueue(nid)  # these jobs survived
    Notification.update(status="delivered").where(Notification.id == ids[2]).execute()
    assert reconcile()["lost"] == 0, "younger than HERALD_RECONCILE_AFTER_SECONDS"
    counts = reconcile_lost_now(batch=2)  # pages of two: every page is read
    assert counts == {"lost": 4, "exhausted": 0, "dropped": 0}
    assert sorted(_in_queue()) == sorted(ids[:2] + ids[3:])
    assert reconcile_lost_now(batch=2) == {"lost": 0, "exhausted": 0,
                                          "dropped": 0}


def test_the_reconciler_acts_at_once_when_redis_is_emptied(settings):
    stop = threading.Event()
    # A period far longer than the test: only the look for a lost Redis can act in time.
    thread = threading.Thread(target=run_periodically, args=(stop, 3600.0), daemon=True)
    ids = _queued(3)
    for nid in ids:
        _enqueue(nid)
    thread.start()
    try:
        wait_for(lambda: runtime.redis().exists(redis_watch.MARKER_KEY), 10, "the first look")
        Redis.from_url(settings.redis_url).flushall()
        wait_for(lambda: sorted(_in_queue()) == sorted(ids), 10,
                 "the jobs Redis lost to be enqueued again", lambda: f"queue: {_in_queue()}")
    finally:
        stop.set()
        thread.join(timeout=10)
    assert not thread.is_alive()
