"""The lists' periodic pass, run by the worker: schedules that came due, list jobs whose
worker died or that Redis lost, unsent lists past their time (engine/lists/sweeping.py).

The worker sits below engine.lists in the layers, so it names the pass rather than import
it: every few seconds (5; a test may shorten it with HERALD_LIST_SWEEP_SECONDS) one worker
at a time (a Redis lock) enqueues it on the priority queue, where a worker runs it as any
job, within seconds whatever the bulk queue holds."""

from __future__ import annotations

import logging
import threading

from engine import runtime
from engine.queue.queueing import QUEUE_NAME, queue

log = logging.getLogger("herald.lists")
SWEEP = "engine.lists.sweeping.sweep"
LOCK_KEY = "herald:lists:sweep"


def every() -> float:
    """Seconds between two passes (Settings.list_sweep_seconds)."""
    return runtime.settings().list_sweep_seconds


def enqueue_once() -> bool:
    """Enqueue the pass unless another worker did within the interval: True when enqueued."""
    if not runtime.redis().set(LOCK_KEY, "1", nx=True, px=int(every() * 900)):
        return False
    queue(QUEUE_NAME).enqueue(SWEEP, job_id="herald-list-sweep", result_ttl=0,
                              failure_ttl=3600, job_timeout=300)
    return True


def run_periodically(stop: threading.Event) -> None:
    while not stop.wait(every()):
        try:
            enqueue_once()
        except Exception:
            log.warning("the lists' pass could not be enqueued", exc_info=True)
