"""`herald worker`'s worker class: a delivery job is handed to the delivery thread as soon as RQ
dequeues it."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading

import pytest
from redis import Redis
from rq import SimpleWorker
from rq.exceptions import StopRequested
from rq.worker import WorkerStatus

from engine import runtime
from engine.database import notification_store
from engine.database.models import Notification
from engine.database.models.inbox import InboxMessage
from engine.delivery.queue import enqueue_notification
from engine.queue import redis_outages
from engine.queue.embedded_redis import free_port
from engine.queue.queueing import QUEUE_NAME, WORKER_QUEUE_NAMES, queue
from engine.worker import handoff
from engine.worker import scheduler as scheduler_module
from engine.worker.scheduler import LEASE_SECONDS, HeraldScheduler, SchedulerProcess
from engine.worker.worker_class import HeraldWorker
from tests import factories

SEEN: list[str] = []


def other_job(value: str) -> str:
    """A job that is not a delivery (RQ imports it by name)."""
    SEEN.append(value)
    return value


@pytest.fixture
def claims(settings, monkeypatch):
    """Which thread each claim ran on; the claim itself is the real one."""
    monkeypatch.setenv("HERALD_EMAIL_PROVIDER", "inbox://")
    threads: list[str] = []
    real = notification_store.claim

    def claim(notification_id: str, *limits: float, **channel: str):
        threads.append(threading.current_thread().name)
        return real(notification_id, *limits, **channel)

    monkeypatch.setattr(notification_store, "claim", claim)
    handoff.start()
    yield threads
    handoff.close()


def _work() -> None:
    HeraldWorker([QUEUE_NAME], connection=runtime.redis()).work(burst=True)


def test_each_delivery_is_claimed_and_delivered_on_the_delivery_thread(claims):
    ws = factories.workspace()
    ids = [str(factories.notification(ws, factories.email_payload(subject=f"n{i}")).id)
           for i in range(3)]
    for nid in ids:
        enqueue_notification(nid, workspace=ws.id)
    _work()
    handoff.close()
    assert len(claims) == 3 and all(name.startswith("herald-delivery") for name in claims)
    statuses = {str(n.id): n.status for n in Notification.select()}
    assert statuses == dict.fromkeys(ids, "delivered")
    assert InboxMessage.select().count() == 3
    assert queue().failed_job_registry.get_job_ids() == []


def test_a_delivery_the_thread_took_is_settled_without_rqs_execution(claims, monkeypatch):
    # RQ's execution of a job handed over (its registries, its status, its result: a third
    # of the worker's CPU per email) is skipped; the job's hash goes at once, as RQ's own
    # path deletes it (result_ttl 0), so nothing of it is left in Redis.
    performed: list[str] = []
    real = HeraldWorker.perform_job

    def perform_job(self, job, *args, **kwargs):  # RQ's own, noting which jobs it ran
        performed.append(job.id)
        return real(self, job, *args, **kwargs)

    monkeypatch.setattr(HeraldWorker, "perform_job", perform_job)
    ws = factories.workspace()
    ids = [str(factories.notification(ws, factories.email_payload(subject=f"s{i}")).id)
           for i in range(3)]
    for nid in ids:
        enqueue_notification(nid, workspace=ws.id)
    other = queue().enqueue(f"{__name__}.other_job", "after")  # any other job: RQ's way
    SEEN.clear()
    _work()
    handoff.close()
    assert {n.status for n in Notification.select()} == {"delivered"}
    assert SEEN == ["after"] and performed == [other.id]
    redis = runtime.redis()
    assert [k for k in redis.keys("rq:job:*") if k.decode().split(":")[-1] in ids] == []


def test_a_job_claimed_twice_sends_once(claims):
    ws = factories.workspace()
    nid = str(factories.notification(ws, factories.email_payload()).id)
    enqueue_notification(nid, workspace=ws.id)
    queue().enqueue("engine.delivery.jobs.deliver_notification", nid)  # a duplicate job for one id
    _work()
    handoff.close()
    assert len(claims) == 2
    assert Notification.get_by_id(nid).status == "delivered"
    assert InboxMessage.select().count() == 1


def test_other_jobs_run_as_before_with_nothing_claimed(claims):
    SEEN.clear()
    queue().enqueue(f"{__name__}.other_job", "ran")
    _work()
    assert SEEN == ["ran"] and claims == []


def test_a_delivery_job_whose_argument_is_no_id_claims_in_the_job(claims):
    ws = factories.workspace()
    nid = str(factories.notification(ws, factories.email_payload()).id)
    queue().enqueue("engine.delivery.jobs.deliver_notification", 42)  # nothing handed over for it
    enqueue_notification(nid, workspace=ws.id)
    _work()  # the bad job claims in the job (and fails there on PostgreSQL); the next runs
    handoff.close()
    assert Notification.get_by_id(nid).status == "delivered"
    assert claims == ["MainThread", "herald-delivery_0"]


def test_an_error_in_a_handed_over_delivery_is_logged_and_leaves_the_row(claims, monkeypatch,
                                                                         caplog):
    ws = factories.workspace()
    broken, fine = (str(factories.notification(ws, factories.email_payload()).id)
                    for _ in range(2))
    real = notification_store.claim

    def claim(notification_id: str, *limits: float, **channel: str):
        if notification_id == broken:
            raise RuntimeError("database gone")
        return real(notification_id, *limits, **channel)

    monkeypatch.setattr(notification_store, "claim", claim)
    enqueue_notification(broken, workspace=ws.id)
    enqueue_notification(fine, workspace=ws.id)
    with caplog.at_level(logging.ERROR, logger="herald.delivery"):
        _work()
        handoff.close()
    assert broken in caplog.text and "database gone" in caplog.text
    assert queue().failed_job_registry.get_job_ids() == []  # RQ counted the job done
    assert Notification.get_by_id(broken).status == "queued"  # the reconciler's to retry
    assert Notification.get_by_id(fine).status == "delivered"


def test_the_worker_runs_herald_s_scheduler(settings):
    worker = HeraldWorker([QUEUE_NAME], connection=runtime.redis())
    worker.work(burst=True, with_scheduler=True)  # a burst runs it inline, in this process
    assert isinstance(worker.scheduler, HeraldScheduler)


def test_the_scheduler_holds_its_lock_on_a_short_lease_and_rewrites_its_record(settings):
    redis = runtime.redis()
    scheduler = HeraldScheduler([QUEUE_NAME], connection=redis)
    lock = scheduler.get_locking_key(QUEUE_NAME)
    assert scheduler.acquire_locks() == {QUEUE_NAME}
    assert 0 < redis.ttl(lock) <= LEASE_SECONDS  # RQ's own lease is 61 s
    scheduler.register_birth()  # what its process does first
    redis.delete(scheduler.key)  # as after Redis lost it
    scheduler.heartbeat()
    assert 0 < redis.ttl(lock) <= LEASE_SECONDS
    assert queue().scheduler_pid == os.getpid()  # the whole record is back, pid and all
    other = HeraldScheduler([QUEUE_NAME], connection=redis)
    assert other.acquire_locks() == set() and redis.get(lock).decode() == scheduler.name


def test_a_scheduler_that_lost_its_lock_stops(settings):
    redis = runtime.redis()
    scheduler = HeraldScheduler([QUEUE_NAME], connection=redis)
    assert scheduler.acquire_locks() == {QUEUE_NAME}
    scheduler.register_birth()
    redis.set(scheduler.get_locking_key(QUEUE_NAME), "another-scheduler")
    scheduler.heartbeat()
    assert scheduler._stop_requested, "RQ's scheduler would idle on without its lock"
    assert redis.get(scheduler.get_locking_key(QUEUE_NAME)) == b"another-scheduler"


@pytest.mark.parametrize("held_by_another", WORKER_QUEUE_NAMES)
def test_a_scheduler_takes_every_queue_s_lock_or_none(settings, held_by_another):
    """RQ takes each queue's lock on its own, in the order of a set, which differs between
    processes (string hashes are seeded per process): two workers starting together each
    took some of the locks and each started a scheduler."""
    redis = runtime.redis()
    redis.set(HeraldScheduler.get_locking_key(held_by_another), "another-scheduler",
              ex=LEASE_SECONDS)
    scheduler = HeraldScheduler(list(WORKER_QUEUE_NAMES), connection=redis)
    assert scheduler.acquire_locks() == set()
    assert scheduler.acquired_locks == set()
    assert [redis.get(HeraldScheduler.get_locking_key(name)) for name in WORKER_QUEUE_NAMES] \
        == [b"another-scheduler" if name == held_by_another else None
            for name in WORKER_QUEUE_NAMES]
    redis.delete(HeraldScheduler.get_locking_key(held_by_another))
    assert scheduler.acquire_locks() == set(WORKER_QUEUE_NAMES)


def test_a_scheduler_that_lost_one_of_its_locks_stops(settings):
    redis = runtime.redis()
    scheduler = HeraldScheduler(list(WORKER_QUEUE_NAMES), connection=redis)
    assert scheduler.acquire_locks() == set(WORKER_QUEUE_NAMES)
    scheduler.register_birth()
    redis.set(scheduler.get_locking_key(WORKER_QUEUE_NAMES[-1]), "another-scheduler")
    scheduler.heartbeat()
    assert scheduler._stop_requested


@pytest.fixture
def starting_scheduler(settings):
    """A worker whose scheduler took the lock and whose process is still starting (importing,
    on a loaded machine, for longer than the lease)."""
    redis = runtime.redis()
    worker = HeraldWorker([QUEUE_NAME], connection=redis)
    worker.scheduler = HeraldScheduler([QUEUE_NAME], connection=redis)
    assert worker.scheduler.acquire_locks() == {QUEUE_NAME}
    starting = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    worker.scheduler._process = SchedulerProcess(starting)
    yield worker
    starting.kill()
    starting.wait()


def test_a_worker_keeps_the_lease_of_a_scheduler_process_still_starting(starting_scheduler):
    """Left to lapse, the lock went to another worker, whose scheduler was as slow to start:
    the two took turns, each started process living on beside the next, for as long as the
    load lasted."""
    redis = runtime.redis()
    lock = starting_scheduler.scheduler.get_locking_key(QUEUE_NAME)
    redis.pexpire(lock, 300)  # the lease nearly over, no heartbeat yet
    starting_scheduler.run_maintenance_tasks()
    assert redis.ttl(lock) > LEASE_SECONDS // 2
    assert HeraldScheduler([QUEUE_NAME], connection=redis).acquire_locks() == set()


def test_a_scheduler_process_past_its_start_keeps_its_own_lease(starting_scheduler,
                                                                 monkeypatch):
    """A process that hangs after its start (no heartbeat) must lose the locks, so that
    another worker's scheduler takes them over, as before the worker kept the lease."""
    redis = runtime.redis()
    lock = starting_scheduler.scheduler.get_locking_key(QUEUE_NAME)
    monkeypatch.setattr(scheduler_module, "STARTING_SECONDS", 0.0)
    redis.pexpire(lock, 300)
    starting_scheduler.run_maintenance_tasks()
    assert redis.pttl(lock) <= 300


def test_a_worker_never_takes_back_a_lock_another_scheduler_holds(starting_scheduler):
    redis = runtime.redis()
    lock = starting_scheduler.scheduler.get_locking_key(QUEUE_NAME)
    redis.set(lock, "another-scheduler", ex=LEASE_SECONDS)
    starting_scheduler.run_maintenance_tasks()
    assert redis.get(lock) == b"another-scheduler"


def test_a_stop_request_in_a_job_touches_nothing_of_redis(settings, monkeypatch):
    """RQ's handler writes the request to Redis: with Redis away, that write fails inside the
    handler, and the error surfaces in the middle of whatever the job was doing."""
    monkeypatch.setattr(redis_outages, "_state", redis_outages._Outages())
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    worker = HeraldWorker([QUEUE_NAME], connection=runtime.redis())
    worker.set_state(WorkerStatus.BUSY)
    worker.connection = Redis(port=free_port(), socket_connect_timeout=1)  # Redis gone
    try:
        worker.request_stop(signal.SIGTERM, None)
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
    assert worker._stop_requested and redis_outages.waiting_stopped()


def test_a_stop_request_swallowed_where_it_was_raised_still_stops_the_loop(settings):
    """A SIGTERM while the idle worker writes a log line raises StopRequested inside
    logging's emit, which catches every exception (it printed "--- Logging error ---" and
    the worker went on taking jobs for good): the request must outlive the exception."""
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    worker = HeraldWorker([QUEUE_NAME], connection=runtime.redis())
    worker.set_state(WorkerStatus.IDLE)
    try:
        with contextlib.suppress(StopRequested):  # what logging's handleError does with it
            worker.request_stop(signal.SIGTERM, None)
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
    assert worker._stop_requested  # RQ's loop checks it before every dequeue


@pytest.mark.parametrize("method", ["execute_job", "handle_job_success"])
def test_a_stop_request_raised_in_rq_s_bookkeeping_reaches_its_loop(settings, monkeypatch,
                                                                    method):
    """A signal while the worker is idle raises StopRequested wherever the worker is; the
    guards around RQ's bookkeeping must not swallow it (the worker would never stop)."""

    def stop(*_args, **_kwargs):
        raise StopRequested()

    monkeypatch.setattr(SimpleWorker, method, stop)
    worker = HeraldWorker([QUEUE_NAME], connection=runtime.redis())
    with pytest.raises(StopRequested):
        getattr(worker, method)(*([None] * (2 if method == "execute_job" else 4)))


def test_a_pubsub_thread_still_reading_does_not_hold_the_worker_s_exit(settings):
    """RQ's teardown waited for its pub/sub thread without a bound (redis-py 8's stop()):
    a thread caught in a read after a Redis restart kept a stopping worker alive."""
    worker = HeraldWorker([QUEUE_NAME], connection=runtime.redis())
    worker.subscribe()
    reading, release = threading.Event(), threading.Event()

    def a_read_that_has_not_returned(*args, **kwargs):
        reading.set()
        release.wait(60)

    worker.pubsub.get_message = a_read_that_has_not_returned
    assert reading.wait(30), "the pub/sub thread never read"
    try:
        worker.unsubscribe()
        assert worker.pubsub_thread.is_alive()  # the teardown went on without it
    finally:
        release.set()
    worker.pubsub_thread.join(30)
    assert not worker.pubsub_thread.is_alive()  # and it ends by itself, read done
