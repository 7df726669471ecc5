"""Where a delivery job's outcome is written: in the job, or behind it in a worker process.

Behind it (``herald worker`` without ``--fork``): the outcome is committed by one writer
thread while RQ does its own bookkeeping for the finished job, and the next job waits for
that commit before it claims anything. A process therefore never has more than one message
sent and not yet recorded, the same bound as writing the outcome inside the job, and the
round trip of the outcome (a durable commit) no longer adds to every job's time. The
plugin events of the outcome run after its commit, on the writer thread.

The same thread also runs a job's claim ahead of the job (``ahead``), as soon as the worker
has dequeued it, so that the claim's round trip overlaps RQ's bookkeeping before the job.
The thread takes its work in order, so that claim runs after the outcome in flight.

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


class OutcomeWriter:
    """One writer thread, at most one outcome in flight, work taken in order."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="herald-outcome")
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
    database.connect(reuse_if_open=True)  # the writer thread's own connection
    return work()


def _close_connection() -> None:
    if not database.is_closed():
        database.close()


_writer: OutcomeWriter | None = None


def write_behind() -> None:
    """From now on, outcomes are written behind the jobs of this process (a worker)."""
    global _writer
    if _writer is None:
        _writer = OutcomeWriter()


def close() -> None:
    """Commit the outcome in flight and write in the job again (worker shutdown)."""
    global _writer
    writer, _writer = _writer, None
    if writer is not None:
        writer.close()


def settled() -> None:
    """Wait until every earlier outcome of this process is committed; a job calls this
    before it claims, so it never sends while an earlier send is unrecorded."""
    if _writer is not None:
        _writer.wait()


def record(write: Callable[[], None]) -> None:
    """Commit an outcome (and run its events): now, or behind the job."""
    if _writer is None:
        write()
    else:
        _writer.submit(write)


def ahead(key: str, work: Callable[[], Any]) -> None:
    """Start ``work`` for the job ``key`` on the writer thread, after the outcome in flight;
    the job takes its result with ``taken``. Does nothing unless outcomes are written behind."""
    if _writer is not None:
        _writer.ahead(key, work)


def taken(key: str) -> Future[Any] | None:
    """The work started ahead of the job ``key``, if any (its result or its exception)."""
    return _writer.take(key) if _writer is not None else None
