"""The delivery thread: a job hands its delivery over and returns; deliveries run one at a time
(never more than one send unrecorded), at most one running while one more waits."""

from __future__ import annotations

import logging
import threading

import pytest

from engine.delivery.jobs import deliver_notification, hand_over
from engine.store.models import DeliveryAttempt, Notification
from engine.worker import handoff
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


def test_the_next_job_waits_for_the_delivery_before_it(thread):
    log: list[str] = []
    release, work = _blocked(log, "first")
    handoff.hand("job-1", work)
    assert handoff.taken("job-1")
    handoff.hand("job-2", lambda: log.append("second"))
    seen: list[list[str]] = []
    job = threading.Thread(target=lambda: seen.append(
        log.copy() if handoff.taken("job-2") else ["not taken"]))
    job.start()
    job.join(timeout=0.5)  # a job that did not wait would have returned by now
    assert job.is_alive() and seen == []
    release.set()
    job.join()
    # Job 2 returned only once delivery 1 had finished; delivery 2 never overlapped it.
    assert seen == [["first started", "first done"]] or seen == [
        ["first started", "first done", "second"]]
    handoff.close()
    assert log == ["first started", "first done", "second"]


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


def test_a_job_with_nothing_handed_over_delivers_itself_once_the_thread_is_idle(thread):
    log: list[str] = []
    release, work = _blocked(log, "first")
    handoff.hand("job-1", work)
    assert handoff.taken("job-1")
    result: list[bool] = []
    job = threading.Thread(target=lambda: result.append(handoff.taken("job-2")))
    job.start()
    job.join(timeout=0.5)
    assert job.is_alive()  # it may not deliver beside the thread's delivery
    release.set()
    job.join()
    assert result == [False] and log[-1] == "first done"


def test_a_delivery_handed_over_for_another_job_runs_and_is_waited_for(thread, caplog):
    log: list[str] = []
    release, work = _blocked(log, "first")
    handoff.hand("job-1", work)
    release.set()
    with caplog.at_level(logging.WARNING, logger="herald.delivery"):
        assert handoff.taken("job-2") is False
    assert log == ["first started", "first done"] and "job-1" in caplog.text


def test_without_the_thread_nothing_is_handed_over(settings):
    ran: list[str] = []
    handoff.hand("job-1", lambda: ran.append("claim"))
    assert handoff.taken("job-1") is False and ran == []


def test_handed_over_jobs_record_every_outcome_in_order(settings, thread, monkeypatch):
    monkeypatch.setenv("HERALD_EMAIL_PROVIDER", "inbox://")
    ws = factories.workspace()
    first, second = (str(factories.notification(ws, factories.email_payload(to=[to])).id)
                     for to in ("ada@example.net", "bob@example.net"))
    for nid in (first, second):
        hand_over(nid)
        assert deliver_notification(nid) == "handed over"
        # When a job returns, every delivery before it is recorded.
    assert Notification.get_by_id(first).status == "delivered"
    handoff.close()  # a worker's shutdown: the delivery in hand is finished
    assert Notification.get_by_id(second).status == "delivered"
    assert DeliveryAttempt.select().where(DeliveryAttempt.outcome == "delivered").count() == 2


def test_without_the_thread_the_job_delivers_and_records_itself(settings, monkeypatch):
    monkeypatch.setenv("HERALD_EMAIL_PROVIDER", "inbox://")
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload())
    assert deliver_notification(str(n.id)) == "delivered"
    assert Notification.get_by_id(n.id).status == "delivered"
