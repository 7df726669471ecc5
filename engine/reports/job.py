"""The report job: make the months ahead where the tables are partitioned (PostgreSQL),
index new notifications for search, roll the days' counts forward, prune past the
retention. Runs on every worker (engine/delivery/
periodic.py), one worker at a time through a Redis lock."""

from __future__ import annotations

import logging
import threading

from engine import runtime
from engine.database import partitions
from engine.database.db import database
from engine.reports import lookup, retention, rollups

log = logging.getLogger("herald.reports")
LOCK_KEY = "herald:reports:lock"
INTERVAL_SECONDS = 60.0
LOCK_SECONDS = 900


def run_once() -> dict[str, int]:
    """One pass, in the order that keeps counts whole: a day is rolled up to its end before
    its detail can be pruned."""
    database.connect(reuse_if_open=True)
    done = {"partitions": len(partitions.ensure_ahead(database.obj)),
            "indexed": lookup.index_new(), "rolled": rollups.close_days(),
            "pruned": retention.prune()}
    if any(done.values()):
        log.info("report job: %s", done)
    return done


def run_periodically(stop: threading.Event, interval: float = INTERVAL_SECONDS) -> None:
    """Until ``stop`` is set: a pass each ``interval`` by whichever worker takes the lock.
    Each step of a pass stops after about 30 seconds, far within the lock's LOCK_SECONDS,
    so two passes never overlap; a worker that died holding it frees it when it expires."""
    while not stop.wait(interval):
        try:
            lock = runtime.redis().lock(LOCK_KEY, timeout=LOCK_SECONDS)
            if lock.acquire(blocking=False):
                try:
                    run_once()
                finally:
                    lock.release()
        except Exception:
            log.exception("report job failed")
