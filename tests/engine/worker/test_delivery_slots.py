"""The delivery slots: a job hands its delivery over and returns; at most ``concurrency``
deliveries run at once, at most a workspace's share of one workspace, each slot free only
once its delivery has ended (its outcome committed)."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from engine.database.models import DeliveryAttempt, Notification
from engine.delivery.jobs import deliver_notification
from engine.worker import handoff, inflight
from tests import factories


@pytest.fixture
def thread(settings):
    handoff.start()
    yield
    handoff.close()


def _blocked(log: list[str], name: str) -> tuple[threading.Event, object]:
    release = threading.Event()

    def work() -> None:
        log.append(f"{name} started")
        release.wait()
        log.append(f"{name} done")

    return release, work


def test_a_job_returns_without_waiting_for_its_own_delivery(thread):
    log: list[str] = []
    release, work = _blocked(log, "first")
    handoff.hand("job-1", work)
    assert handoff.taken("job-1") is True  # returns while the delivery is blocked
    assert "first done" not in log
    release.set()
    handoff.close()
    assert log == ["first started", "first done"]


def test_deliveries_run_side_by_side_up_to_the_concurrency(settings):
    handoff.start(concurrency=3)
    slots = handoff.installed()
    started = threading.Semaphore(0)
    release = threading.Event()

    def work() -> None:
        started.release()
        release.wait()

    try:
        for i in range(3):
            assert slots.room(0)
            handoff.hand(f"job-{i}", work)
            assert handoff.taken(f"job-{i}")
        for _ in range(3):  # all three in flight at once
            assert started.acquire(timeout=30)
        assert slots.in_flight() == 3
        assert slots.room(0) is False  # RQ's loop takes no fourth job
        waiting = threading.Thread(target=slots.room, args=(None,))
        waiting.start()
        assert _until(slots.waiting), "a fan-out would not know a delivery waits"
        release.set()
        waiting.join(timeout=30)
        assert not waiting.is_alive()  # a slot came free once a delivery ended
    finally:
        release.set()
        handoff.close()


def test_a_workspace_at_its_share_is_full_until_one_of_its_deliveries_ends(settings):
    handoff.start(concurrency=4, per_workspace=2)
    slots = handoff.installed()
    release = threading.Event()
    try:
        handoff.hand("a-1", release.wait, "ws-a")
        assert slots.full() == []
        handoff.hand("a-2", release.wait, "ws-a")
        handoff.hand("b-1", release.wait, "ws-b")
        assert slots.full() == ["ws-a"]
        assert slots.room(0)  # other workspaces still have room
        release.set()
        assert _until(lambda: slots.in_flight() == 0)
        assert slots.full() == []
    finally:
        release.set()
        handoff.close()


def test_the_share_is_a_quarter_of_the_slots_at_least_one_unless_set():
    assert handoff.workspace_share(32) == 8
    assert handoff.workspace_share(3) == 1
    assert handoff.workspace_share(32, 5) == 5
    assert handoff.workspace_share(4, 9) == 4


def test_a_slot_is_free_only_once_its_delivery_ended(settings):
    handoff.start(concurrency=1)
    slots = handoff.installed()
    log: list[str] = []
    release, work = _blocked(log, "first")
    try:
        handoff.hand("job-1", work)
        assert slots.room(0) is False
        release.set()
        assert slots.room(30)
        assert log == ["first started", "first done"]  # ended before its slot came free
    finally:
        release.set()
        handoff.close()


def test_a_delivery_in_flight_holds_a_lease_the_reconciler_sees(settings):
    handoff.start(concurrency=2)
    release = threading.Event()
    try:
        handoff.hand("0b0e7f4e-lease", release.wait)
        assert _until(lambda: inflight.held("0b0e7f4e-lease")), "no lease written"
        release.set()
        assert _until(lambda: not inflight.held("0b0e7f4e-lease")), "the lease outlived it"
    finally:
        release.set()
        handoff.close()
    assert not inflight.held("0b0e7f4e-lease")


def test_a_failed_delivery_is_logged_with_its_key_and_the_next_one_runs(thread, caplog):
    def broken() -> None:
        raise RuntimeError("database gone")

    done: list[str] = []
    with caplog.at_level(logging.ERROR, logger="herald.delivery"):
        handoff.hand("job-1", broken)
        assert handoff.taken("job-1")
        handoff.hand("job-2", lambda: done.append("next"))
        assert handoff.taken("job-2")  # the failure does not reach the next job
        handoff.close()
    assert "job-1" in caplog.text and "database gone" in caplog.text
    assert done == ["next"]


def test_a_job_with_nothing_handed_over_delivers_itself(thread):
    assert handoff.taken("job-2") is False


def test_a_delivery_that_ended_before_its_job_ran_is_still_taken(thread):
    done = threading.Event()
    handoff.hand("job-1", done.set)
    assert done.wait(30)
    assert handoff.taken("job-1") is True  # never delivered a second time by the job


def test_without_the_thread_nothing_is_handed_over(settings):
    ran: list[str] = []
    handoff.hand("job-1", lambda: ran.append("claim"))
    assert handoff.taken("job-1") is False and ran == []


def test_handed_over_deliveries_record_every_outcome(settings, thread, monkeypatch):
    monkeypatch.setenv("HERALD_EMAIL_PROVIDER", "inbox://")
    ws = factories.workspace()
    first, second = (str(factories.notification(ws, factories.email_payload(to=[to])).id)
                     for to in ("ada@example.net", "bob@example.net"))
    for nid in (first, second):
        assert handoff.hand_delivery(nid)  # the slot calls the delivery itself
        assert handoff.taken(nid)  # the worker settles the job without running it
    handoff.close()  # a worker's shutdown: the deliveries in hand are finished
    assert Notification.get_by_id(first).status == "delivered"
    assert Notification.get_by_id(second).status == "delivered"
    assert DeliveryAttempt.select().where(DeliveryAttempt.outcome == "delivered").count() == 2


def test_a_delivery_job_run_beside_the_slots_delivers_itself(settings, thread, monkeypatch):
    """The job function always delivers: a job RQ runs is never one that only says its
    notification went elsewhere (RQ would file as finished a delivery nobody made)."""
    monkeypatch.setenv("HERALD_EMAIL_PROVIDER", "inbox://")
    n = factories.notification(factories.workspace(), factories.email_payload())
    assert deliver_notification(str(n.id)) == "delivered"
    assert Notification.get_by_id(n.id).status == "delivered"
    assert handoff.installed().in_flight() == 0  # nothing went to the slots


def test_without_the_thread_the_job_delivers_and_records_itself(settings, monkeypatch):
    monkeypatch.setenv("HERALD_EMAIL_PROVIDER", "inbox://")
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload())
    assert deliver_notification(str(n.id)) == "delivered"
    assert Notification.get_by_id(n.id).status == "delivered"


def _until(predicate, seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_the_reconciler_leaves_a_row_whose_delivery_is_in_flight(settings):
    import datetime as dt

    from engine.database.models import utcnow
    from engine.queue.queueing import queue
    from engine.worker.inflight import Leases
    from engine.worker.reconciler import reconcile

    ws = factories.workspace()
    rows = [factories.notification(ws, factories.email_payload()) for _ in range(2)]
    Notification.update(status="sending", attempts=1,
                        updated_at=utcnow() - dt.timedelta(minutes=5)).where(
        Notification.id.in_([r.id for r in rows])).execute()
    leases = Leases()
    leases.add(str(rows[0].id))  # its delivery runs on in a live worker, past the grace
    leases.write()
    assert reconcile()["stuck"] == 1
    assert queue().get_job_ids() == [str(rows[1].id)]  # the crashed one only
    leases.stop()  # the delivery ended: the lease goes with it
    assert not inflight.held(str(rows[0].id))


def test_callback_passes_take_no_delivery_slot_and_fill_only_their_own(settings):
    # A pass that waits on a hanging receiver: deliveries keep every slot, and while every
    # pass slot is busy the take leaves the callbacks queue to other processes.
    slots = handoff.DeliverySlots(1, passes=1)
    log: list[str] = []
    release, work = _blocked(log, "pass")
    keys = ["rq:queue:herald-priority", handoff.CALLBACKS_QUEUE_KEY]
    try:
        assert slots.serving(keys) == keys
        slots.hand_pass("callbacks:job-1", work)
        assert slots.room(0) and slots.in_flight() == 0
        assert slots.serving(keys) == keys[:1]
        assert slots.take("callbacks:job-1")  # the job is settled without RQ's execution
    finally:
        release.set()
        slots.close()
    assert log == ["pass started", "pass done"]
    assert slots.serving(keys) == keys
