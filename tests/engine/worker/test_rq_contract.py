"""The RQ behaviour Herald's worker relies on, pinned against the installed RQ.

The hand-off (engine/worker/handoff.py) extends RQ only where RQ is meant to be extended:
a Worker subclass (SimpleWorker, no fork) whose ``queue_class`` is a Queue subclass. It
relies on three things RQ does: the worker dequeues through ``queue_class.dequeue_any``, on
its own thread, before it runs the job; the job runs in the worker's process with the
arguments it was enqueued with; and a job enqueued by engine/queue/queueing.py reads back
with ``func_name == JOB_FUNCTION``. The upgrade note (docs/operations.md) relies on the
reconciler replacing a job whose function has another path.
"""

from __future__ import annotations

import datetime as dt
import threading
from typing import Any

from rq import Queue
from rq.job import Job, JobStatus

from engine import runtime
from engine.database.models import Notification, utcnow
from engine.delivery.queue import JOB_FUNCTION, enqueue_notification
from engine.queue.queueing import QUEUE_NAME, queue
from engine.worker.reconciler import reconcile
from tests import factories
from tests.support.rq_workers import PromptSimpleWorker

seen_events: list[tuple[str, str, str]] = []


def recorded_job(value: str) -> str:
    seen_events.append(("ran", value, threading.current_thread().name))
    return value


class _RecordingQueue(Queue):
    @classmethod
    def dequeue_any(cls, *args: Any, **kwargs: Any) -> tuple[Job, Queue] | None:
        result = super().dequeue_any(*args, **kwargs)
        if result is not None:
            job = result[0]
            seen_events.append(("dequeued", job.args[0], threading.current_thread().name))
        return result


class _RecordingWorker(PromptSimpleWorker):
    queue_class = _RecordingQueue


def test_the_worker_dequeues_through_its_queue_class_before_it_runs_the_job(settings):
    seen_events.clear()
    for value in ("a", "b"):
        queue().enqueue(f"{__name__}.recorded_job", value)
    _RecordingWorker([QUEUE_NAME], connection=runtime.redis()).work(burst=True)
    main = threading.main_thread().name
    expected = [("dequeued", "a", main), ("ran", "a", main),
                ("dequeued", "b", main), ("ran", "b", main)]
    assert seen_events == expected


def test_a_job_herald_enqueues_reads_back_as_its_job_function(settings):
    enqueue_notification("0b0c5a38-7c55-4f07-9a53-2b1f4c8f6a11")
    job = Job.fetch("0b0c5a38-7c55-4f07-9a53-2b1f4c8f6a11", connection=runtime.redis())
    assert job.func_name == JOB_FUNCTION
    assert job.args == ("0b0c5a38-7c55-4f07-9a53-2b1f4c8f6a11",)
    assert job.get_status() == JobStatus.QUEUED


def test_a_queued_job_of_an_older_function_path_is_replaced_by_the_reconciler(settings):
    ws = factories.workspace()
    nid = str(factories.notification(ws, factories.email_payload()).id)
    Notification.update(updated_at=utcnow() - dt.timedelta(minutes=5)).where(
        Notification.id == nid).execute()  # queued for longer than the grace period
    # As a release before the move into engine/delivery/ enqueued it.
    queue().enqueue("engine.jobs.deliver_notification", nid, job_id=nid)
    assert reconcile()["lost"] == 1
    assert Job.fetch(nid, connection=runtime.redis()).func_name == JOB_FUNCTION
    PromptSimpleWorker([QUEUE_NAME], connection=runtime.redis()).work(burst=True)
    assert Notification.get_by_id(nid).status == "delivered"
    assert reconcile()["lost"] == 0


def test_the_worker_and_scheduler_methods_herald_extends_are_rq_s(settings):
    """engine/worker/worker_class.py and scheduler.py override these by name: a rename in
    RQ would leave Herald's override dead (a scheduler forked again, a signal handler that
    writes to Redis, a scheduler checked every 10 minutes) without an error."""
    from rq.scheduler import RQScheduler
    from rq.worker.base import BaseWorker

    for name in ("_start_scheduler", "stop_scheduler", "_shutdown", "request_stop",
                 "_install_signal_handlers", "run_maintenance_tasks", "execute_job",
                 "handle_job_success", "heartbeat", "teardown"):
        assert callable(getattr(BaseWorker, name)), name
    for name in ("should_run_maintenance_tasks", "dequeue_timeout", "connection_timeout"):
        assert isinstance(getattr(BaseWorker, name), property), name
    for name in ("start", "work", "heartbeat", "acquire_locks", "request_stop", "save"):
        assert callable(getattr(RQScheduler, name)), name
    scheduler = RQScheduler([QUEUE_NAME], connection=runtime.redis())
    assert {"_acquired_locks", "_stop_requested", "_process"} <= set(vars(scheduler))
