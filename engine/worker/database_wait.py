"""The delivery slots wait out a lost database, as the worker's Redis client waits out a
lost Redis (engine/queue/redis_outages.py): one line when it begins, one when it ends, for
the process however many slots wait.

A delivery that failed because the database went away leaves its row ``queued`` or
``sending``; once the database answers, the delivery is tried again (a row it had claimed
is taken up by the reconciler after its grace).
"""

from __future__ import annotations

import logging
import threading
import time

from engine.database.db import database, drop_connection
from engine.observability.outages import DATABASE_DOWN, one_line
from engine.queue import redis_outages

log = logging.getLogger("herald.delivery")
FIRST_PAUSE = 0.2
MAX_PAUSE = 5.0
_lock = threading.Lock()
_since: float | None = None  # when this process's slots began to wait, if they do


def wait_for_database(error: BaseException) -> bool:
    """Block until the database answers: True, or False once the worker is stopping."""
    global _since
    with _lock:
        first, _since = _since is None, _since or time.monotonic()
    if first:
        log.warning("database unreachable (%s): deliveries wait for it; the worker resumes "
                    "when it answers", one_line(error),
                    extra={"dependency": "database", "setting": "HERALD_DATABASE_URL"})
    pause = FIRST_PAUSE
    while not redis_outages.waiting_stopped():
        drop_connection()
        try:
            database.connect(reuse_if_open=True)
            database.execute_sql("SELECT 1").fetchone()
        except DATABASE_DOWN:
            _pause(pause)
            pause = min(MAX_PAUSE, pause * 2)
            continue
        with _lock:
            started, _since = _since, None
        if started is not None:  # the first slot to see it back says so
            log.info("database is back after %.1f s", time.monotonic() - started,
                     extra={"dependency": "database"})
        return True
    return False


def _pause(seconds: float) -> None:
    """Sleep, but return early once the worker is stopping."""
    deadline = time.monotonic() + seconds
    while not redis_outages.waiting_stopped() and (left := deadline - time.monotonic()) > 0:
        time.sleep(min(left, 0.1))
