"""Sends answered 503 whose row the database may have committed all the same.

A commit whose answer is lost (PostgreSQL shut down or the connection cut between the
commit and its reply) leaves the send unable to tell whether its row exists. It answers 503,
"nothing was accepted", so such a row must never be delivered: the send marks its id here,
and the reconciler, which is the only one to enqueue a row that has no job, deletes a
marked row instead (engine/worker/reconciler.py). A retry with the same Idempotency-Key
that finds the row takes it up: its 202 names it, so the mark is lifted and the row is
delivered (engine/sending/idempotency.py).

The marks live in Redis for ``KEEP_SECONDS``, longer than any database outage the row could
wait out. What this cannot cover is said in docs/operations.md: a Redis that is also
unreachable at that instant, or that loses its data before the database is back (a
line at ERROR names the row then).
"""

from __future__ import annotations

import logging

from redis.client import Pipeline

from engine import runtime

log = logging.getLogger("herald.api")
KEEP_SECONDS = 7 * 24 * 3600


def _key(notification_id: str) -> str:
    return f"herald:unheard:{notification_id}"


def mark(notification_id: str, correlation_id: str) -> None:
    """The send of ``notification_id`` is answered 503 though its row may be committed."""
    try:
        runtime.redis().set(_key(notification_id), correlation_id, ex=KEEP_SECONDS)
    except Exception as err:  # the send's 503 stands; say which row to look for
        log.error("notification %s (correlationId %s) was answered 503, but the database may "
                  "have committed its row, and Redis did not take the mark that keeps it from "
                  "being sent (%s): delete the row if it exists and is still queued",
                  notification_id, correlation_id, type(err).__name__,
                  extra={"notificationId": notification_id, "correlationId": correlation_id})


def marked(notification_id: str) -> bool:
    """True when the row's send was answered 503 (the reconciler then drops the row)."""
    return bool(runtime.redis().exists(_key(notification_id)))


def lift(notification_id: str, pipe: Pipeline) -> None:
    """The row is accepted after all (a retry's 202 names it): deliver it. Added to
    ``pipe``, which carries the retry's record (the caller executes it)."""
    pipe.delete(_key(notification_id))
