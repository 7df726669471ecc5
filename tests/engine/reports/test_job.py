"""The report job runs on the worker beside the reconciler, one worker at a time."""

from __future__ import annotations

import threading
import time

from engine.database.models.reports import NotificationLookup, ReportCursor
from engine.reports import job
from engine.worker import worker


def test_the_worker_starts_the_report_job(monkeypatch, settings, run):
    run.sent()
    monkeypatch.setattr(job, "INTERVAL_SECONDS", 0.05)
    monkeypatch.setattr(job.run_periodically, "__defaults__", (0.05,))
    assert ("herald-reports", job.run_periodically) in worker.PERIODIC_TASKS
    monkeypatch.setattr(worker, "PERIODIC_TASKS", (("herald-reports", job.run_periodically),))
    stop = threading.Event()
    before = set(threading.enumerate())
    worker.start_periodic_tasks(stop)
    threads = [t for t in threading.enumerate() if t not in before]
    try:
        assert [t.name for t in threads] == ["herald-reports"]
        deadline = time.monotonic() + 20
        while not NotificationLookup.select().exists():
            assert time.monotonic() < deadline, "the job never ran"
            time.sleep(0.05)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=10)
    assert ReportCursor.select().count() == 1


def test_one_worker_at_a_time(settings, run, monkeypatch):
    from engine import runtime

    calls, tries = [], []
    client = runtime.redis()

    class Watched:  # the real client, counting the job's tries at the lock
        def lock(self, name, **kwargs):
            tries.append(name)
            return client.lock(name, **kwargs)

    monkeypatch.setattr(job.runtime, "redis", Watched)
    monkeypatch.setattr(job, "run_once", lambda: calls.append(1))
    client.set(job.LOCK_KEY, "other worker", px=60_000)
    stop = threading.Event()
    thread = threading.Thread(target=job.run_periodically, args=(stop, 0.01))
    thread.start()
    deadline = time.monotonic() + 20
    while len(tries) < 3:  # three periods, each finding the lock taken
        assert time.monotonic() < deadline
        time.sleep(0.01)
    stop.set()
    thread.join(timeout=10)
    assert calls == [] and set(tries) == {job.LOCK_KEY}
