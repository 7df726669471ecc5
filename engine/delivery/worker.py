"""`herald worker`: RQ workers with the scheduler and the reconciler, one or several processes."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
from typing import Any

from rq import Queue, SimpleWorker, Worker
from rq.job import Job

from config.settings import Settings, load_settings
from engine import runtime
from engine.delivery import handoff
from engine.delivery.jobs import hand_over
from engine.delivery.reconciler import reconcile, run_periodically
from engine.store.queueing import JOB_FUNCTION, QUEUE_NAME


class _HandingQueue(Queue):
    """RQ's Queue, but a delivery job is handed to the delivery thread once dequeued."""

    @classmethod
    def dequeue_any(cls, *args: Any, **kwargs: Any) -> tuple[Job, Queue] | None:
        result = super().dequeue_any(*args, **kwargs)
        if result is not None:
            _hand_over(result[0])
        return result


def _hand_over(job: Job) -> None:
    try:
        notification_id = job.args[0] if job.func_name == JOB_FUNCTION else None
    except Exception:  # a job that does not load fails in RQ's own hands, as before
        return
    if isinstance(notification_id, str):
        hand_over(notification_id)


class HeraldWorker(SimpleWorker):
    """RQ's SimpleWorker, with each delivery job's notification handed to the delivery thread
    as soon as the job is dequeued: the delivery runs beside RQ's own work for the job and
    the next one (engine/handoff.py)."""

    queue_class = _HandingQueue


def _work(settings: Settings, burst: bool, fork: bool) -> int:
    runtime.configure(settings)
    from engine.delivery.providers import close_all
    from engine.plugins.manager import default_registry

    default_registry()  # load plugins before the first job, not during it
    stop = threading.Event()
    thread = threading.Thread(target=run_periodically, args=(stop,), daemon=True,
                              name="herald-reconciler")
    reconcile()
    thread.start()
    # No fork per job by default: the delivery reuses this process's DB and SMTP connections,
    # and runs on the delivery thread beside RQ's bookkeeping (a forked child would exit first).
    worker_class = Worker if fork else HeraldWorker
    if not fork:
        handoff.start()
    worker = worker_class([QUEUE_NAME], connection=runtime.redis())
    try:
        worker.work(burst=burst, with_scheduler=True, logging_level="INFO")
    finally:
        handoff.close()
        stop.set()
        close_all()
    return 0


def run_worker(settings: Settings, processes: int = 1, burst: bool = False,
               fork: bool = False) -> int:
    """Run ``processes`` workers; SIGTERM lets each finish the job in hand."""
    if processes <= 1:
        return _work(settings, burst, fork)
    args = [sys.executable, "-m", "engine.delivery.worker"] + (["--burst"] if burst else []) + (
        ["--fork"] if fork else [])
    children = [subprocess.Popen(args, env=dict(os.environ)) for _ in range(processes)]

    def forward(signum: int, _frame: object) -> None:
        for child in children:
            if child.poll() is None:
                child.send_signal(signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    codes = [child.wait() for child in children]
    return max(codes, default=0)


def main() -> int:
    logging.basicConfig(level=logging.INFO)
    from engine.plugins.manager import check_providers

    settings = load_settings()
    check_providers(settings)
    return _work(settings, burst="--burst" in sys.argv, fork="--fork" in sys.argv)


if __name__ == "__main__":
    raise SystemExit(main())
