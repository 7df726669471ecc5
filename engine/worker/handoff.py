"""The worker's delivery thread: a delivery job hands its notification over and returns.

In ``herald worker`` (without ``--fork``) RQ runs a delivery job on its main thread, but
the delivery itself (the claim, the render, the send, the outcome's commit and its plugin
events) runs on one delivery thread, one notification at a time:

- **Handed over at dequeue.** The worker's queue class hands a delivery job's notification
  to the thread the moment RQ dequeues the job (``hand``), so the claim and the send
  overlap RQ's own round trips before the job.
- **The job does not wait for its own delivery**, only for the one before it (``taken``).
  RQ's bookkeeping after the job, its next dequeue and the round trips before the next job
  all run beside the delivery, and at most one delivery runs while one more waits.
- **One unrecorded send at most.** A delivery commits its outcome before the thread takes
  the next one, so a worker process never has more than one message sent and not yet
  recorded: the bound it had when each job wrote its own outcome.
- **Errors.** RQ has counted the job done when its delivery fails (the database or Redis
  gone; any other exception the job records as an outcome, engine/delivery/jobs.py): the error is
  logged with the notification id, and the row, still ``queued`` or ``sending``, waits for
  the reconciler, as after a crash.
- **Waiting** (``waiting``): whether a delivery was handed over and has not started; a
  long fan-out asks it to know when to yield the thread (engine/delivery/fair_share.py).
- **Shutdown** (SIGTERM, the end of a burst): the worker finishes the delivery in hand and
  the one waiting before it exits.

Anything else that calls the job (the fork-per-job worker, tests) delivers inside it. The job
meets the thread only through engine/delivery/handing.py, which this module installs it in:
the job knows nothing of the process.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from engine.delivery import handing
from engine.observability.outages import dependency_of
from engine.store.db import database
from engine.worker.database_wait import wait_for_database

log = logging.getLogger("herald.delivery")


class DeliveryThread:
    """One thread; deliveries taken in the order they were handed over."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="herald-delivery")
        self._handed: tuple[str, Future[None]] | None = None  # its job has not run yet
        self._previous: Future[None] | None = None  # its job has returned
        self._not_started = 0  # deliveries handed over that the thread has not begun
        self._count_lock = threading.Lock()

    def waiting(self) -> bool:
        return self._not_started > 0

    def _started(self, key: str, work: Callable[[], Any]) -> None:
        with self._count_lock:
            self._not_started -= 1
        _delivering(key, work)

    def hand(self, key: str, work: Callable[[], Any]) -> None:
        if self._handed is not None:  # dequeued, then never run: a crash in RQ's own hands
            log.warning("delivery %s was handed over but its job never ran", self._handed[0])
            self._previous = self._handed[1]  # the thread works in order: this one ends last
        with self._count_lock:
            self._not_started += 1
        self._handed = (key, self._pool.submit(self._started, key, work))

    def take(self, key: str) -> bool:
        """For the job ``key``: True when its delivery was handed over. Returns once every
        delivery before it has finished; on False, once the thread is idle."""
        handed, self._handed = self._handed, None
        previous, self._previous = self._previous, None
        _finished(previous)
        if handed is None:
            return False
        if handed[0] == key:
            self._previous = handed[1]
            return True
        log.warning("delivery %s was handed over but job %s ran instead", handed[0], key)
        _finished(handed[1])
        return False

    def close(self) -> None:
        """Finish every delivery handed over, then release the thread and its connection."""
        for pending in (self._previous, self._handed[1] if self._handed else None):
            _finished(pending)
        self._previous = self._handed = None
        self._pool.submit(_close_connection).result()
        self._pool.shutdown(wait=True)


def _delivering(key: str, work: Callable[[], Any]) -> None:
    while True:
        try:
            database.connect(reuse_if_open=True)  # the delivery thread's own connection
            work()
            return
        except Exception as err:
            if dependency_of(err) == "database" and wait_for_database(err):
                continue  # back: deliver it now rather than after the reconciler's grace
            log.exception("delivering notification %s failed (a row left queued or sending "
                          "waits for the reconciler)", key)
            return


def _finished(delivery: Future[None] | None) -> None:
    if delivery is not None:
        delivery.result()  # never raises: _delivering logs


def _close_connection() -> None:
    if not database.is_closed():
        database.close()


def start() -> None:
    """From now on, delivery jobs of this process hand their notification to the thread."""
    if handing.installed() is None:
        handing.use(DeliveryThread())


def close() -> None:
    """Finish the deliveries handed over; jobs deliver inside themselves again."""
    thread = handing.use(None)
    if isinstance(thread, DeliveryThread):
        thread.close()


# What a job asks (engine/delivery/handing.py), here too for the worker's own callers.
hand = handing.hand
waiting = handing.waiting
taken = handing.taken
