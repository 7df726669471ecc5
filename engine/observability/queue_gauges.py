"""Gauges read when /metrics is scraped, never stored: whether the database and Redis
answer, how many jobs wait in the queue, and how long the oldest due notification waited."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from peewee import fn

from engine.database.db import database
from engine.database.models import Notification, utcnow
from engine.database.vocabulary import NotificationStatus
from engine.observability import readiness
from engine.queue.queueing import QUEUE_NAMES, queue

log = logging.getLogger("herald.metrics")


class QueueCollector:
    """A prometheus-client collector: each scrape asks the database and Redis afresh."""

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        failed = readiness.problems()
        up = GaugeMetricFamily("herald_dependency_up", "1 when the dependency answered this "
                               "scrape within a second, else 0.", labels=["dependency"])
        for part in ("database", "redis"):
            up.add_metric([part], 0.0 if part in failed else 1.0)
        yield up
        if "redis" not in failed:
            yield from _redis_gauges(GaugeMetricFamily)
        if "database" not in failed:
            yield from _database_gauges(GaugeMetricFamily)

    def describe(self) -> list[Any]:
        return []  # computed per scrape: nothing to check at registration


def _redis_gauges(family: Any) -> Iterator[Any]:
    try:
        depths = {name: queue(name).count for name in QUEUE_NAMES}
    except Exception as err:  # Redis went away between the check and now: leave it out
        log.debug("queue depth unavailable: %s", err)
        return
    gauge = family("herald_queue_depth", "Delivery jobs waiting in each Redis queue (the "
                   "priority queue, then the bulk one).", labels=["queue"])
    for name, depth in depths.items():
        gauge.add_metric([name], float(depth))
    yield gauge


def _database_gauges(family: Any) -> Iterator[Any]:
    now = utcnow()
    due = ((Notification.status == NotificationStatus.QUEUED)
           & (Notification.next_attempt_at.is_null() | (Notification.next_attempt_at <= now)))
    try:
        database.connect(reuse_if_open=True)
        queued = Notification.select().where(
            Notification.status == NotificationStatus.QUEUED).count()
        oldest = (Notification.select(fn.MIN(fn.COALESCE(Notification.next_attempt_at,
                                                         Notification.created_at)))
                  .where(due).scalar())
    except Exception as err:
        log.debug("queued notifications unavailable: %s", err)
        return
    yield family("herald_notifications_queued", "Notifications waiting for an attempt "
                 "(retries scheduled for later included).", value=float(queued))
    age = 0.0
    if oldest is not None:
        if isinstance(oldest, str):  # SQLite hands the expression back as text
            import datetime as dt

            oldest = dt.datetime.fromisoformat(oldest)
        age = max(0.0, (now - oldest).total_seconds())
    yield family("herald_oldest_queued_age_seconds", "How long the oldest notification due "
                 "for an attempt has waited for it (0: none waits).", value=age)
