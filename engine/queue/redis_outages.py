"""The worker's Redis client waits out a lost connection instead of raising it.

In `herald worker` every Redis command (RQ's heartbeat and dequeue, the scheduler, the
reconciler) goes through :class:`PatientRetry`: a connection error, a timeout or a server
turned read-only replica is retried with a back-off capped at ``MAX_PAUSE`` seconds until
Redis answers again, so a Redis restart is a pause, not a crash. A process logs one line
when an outage begins and one when it ends, whichever of its threads sees it first.
Refused credentials are a configuration error and raise at once. Once
:func:`stop_waiting` is called (shutdown) a lost connection raises again, so a worker
stopping during an outage still exits.

The API keeps redis-py's default retry: a send must not hang on a missing Redis (its row is
the record; the reconciler enqueues it).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from redis.backoff import EqualJitterBackoff
from redis.exceptions import (
    AuthenticationError,
    AuthorizationError,
    ConnectionError,
    ReadOnlyError,
    TimeoutError,
)
from redis.retry import Retry

log = logging.getLogger("herald.redis")
MAX_PAUSE = 1.0  # a Redis that is back is noticed within about this many seconds
# Longer than the worker's blocking dequeue (engine/worker/worker_class.py, 2 s): redis-py's
# default of 5 s would cut it off. A Redis that falls silent is noticed after this long.
SOCKET_TIMEOUT = 20.0
CONNECT_TIMEOUT = 5.0
T = TypeVar("T")


class _Outages:
    """This process's view of Redis: reachable or not, since when, and how many outages ended."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.since: float | None = None  # monotonic start of the outage under way
        self.ended = 0
        self.stopping = False
        self.quiet = False

    def begin(self, error: Exception) -> None:
        with self.lock:
            if self.since is not None:
                return
            self.since = time.monotonic()
        log.log(logging.DEBUG if self.quiet else logging.WARNING,
                "Redis unreachable (%s): waiting for it; the worker resumes when it answers",
                " ".join(str(error).split()) or type(error).__name__)

    def end(self) -> None:
        with self.lock:
            if self.since is None:
                return
            elapsed, self.since = time.monotonic() - self.since, None
            self.ended += 1
        log.log(logging.DEBUG if self.quiet else logging.INFO, "Redis is back after %.1f s",
                elapsed)


_state = _Outages()


def _forked() -> None:
    """A forked child (the scheduler, a work horse) starts with its own state and lock."""
    global _state
    stopping, quiet = _state.stopping, _state.quiet
    _state = _Outages()
    _state.stopping, _state.quiet = stopping, quiet


os.register_at_fork(after_in_child=_forked)


class PatientRetry(Retry):
    """Retries a lost connection until Redis answers, unless the process is stopping."""

    def __init__(self) -> None:
        # READONLY: the server was demoted to a replica (a failover); a new connection
        # reaches whichever server the address names now.
        super().__init__(EqualJitterBackoff(cap=MAX_PAUSE, base=0.1), retries=-1,
                         supported_errors=(ConnectionError, TimeoutError, socket.timeout,
                                           ReadOnlyError))

    def call_with_retry(self, do: Callable[[], T], fail: Callable[..., Any],
                        is_retryable: Callable[[Exception], bool] | None = None,
                        with_failure_count: bool = False) -> T:
        failures = 0
        while True:
            try:
                result = do()
            except self._supported_errors as error:
                failures += 1
                if with_failure_count:
                    fail(error, failures)
                else:
                    fail(error)
                if (_state.stopping or isinstance(error, (AuthenticationError, AuthorizationError))
                        or (is_retryable is not None and not is_retryable(error))):
                    raise
                # The first retry is immediate, on a new connection: a pooled connection that
                # Redis closed while idle is no outage, and says nothing in the log.
                if failures > 1:
                    _state.begin(error)
                    _pause(self._backoff.compute(failures - 1))
                    if _state.stopping:
                        raise
                continue
            if failures > 1:
                _state.end()
            return result


def client_options() -> dict[str, Any]:
    """What a patient Redis client is made with (engine/runtime.py)."""
    return {"retry": PatientRetry(), "socket_timeout": SOCKET_TIMEOUT,
            "socket_connect_timeout": CONNECT_TIMEOUT}


def _pause(seconds: float) -> None:
    """Sleep, but return early once the process is stopping."""
    deadline = time.monotonic() + seconds
    while not _state.stopping and (left := deadline - time.monotonic()) > 0:
        time.sleep(min(left, 0.1))


def stop_waiting() -> None:
    """From now on a lost connection raises: the process is shutting down."""
    _state.stopping = True


def waiting_stopped() -> bool:
    return _state.stopping


def outages_ended() -> int:
    """How many outages this process has seen end: a change means Redis was away."""
    return _state.ended


def quiet() -> None:
    """Outages go to the debug log: for a helper process whose worker already says so."""
    _state.quiet = True
