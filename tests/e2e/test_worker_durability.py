"""Real worker processes: a SIGKILL mid-burst and a Redis FLUSHALL lose nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from peewee import fn
from redis import Redis

from engine.database.models import DeliveryAttempt, Notification
from engine.delivery.jobs import CHECKPOINT_ROWS
from engine.delivery.outcomes import UNRECORDED_MOST
from engine.delivery.queue import enqueue_notification
from engine.queue.embedded_redis import free_port
from tests import factories
from tests.conftest import TEST_SECRET_KEY
from tests.support.smtp_server import start_smtp

IN_FLIGHT = 8


@pytest.fixture
def smtp_server():
    controller, handler = start_smtp(free_port())
    yield controller.port, handler
    controller.stop()


def _worker_env(settings, smtp_port: int) -> dict[str, str]:
    return {**os.environ, "HERALD_ENV": "test", "HERALD_DATABASE_URL": settings.database_url,
            "HERALD_REDIS_URL": settings.redis_url, "HERALD_SECRET_KEY": TEST_SECRET_KEY,
            "HERALD_EMAIL_PROVIDER": f"smtp://127.0.0.1:{smtp_port}?tls=none",
            "HERALD_RECONCILE_AFTER_SECONDS": "2"}


def _worker(settings, smtp_port: int, concurrency: int = 32) -> subprocess.Popen:
    env = _worker_env(settings, smtp_port)
    # A session of its own: a kill takes the worker and its scheduler process together, as
    # a crashed host would, and leaves nothing writing to the tests' Redis afterwards.
    return subprocess.Popen([sys.executable, "-m", "engine.worker.worker",
                             "--concurrency", str(concurrency)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def _burst(count: int) -> list[str]:
    ws = factories.workspace()
    ids = []
    for i in range(count):
        n = factories.notification(ws, factories.email_payload(subject=f"message {i}"))
        ids.append(str(n.id))
    return ids


def _enqueue(ids: list[str]) -> None:
    """Each job in its workspace's lane, as the API enqueues it."""
    workspaces = {str(nid): ws for nid, ws in Notification.select(
        Notification.id, Notification.workspace).where(Notification.id.in_(ids)).tuples()}
    for nid in ids:
        enqueue_notification(nid, workspace=workspaces[nid])


def _wait(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    counts = {row.status: row.n for row in Notification.select(
        Notification.status, fn.COUNT(Notification.id).alias("n")).group_by(Notification.status)}
    raise AssertionError(f"timed out waiting for {what}; statuses now {counts}")


def _delivered(ids: list[str]) -> int:
    return Notification.select().where(Notification.id.in_(ids),
                                       Notification.status == "delivered").count()


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.mark.slow
def test_sigkill_mid_burst_loses_nothing(settings, smtp_server):
    port, handler = smtp_server
    handler.delay = 0.2  # 100 messages, 8 at a time, take seconds: the kill lands mid-burst
    ids = _burst(100)
    _enqueue(ids)
    first = _worker(settings, port, concurrency=IN_FLIGHT)
    try:
        _wait(lambda: _delivered(ids) >= 10, 60, "the first deliveries")
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
        assert _delivered(ids) < len(ids), "the burst ended before the kill: not a crash test"
    finally:
        _stop(first)
    second = _worker(settings, port)
    try:
        _wait(lambda: _delivered(ids) == len(ids), 90, "every notification delivered")
    finally:
        _stop(second)
    subjects = [m.content.split(b"Subject: ")[1].split(b"\r\n")[0] for m in handler.received]
    assert {f"message {i}".encode() for i in range(100)} <= set(subjects)
    # Re-sent: at most the deliveries the first worker had in flight at the kill.
    assert len(subjects) - len(set(subjects)) <= IN_FLIGHT, "more than those in flight re-sent"


@pytest.mark.slow
def test_sigkill_mid_fan_out_re_sends_only_what_no_checkpoint_recorded(settings, smtp_server):
    port, handler = smtp_server
    handler.delay = 0.03  # 400 messages over 4 lanes take ~3 s: the kill lands mid-fan-out
    recipients = [f"reader{i}@example.net" for i in range(400)]
    n = factories.notification(factories.workspace(), factories.email_payload(
        emailType="Marketing", to=recipients))
    enqueue_notification(str(n.id), workspace=n.workspace_id)
    settled = DeliveryAttempt.select().where(DeliveryAttempt.notification == n.id)
    first = _worker(settings, port)
    try:
        _wait(lambda: settled.count() >= 2 * CHECKPOINT_ROWS, 60, "two checkpoints")
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
    finally:
        _stop(first)
    # A message whose DATA ended just before the kill is still waiting on the server's
    # delay: once the server has closed the killed worker's sessions, it has arrived or
    # been dropped, and what arrived is counted.
    _wait(lambda: handler.open_sessions == 0, 10, "the killed worker's sessions closed")
    assert Notification.get_by_id(n.id).status == "sending", "ended before the kill"
    sent_before = len(handler.received)
    recorded = settled.count()
    assert sent_before >= recorded >= 2 * CHECKPOINT_ROWS
    second = _worker(settings, port)
    try:
        _wait(lambda: _delivered([str(n.id)]) == 1, 90, "the fan-out finished")
    finally:
        _stop(second)
    reached = [m.rcpt_tos[0] for m in handler.received]
    assert sorted(set(reached)) == sorted(recipients)
    # Sent twice: only what the first worker sent and had not recorded, never a whole
    # attempt's worth (which would be every one of the recorded ones too).
    assert len(reached) - len(recipients) <= sent_before - recorded
    # Unrecorded at the kill: the outcomes read since the last checkpoint and those the
    # lanes sent on while it was committed (UNRECORDED_MOST), the messages in flight (4
    # lanes) and answers the delivery thread had not read yet.
    assert sent_before - recorded <= UNRECORDED_MOST + 20


@pytest.mark.slow
def test_redis_flushall_with_jobs_queued_loses_nothing(settings, smtp_server):
    port, handler = smtp_server
    ids = _burst(20)
    _enqueue(ids)
    Redis.from_url(settings.redis_url).flushall()
    worker = _worker(settings, port)
    try:
        _wait(lambda: _delivered(ids) == len(ids), 60, "the reconciler to re-enqueue everything")
    finally:
        _stop(worker)
    assert len(handler.received) == 20


@pytest.mark.slow
def test_sigterm_lets_the_worker_finish_the_job_in_hand(settings, smtp_server):
    port, handler = smtp_server
    handler.delay = 1.5  # the SMTP server is slow: SIGTERM lands mid-delivery
    (nid,) = _burst(1)
    _enqueue([nid])
    worker = _worker(settings, port)
    try:
        _wait(lambda: Notification.get_by_id(nid).status == "sending", 30, "the job to start")
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=30) == 0
    finally:
        _stop(worker)
    assert Notification.get_by_id(nid).status == "delivered"
    assert len(handler.received) == 1


@pytest.mark.slow
def test_fork_per_job_worker_delivers_on_its_own_connections(settings, smtp_server):
    port, handler = smtp_server
    ids = _burst(10)
    _enqueue(ids)
    env = _worker_env(settings, port)
    proc = subprocess.run([sys.executable, "-m", "engine.worker.worker", "--burst", "--fork"],
                          env=env, capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _delivered(ids) == 10
    assert len(handler.received) == 10
    assert Redis.from_url(settings.redis_url).keys("herald:lanes:*") == []


def test_reconciler_re_enqueues_a_job_that_left_the_queue_but_never_started(settings):
    """The window a SIGKILL can hit: the job hash says queued, the queue list no longer has it."""
    import datetime as dt

    from engine.database.models import utcnow
    from engine.queue.queueing import queue
    from engine.worker.reconciler import reconcile

    (nid,) = _burst(1)
    Notification.update(updated_at=utcnow() - dt.timedelta(minutes=5)).where(
        Notification.id == nid).execute()  # queued for longer than the grace period
    _enqueue([nid])
    redis = Redis.from_url(settings.redis_url)
    redis.lrem(queue().key, 0, nid)  # taken off the list by a worker that then died
    assert queue().get_job_position(nid) is None
    assert reconcile()["lost"] == 1
    assert queue().get_job_position(nid) is not None
    assert reconcile()["lost"] == 0, "a job really in the queue is left alone"


@pytest.mark.slow
def test_a_worker_exits_soon_after_sigterm_once_its_deliveries_are_done(settings, smtp_server):
    port, _ = smtp_server
    ids = _burst(3)
    _enqueue(ids)
    worker = _worker(settings, port)
    try:
        _wait(lambda: _delivered(ids) == 3, 60, "the burst")
        worker.send_signal(signal.SIGTERM)
        # Not RQ's minute: its pub/sub thread, which the teardown waits for, wakes every
        # second (engine/worker/worker_class.py).
        assert worker.wait(timeout=20) == 0
    finally:
        _stop(worker)
