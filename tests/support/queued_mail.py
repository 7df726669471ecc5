"""The web application's own mail runs as RQ jobs (engine/people/outbox.py): tests run them
here, as the worker would, without the notification jobs that share the queue."""

from __future__ import annotations

from rq import Queue

from engine import runtime
from engine.queue.queueing import QUEUE_NAME

JOB_PREFIX = "engine.people.outbox."  # its jobs' functions (engine/people/outbox.py)


def run_queued_mail() -> int:
    """Run every queued mail job of the web application now; returns how many ran."""
    queue = Queue(QUEUE_NAME, connection=runtime.redis())
    ran = 0
    for job in queue.get_jobs():
        if job.func_name.startswith(JOB_PREFIX):
            queue.remove(job)
            job.perform()
            ran += 1
    return ran
