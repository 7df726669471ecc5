"""Does this process reach the database and Redis? Each answered within ``BOUND`` seconds.

Each check runs on a thread of its own, one at a time per part: a dependency that hangs
costs one waiting thread, never one per probe, and a probe that finds the last check still
waiting reports the part as not ready without starting another.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout

from engine import runtime
from engine.database.db import database, drop_connection
from engine.observability.outages import one_line

BOUND = 1.0


class _Check:
    """One dependency's check, never more than one in flight, each on a daemon thread (a
    check that hangs never holds up the process's exit)."""

    def __init__(self, name: str, run: Callable[[], None]) -> None:
        self.name = name
        self.run = run
        self.pending: Future | None = None
        self.lock = threading.Lock()

    def start(self) -> Future | str:
        """The check under way, or why none could start."""
        with self.lock:
            if self.pending is not None and not self.pending.done():
                return "did not answer (the last check is still waiting)"
            self.pending = future = Future()
        threading.Thread(target=self._check, args=(future,), daemon=True,
                         name=f"herald-ready-{self.name}").start()
        return future

    def _check(self, future: Future) -> None:
        try:
            self.run()
        except Exception as err:
            future.set_exception(err)
        else:
            future.set_result(None)


def _outcome(started: Future | str, deadline: float) -> str | None:
    if isinstance(started, str):
        return started
    try:
        started.result(timeout=max(0.0, deadline - time.monotonic()))
    except FutureTimeout:
        return "did not answer in time"
    except Exception as err:  # the dependency's own error, on one line
        return one_line(err)
    return None


def _ping_database() -> None:
    """On the check's own thread: its connection is closed (back to the pool) after it."""
    try:
        database.connect(reuse_if_open=True)
        database.execute_sql("SELECT 1").fetchone()
    finally:
        drop_connection()


def _ping_redis() -> None:
    runtime.redis().ping()


def _fresh_checks() -> dict[str, _Check]:
    return {"database": _Check("database", _ping_database), "redis": _Check("redis", _ping_redis)}


_checks = _fresh_checks()


def _forked() -> None:
    """A forked child (gunicorn's workers after `herald serve` checked at start-up) has none
    of its parent's threads: a check under way there would never end here."""
    global _checks
    _checks = _fresh_checks()


os.register_at_fork(after_in_child=_forked)


def refused(part: str) -> bool:
    """Whether the part's last check ended with a refusal (Redis: a wrong password, a
    missing permission, a database it does not have): a configuration error, not an
    outage that waiting would end."""
    from redis.exceptions import AuthenticationError, AuthorizationError, ResponseError

    pending = _checks[part].pending
    if pending is None or not pending.done() or pending.exception() is None:
        return False
    return isinstance(pending.exception(),
                      (AuthenticationError, AuthorizationError, ResponseError))


def problems(bound: float = BOUND) -> dict[str, str]:
    """Each part that is not ready, with why; empty when all are. Parts are checked at once,
    so the whole answer takes at most ``bound`` seconds."""
    deadline = time.monotonic() + bound
    started = {name: check.start() for name, check in _checks.items()}
    found = {name: _outcome(future, deadline) for name, future in started.items()}
    return {name: problem for name, problem in found.items() if problem is not None}
