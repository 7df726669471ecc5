"""The delivery thread: outcomes written behind the jobs (never more than one send unrecorded),
deliveries started ahead of them."""

from __future__ import annotations

import logging
import threading

import pytest

from engine import delivery_thread
from engine.jobs import deliver_notification
from engine.models import DeliveryAttempt, Notification
from tests import factories


@pytest.fixture
def behind(settings):
    delivery_thread.write_behind()
    yield
    delivery_thread.close()


def test_a_job_waits_for_the_outcome_in_flight_before_it_goes_on(behind):
    release = threading.Event()
    seen: list[tuple[str, bool]] = []
    written: list[str] = []

    def slow_write() -> None:
        release.wait()
        written.append("outcome")

    delivery_thread.record(slow_write)  # returns at once: the write is behind the job

    def next_job() -> None:
        delivery_thread.settled()
        seen.append(("settled", written == ["outcome"]))

    waiter = threading.Thread(target=next_job)
    waiter.start()
    waiter.join(timeout=0.5)  # a wrong settled() returns at once, with nothing written
    release.set()
    waiter.join()
    assert seen == [("settled", True)]


def test_a_failed_write_is_logged_and_does_not_stop_the_next_job(behind, caplog):
    def broken() -> None:
        raise RuntimeError("database gone")

    with caplog.at_level(logging.ERROR, logger="herald.outcomes"):
        delivery_thread.record(broken)
        delivery_thread.settled()
    assert "recording a delivery outcome failed" in caplog.text
    done: list[str] = []
    delivery_thread.record(lambda: done.append("next"))
    delivery_thread.settled()
    assert done == ["next"]


def test_jobs_written_behind_record_every_outcome(settings, behind, monkeypatch):
    monkeypatch.setenv("HERALD_EMAIL_PROVIDER", "inbox://")
    ws = factories.workspace()
    first, second = (factories.notification(ws, factories.email_payload(to=[to]))
                     for to in ("ada@example.net", "bob@example.net"))
    assert deliver_notification(str(first.id)) == "delivered"
    assert deliver_notification(str(second.id)) == "delivered"
    # The second job could only claim once the first outcome was committed.
    assert Notification.get_by_id(first.id).status == "delivered"
    delivery_thread.close()  # a worker's shutdown: the outcome in flight is committed
    assert Notification.get_by_id(second.id).status == "delivered"
    assert DeliveryAttempt.select().where(DeliveryAttempt.outcome == "delivered").count() == 2


def test_without_write_behind_the_outcome_is_committed_in_the_job(settings, monkeypatch):
    monkeypatch.setenv("HERALD_EMAIL_PROVIDER", "inbox://")
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload())
    assert deliver_notification(str(n.id)) == "delivered"
    assert Notification.get_by_id(n.id).status == "delivered"


def test_work_started_ahead_runs_after_the_outcome_in_flight(behind):
    release = threading.Event()
    written: list[str] = []

    def slow_write() -> None:
        release.wait()
        written.append("outcome")

    delivery_thread.record(slow_write)
    delivery_thread.ahead("job-1", lambda: list(written))  # a claim, as the worker starts it
    release.set()
    started = delivery_thread.taken("job-1")
    assert started is not None and started.result() == ["outcome"]
    assert delivery_thread.taken("job-1") is None  # taken once


def test_work_started_ahead_passes_its_exception_to_the_job(behind):
    def broken() -> None:
        raise RuntimeError("database gone")

    delivery_thread.ahead("job-1", broken)
    started = delivery_thread.taken("job-1")
    assert started is not None
    with pytest.raises(RuntimeError, match="database gone"):
        started.result()


def test_work_started_ahead_of_another_job_is_not_taken(behind, caplog):
    delivery_thread.ahead("job-1", lambda: "claimed")
    with caplog.at_level(logging.WARNING, logger="herald.outcomes"):
        assert delivery_thread.taken("job-2") is None
    assert "job-1" in caplog.text


def test_without_write_behind_nothing_is_started_ahead(settings):
    ran: list[str] = []
    delivery_thread.ahead("job-1", lambda: ran.append("claim"))
    assert delivery_thread.taken("job-1") is None and ran == []
