"""A dependency (the database, Redis) lost at run time: told apart from a bug, and logged
once per incident rather than once per request.

An incident is one line when it begins (the first failure, its error on one line, no
traceback) and, once ``QUIET_SECONDS`` pass without another failure, one line when it is
over, with how many requests it failed meanwhile.
"""

from __future__ import annotations

import logging
import socket
import sys
import threading
import time

import peewee
from redis import exceptions as redis_errors

log = logging.getLogger("herald.dependencies")
QUIET_SECONDS = 30.0
RETRY_AFTER_SECONDS = 5
# What "the other end is not answering" raises; a refused command (a bad script, a wrong
# type) is a bug and stays a 500 with its traceback.
# A Redis out of memory (noeviction) or without its primary cannot take the write either.
REDIS_DOWN = (redis_errors.ConnectionError, redis_errors.TimeoutError,
              redis_errors.BusyLoadingError, redis_errors.ReadOnlyError,
              redis_errors.OutOfMemoryError, redis_errors.MasterDownError,
              redis_errors.TryAgainError, socket.timeout)
DATABASE_DOWN = (peewee.OperationalError, peewee.InterfaceError)
SETTINGS = {"redis": "HERALD_REDIS_URL", "database": "HERALD_DATABASE_URL"}


def dependency_of(error: BaseException) -> str | None:
    """"redis" or "database" when ``error`` means that part is unreachable, else None."""
    if isinstance(error, REDIS_DOWN):
        return "redis"
    if isinstance(error, DATABASE_DOWN) and _unreachable(error):
        return "database"
    return None


def _unreachable(error: BaseException) -> bool:
    """An OperationalError is also a lock timeout or a bad statement: only a lost or
    refused connection is an outage."""
    text = str(error).lower()
    return isinstance(error, peewee.InterfaceError) or any(sign in text for sign in (
        "connect", "connection", "server closed", "terminating", "timeout expired",
        "could not translate host", "no route", "network", "shutting down", "ssl syscall",
        "unable to open database", "the database system is"))


def one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


class _Incidents:
    """Per dependency: since when it fails, when it failed last, how often meanwhile."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.open: dict[str, tuple[float, float, int]] = {}

    def failed(self, part: str, error: BaseException) -> None:
        now = time.monotonic()
        with self.lock:
            self._close_quiet(now)
            began, _last, count = self.open.get(part, (now, now, 0))
            self.open[part] = (began, now, count + 1)
            first = count == 0
        if first:
            log.error("%s unreachable (%s): answering 503 service.unavailable until it is back",
                      part, one_line(error), extra={"dependency": part, "setting": SETTINGS[part]})

    def tick(self) -> None:
        with self.lock:
            self._close_quiet(time.monotonic())

    def _close_quiet(self, now: float) -> None:
        for part, (began, last, count) in list(self.open.items()):
            if now - last >= QUIET_SECONDS:
                del self.open[part]
                log.warning("%s answered no failure for %.0f s: the incident is over (%d "
                            "requests failed over %.0f s)", part, QUIET_SECONDS, count,
                            last - began, extra={"dependency": part})


incidents = _Incidents()


class OutageFilter(logging.Filter):
    """On a handler: a record whose exception is a lost dependency (the worker's periodic
    loops, a delivery, RQ's report of a job) becomes one line without its traceback, and
    the same dependency's next ones within ``QUIET_SECONDS`` of the last are dropped: one
    line per incident, never a traceback per pass."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()
        self.last: dict[str, float] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if error is None and record.name.startswith("rq.") and record.levelno >= logging.ERROR:
            error = sys.exc_info()[1]  # RQ formats the traceback into its message
        part = dependency_of(error) if error is not None else None
        if part is None:
            return True
        now = time.monotonic()
        with self.lock:
            last, self.last[part] = self.last.get(part), now
        if last is not None and now - last < QUIET_SECONDS:
            return False
        head = record.getMessage().split("\n", 1)[0]
        record.msg, record.args = f"{head}: {part} unreachable ({one_line(error)})", ()
        record.exc_info, record.exc_text = None, None
        record.dependency, record.setting = part, SETTINGS[part]
        return True
