"""A delivery's outcomes: attempt rows as messages settle, a fan-out's checkpoints, and the
status rule that turns them into the notification's status."""

from __future__ import annotations

import logging
import sqlite3
import time
from dataclasses import dataclass
from typing import Any

from peewee import PeeweeException
from redis.exceptions import RedisError

from engine import runtime
from engine.catalog import suppressions
from engine.database import notification_store
from engine.database.models import Notification
from engine.database.vocabulary import NotificationStatus, Outcome
from engine.delivery.attempts import attempt_row, elapsed_ms
from engine.delivery.failover import annotate
from engine.delivery.message_lanes import UNREAD_WHILE_RECORDING
from engine.delivery.retry import MAX_EMAIL_ATTEMPTS, retry_delay, webhook_channel
from engine.plugins.contracts import (
    DeliveryError,
    PermanentError,
    SuppressedError,
    TransientError,
)

log = logging.getLogger("herald.delivery")

# Errors of what a delivery stands on (the database, Redis, the network), not of its message:
# they never fail a notification for good. Raised while one message is built or sent, that
# message is retried as after a transient refusal; raised anywhere else, the delivery stops
# as in a crash and the row waits for the reconciler. Any other exception is a permanent
# failure of the message (or, outside any one message, of the notification), recorded at once
# (docs/delivery.md, "Errors").
INFRASTRUCTURE: tuple[type[Exception], ...] = (PeeweeException, sqlite3.Error, RedisError,
                                               OSError)
# Email and SMS: 30 s doubling to the 15-minute cap (±10% jitter, Retry-After honoured).
EMAIL_BACKOFF = (30.0, 60.0, 120.0, 240.0, 480.0, 900.0, 900.0)

# What a worker killed mid-fan-out may have sent and not recorded, beside three a lane
# (engine/delivery/message_lanes.py): the outcomes read since the last checkpoint and those
# the lanes sent on while it was being committed (docs/delivery.md, "Checkpoints").
UNRECORDED_MOST = 50
# A fan-out commits its outcomes so far every this many outcomes, or this many seconds,
# whichever comes first: the rest of UNRECORDED_MOST is what the lanes send meanwhile.
CHECKPOINT_ROWS = UNRECORDED_MOST - UNREAD_WHILE_RECORDING
CHECKPOINT_SECONDS = 1.0


def message_row(notification: Notification, recipient: str | None, outcome: Outcome,
                started: float, error: Exception | None) -> dict[str, Any]:
    """The attempt row of one message's outcome (``started``: perf_counter, 0 if never
    sent); a provider's error carries its status code."""
    return attempt_row(notification, outcome, recipient=recipient,
                       duration_ms=elapsed_ms(started),
                       status_code=getattr(error, "status_code", None),
                       error=str(error) if error else None,
                       response_excerpt=getattr(error, "response_excerpt", None))


def described(err: BaseException) -> str:
    return f"{type(err).__name__}: {err}"


def _as_outcome(err: Exception) -> DeliveryError:
    """A message's exception that is no DeliveryError, as its outcome (see INFRASTRUCTURE)."""
    if isinstance(err, INFRASTRUCTURE):
        return TransientError(described(err))
    return PermanentError(described(err))


class Outcomes:
    """A delivery's outcomes as they settle. A fan-out's are committed as it goes, every
    CHECKPOINT_ROWS outcomes or CHECKPOINT_SECONDS, so that a worker killed in the middle
    re-sends only the messages settled since (the next attempt skips settled recipients)."""

    def __init__(self, notification: Notification, expected: int) -> None:
        self.notification = notification
        self.left = expected  # outcomes still to come
        self.attempts: list[dict[str, Any]] = []
        self.saved = 0  # attempts[:saved] are committed
        self.bounced: list[str] = []
        self.rejected: dict[str, str] = {}  # addresses a delivered message did not reach
        self.bounces_saved = 0
        self.delivered = self.failed = 0
        self.transient: TransientError | None = None
        self.unexpected: list[tuple[str | None, Exception]] = []
        self.since = time.monotonic()
        self.provider: str | None = None  # its scheme, on each attempt row (reports)

    def add(self, recipient: str | None, started: float, result: Any,
            err: Exception | None) -> None:
        notification = self.notification
        self.left -= 1
        if err is not None and not isinstance(err, DeliveryError):
            self.unexpected.append((recipient, err))
            err = _as_outcome(err)
        if isinstance(err, TransientError):
            self.transient = err
            self.attempts.append(message_row(notification, recipient, Outcome.TRANSIENT,
                                             started, err))
        elif isinstance(err, SuppressedError):
            self.bounced.extend(err.recipients)
            self.attempts.append(message_row(notification, recipient, Outcome.SUPPRESSED,
                                             started, err))
        elif err is not None:
            self.failed += 1
            self.attempts.append(message_row(notification, recipient, Outcome.PERMANENT,
                                             started, err))
        else:
            self.bounced.extend(result.bounced)
            self.delivered += 1
            row = message_row(notification, recipient, Outcome.DELIVERED, started, None)
            row["provider_message_id"] = result.provider_message_id
            if getattr(result, "status_code", None) is not None:  # an HTTP receiver's answer
                row["status_code"] = result.status_code
                row["response_excerpt"] = result.response_excerpt
            if result.rejected:
                self.rejected.update(result.rejected)
                row["error"] = "; ".join(f"{a}: {r}" for a, r in result.rejected.items())
            self.attempts.append(row)
        self.attempts[-1]["provider"] = self.provider
        annotate(self.attempts[-1], result if err is None else err)
        unsaved = len(self.attempts) - self.saved
        if self.left > 0 and (unsaved >= CHECKPOINT_ROWS or
                              time.monotonic() - self.since >= CHECKPOINT_SECONDS):
            self.checkpoint()

    def checkpoint(self) -> None:
        """Commit the attempt rows and bounces so far (an error here ends the attempt as a
        crash: nothing more can be recorded, so nothing more is sent)."""
        self.save_bounces()
        # The claim's lease renewed too: a long fan-out is never taken for a stuck one.
        notification_store.record_attempts(self.attempts[self.saved:], self.notification)
        self.saved = len(self.attempts)
        self.since = time.monotonic()

    def save_bounces(self) -> None:
        if len(self.bounced) > self.bounces_saved:
            suppressions.add(self.notification.workspace_id, self.bounced[self.bounces_saved:],
                             "bounce")
            self.bounces_saved = len(self.bounced)

    def log_unexpected(self) -> None:
        """Once, not once a message: a bad header fails every message of a fan-out."""
        if self.unexpected:
            recipient, first = self.unexpected[0]
            log.error("notification %s: %d of its messages raised instead of ending in an "
                      "outcome (the first, to %s: %s)", self.notification.id,
                      len(self.unexpected), recipient or "its recipients",
                      type(first).__name__, exc_info=first)


def _policy(notification: Notification) -> tuple[int, tuple[float, ...] | None]:
    """The attempts a notification gets and the waits between them: the webhook policy
    (spec 6.5: HERALD_WEBHOOK_MAX_ATTEMPTS, HERALD_WEBHOOK_BACKOFF) for the channel whose
    delivery is the engine's signed POST, email's and SMS's for every other (a test's
    shorter HERALD_EMAIL_BACKOFF outside production, else the fixed schedule)."""
    settings = runtime.settings()
    if notification.channel == webhook_channel():
        return settings.webhook_max_attempts, tuple(settings.webhook_backoff or ()) or None
    return MAX_EMAIL_ATTEMPTS, tuple(settings.email_backoff) or EMAIL_BACKOFF


@dataclass(frozen=True)
class Verdict:
    """What an attempt's outcomes make of the notification: its status, the error it keeps,
    and the wait before the next attempt (a retry only)."""

    status: NotificationStatus
    error: str | None
    wait: float | None = None


def status_rule(notification: Notification, outcomes: Outcomes, suppressed: list[str],
                reached_before: bool, failed_before: str | None = None) -> Verdict:
    """A transient outcome retries while attempts remain; a recipient reached (now or by an
    earlier attempt of a fan-out) makes it delivered; else it failed (now or, with the error
    ``failed_before``, in an earlier slice or attempt), or was suppressed."""
    attempts, transient = outcomes.attempts, outcomes.transient
    cap, backoff = _policy(notification)
    if transient is not None and notification.attempts < cap:
        return Verdict(NotificationStatus.QUEUED, str(transient),
                       retry_delay(notification.attempts, backoff=backoff,
                                   retry_after=transient.retry_after))
    if outcomes.delivered > 0 or reached_before:
        return Verdict(NotificationStatus.DELIVERED, None)
    if outcomes.failed or transient is not None:
        return Verdict(NotificationStatus.FAILED, attempts[-1]["error"] if attempts else None)
    if failed_before is not None:
        return Verdict(NotificationStatus.FAILED, failed_before)
    if suppressed:
        return Verdict(NotificationStatus.SUPPRESSED, None)
    return Verdict(NotificationStatus.FAILED, "no recipient left to send to")
