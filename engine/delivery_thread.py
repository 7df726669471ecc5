"""The worker's delivery thread: a job's outcome written behind it, its delivery started ahead.

Behind (``herald worker`` without ``--fork``): the outcome is committed by that one
thread while RQ does its own bookkeeping for the finished job, and the next job waits for
that commit before it claims anything. A process therefore never has more than one message
sent and not yet recorded, the same bound as writing the outcome inside the job, and the
round trip of the outcome (a durable commit) no longer adds to every job's time. The
plugin events of the outcome run after its commit, on that thread.

Ahead: the worker starts a delivery job on the same thread the moment RQ dequeues it
(``ahead``), and the job, once RQ runs it, waits for that result (``taken``). The job's
claim, render and send then overlap RQ's round trips before the job (a heartbeat, the
execution record, the started registry). The thread takes its work in order, so a
delivery still starts only after the outcome before it is committed.

In the job (the default: tests, the fork-per-job worker, any other caller): the outcome is
committed before the job returns, as before.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from engine.db import database

log = logging.getLogger("herald.outcomes")


class DeliveryThread:
    """One thread, at most one outcome in flight, work taken in the order it was given."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="herald-delivery")
        self._pending: Future[None] | None = None
        self._ahead: tuple[str, Future[Any]] | None = None

    def submit(self, write: Callable[[], None]) -> None:
        self.wait()
        self._pending = self._pool.submit(self._run, write)

    @staticmethod
    def _run(write: Callable[[], None]) -> None:
        try:
            _connected(write)
        except Exception:
            # The row stays `sending`: the reconciler takes it up again once it is stale, as
            # it would after a crash between the send and its record.
            log.exception("recording a delivery outcome failed")

    def ahead(self, key: str, work: Callable[[], Any]) -> None:
        self._ahead = (key, self._pool.submit(_connected, work))

    def take(self, key: str) -> Future[Any] | None:
        ahead, self._ahead = self._ahead, None
        if ahead is None:
            return None
        if ahead[0] != key:  # started for a job that never ran: its row waits for the reconciler
            log.warning("work started ahead of job %s was not taken", ahead[0])
            return None
        return ahead[1]

    def wait(self) -> None:
        """Return once the outcome in flight, if any, is committed (or has failed)."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    def close(self) -> None:
        self.wait()
        self._pool.submit(_close_connection).result()
        self._pool.shutdown(wait=True)


def _connected(work: Callable[[], Any]) -> Any:
    database.connect(reuse_if_open=True)  # the delivery thread's own connection
    return work()


def _close_connection() -> None:
    if not database.is_closed():
        database.close()


_thread: DeliveryThread | None = None


def write_behind() -> None:
    """From now on, outcomes are written behind the jobs of this process (a worker)."""
    global _thread
    if _thread is None:
        _thread = DeliveryThread()


def close() -> None:
    """Commit the outcome in flight and write in the job again (worker shutdown)."""
    global _thread
    thread, _thread = _thread, None
    if thread is not None:
        thread.close()


def settled() -> None:
    """Wait until every earlier outcome of this process is committed; a job calls this
    before it claims, so it never sends while an earlier send is unrecorded."""
    if _thread is not None:
        _thread.wait()


def record(write: Callable[[], None]) -> None:
    """Commit an outcome (and run its events): now, or behind the job."""
    if _thread is None:
        write()
    else:
        _thread.submit(write)


def ahead(key: str, work: Callable[[], Any]) -> None:
    """Start ``work`` for the job ``key`` on the thread, after the outcome in flight; the job
    takes its result with ``taken``. Does nothing unless outcomes are written behind."""
    if _thread is not None:
        _thread.ahead(key, work)


def taken(key: str) -> Future[Any] | None:
    """The work started ahead of the job ``key``, if any (its result or its exception)."""
    return _thread.take(key) if _thread is not None else None
