"""Leases in Redis on the deliveries a worker process has in flight, for the reconciler.

A row stays ``sending`` while its delivery runs. The reconciler takes up rows left
``sending`` past ``HERALD_RECONCILE_AFTER_SECONDS`` as a crashed worker's; a delivery still
running in a live worker must never be taken for one, or a second copy of it would be
queued (and, once the row is stale, claimed and sent). Each worker process therefore keeps
a lease per delivery in flight, ``herald:inflight:<notification id>``, written for
``LEASE_SECONDS`` and renewed every ``RENEW_SECONDS`` by one thread in one pipeline (no
round trip per delivery), dropped when the delivery ends. A worker killed outright leaves
leases that expire by themselves; a Redis that lost them has them written again at the
next renewal. A lease appears up to ``RENEW_SECONDS`` after its delivery starts, long before
its row could look stale (the claim has just written its ``updated_at``).
"""

from __future__ import annotations

import logging
import threading

from redis.exceptions import RedisError

from engine import runtime

log = logging.getLogger("herald.worker")
PREFIX = "herald:inflight:"
LEASE_SECONDS = 5.0
RENEW_SECONDS = 1.0


def key(notification_id: str) -> str:
    return PREFIX + notification_id


def held(notification_id: str) -> bool:
    """Whether a live worker has this notification's delivery in flight."""
    return bool(runtime.redis().exists(key(notification_id)))


class Leases:
    """The leases of one process: ``add`` and ``drop`` are in-memory; a thread writes them."""

    def __init__(self) -> None:
        self._current: set[str] = set()
        self._ended: set[str] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def add(self, notification_id: str) -> None:
        with self._lock:
            self._current.add(notification_id)
            self._ended.discard(notification_id)

    def drop(self, notification_id: str) -> None:
        with self._lock:
            if notification_id in self._current:
                self._current.discard(notification_id)
                self._ended.add(notification_id)

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, daemon=True,
                                            name="herald-inflight-leases")
            self._thread.start()

    def stop(self) -> None:
        """Stop renewing and drop every lease this process wrote."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=RENEW_SECONDS * 3)
        with self._lock:
            self._ended |= self._current
            self._current.clear()
        self.write()

    def _run(self) -> None:
        while not self._stop.wait(RENEW_SECONDS):
            self.write()

    def write(self) -> None:
        """Renew the current leases and delete the ended ones, in one round trip."""
        with self._lock:
            current, ended = list(self._current), list(self._ended)
            self._ended.clear()
        if not current and not ended:
            return
        try:
            pipe = runtime.redis().pipeline(transaction=False)
            for notification_id in current:
                pipe.set(key(notification_id), "1", px=int(LEASE_SECONDS * 1000))
            if ended:
                pipe.delete(*[key(n) for n in ended])
            pipe.execute()
        except RedisError as error:  # the leases expire by themselves; the next write renews
            log.debug("in-flight leases not written: %s", error)
            with self._lock:
                self._ended.update(n for n in ended if n not in self._current)
