"""The worker's job: deliver one notification, record every attempt, decide what comes next."""

from __future__ import annotations

import contextlib
import functools
import logging
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from peewee import PeeweeException
from redis.exceptions import RedisError

from channels.email import text_from_html
from engine import runtime
from engine.catalog import suppressions
from engine.delivery import handoff, outcome_events
from engine.delivery.message_lanes import Planned, send_all
from engine.delivery.providers import current_notification, provider_for
from engine.delivery.retry import MAX_EMAIL_ATTEMPTS, retry_delay
from engine.delivery.tracking import apply_tracking, unsubscribe_url
from engine.formats.addresses import suppression_key
from engine.plugins.contracts import (
    DeliveryError,
    PermanentError,
    SuppressedError,
    TransientError,
)
from engine.plugins.manager import default_registry
from engine.store import notification_store
from engine.store.db import database
from engine.store.models import DeliveryAttempt, Notification, utcnow
from engine.webhooks.delivery import deliver_webhook_notification

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


# A fan-out commits its outcomes so far every this many outcomes, or this many seconds,
# whichever comes first: what a worker killed mid-fan-out sends twice (docs/delivery.md).
CHECKPOINT_ROWS = 50
CHECKPOINT_SECONDS = 1.0


@dataclass
class _Plan:
    """The messages still to send and what was decided without sending."""

    messages: list[Planned] = field(default_factory=list)
    suppressed: list[str] = field(default_factory=list)
    reached_before: bool = False  # an earlier attempt delivered to some (a fan-out)


def _as_is(payload: dict[str, Any]) -> Callable[[], dict[str, Any]]:
    return lambda: payload


def _tracked_html(payload: dict[str, Any], notification_id: str,
                  recipient: str | None = None) -> str | None:
    """The payload's HTML with the open pixel and click links its options ask for."""
    html = payload.get("html")
    if html is None:
        return None
    return apply_tracking(html, notification_id=notification_id,
                          track_opens=bool(payload.get("trackOpens")),
                          track_clicks=bool(payload.get("trackClicks")), recipient=recipient)


def _personalised(payload: dict[str, Any], notification_id: str, address: str,
                  recipient: str) -> dict[str, Any]:
    """One recipient's message of a marketing send: its own tracking and unsubscribe links."""
    html = _tracked_html(payload, notification_id, recipient)
    link = unsubscribe_url(notification_id, recipient)
    headers = {**(payload.get("headers") or {}),
               "List-Unsubscribe": f"<{link}>",
               "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}
    return {**payload, "to": [address], "cc": [], "bcc": [], "html": html, "headers": headers}


def claim(notification_id: str) -> Notification | None:
    """Take the notification for this job, or None when another job has it or it is done."""
    settings = runtime.settings()
    return notification_store.claim(notification_id, settings.reconcile_after_seconds,
                                    settings.webhook_max_attempts, MAX_EMAIL_ATTEMPTS)


def _suppressed(notification: Notification, keys: list[str]) -> set[str]:
    """The suppressed keys among ``keys``: read by the claim when the payload lists exactly
    these keys (a row queued before the keys were spelt as now lists others: asked again)."""
    known = getattr(notification, "suppressed_keys", None)
    wanted = set(keys)
    if known is not None and wanted.issubset(notification.payload["suppressionKeys"]):
        return known & wanted
    return notification_store.suppressed(notification.workspace_id, keys)


def _settled_recipients(notification: Notification) -> dict[str, str]:
    """The recipients of a fan-out that an earlier attempt settled, with how: delivered,
    permanent or suppressed. Only a transient outcome is tried again: a permanent one would
    fail the same way (or, its outcome unknown, might be sent twice)."""
    rows = DeliveryAttempt.select(DeliveryAttempt.recipient, DeliveryAttempt.outcome).where(
        DeliveryAttempt.notification == notification, DeliveryAttempt.outcome != "transient",
        DeliveryAttempt.recipient.is_null(False))
    return {row.recipient: row.outcome for row in rows}


def plan_email(notification: Notification) -> _Plan:
    """Drop suppressed recipients; one message (Transactional) or one per recipient (Marketing)."""
    payload = notification.payload
    lists = {k: list(payload.get(k) or []) for k in ("to", "cc", "bcc")}
    everyone = [a for values in lists.values() for a in values]
    keys = {a: suppression_key(a) for a in everyone}
    blocked = _suppressed(notification, list(keys.values()))
    plan = _Plan(suppressed=[a for a in everyone if keys[a] in blocked])
    kept = {k: [a for a in v if keys[a] not in blocked] for k, v in lists.items()}
    nid = str(notification.id)
    if payload.get("text") is None and payload.get("html") is not None:
        # Once per notification, from the HTML before tracking (the text has no pixel).
        payload = {**payload, "text": text_from_html(payload["html"])}
    if payload.get("emailType") == "Marketing":
        # Only an earlier attempt (the claim counts this one) can have settled some.
        done = _settled_recipients(notification) if notification.attempts > 1 else {}
        plan.reached_before = "delivered" in done.values()
        for address in [a for values in kept.values() for a in values]:
            recipient = suppression_key(address)
            if recipient not in done:
                plan.messages.append((recipient, functools.partial(
                    _personalised, payload, nid, address, recipient)))
        return plan
    if any(kept.values()):
        plan.messages.append((None, _as_is({**payload, **kept,
                                            "html": _tracked_html(payload, nid)})))
    return plan


def plan_sms(notification: Notification) -> _Plan:
    payload = notification.payload
    numbers = list(payload.get("to") or [])
    keys = {n: suppression_key(n) for n in numbers}
    blocked = _suppressed(notification, list(keys.values()))
    kept = [n for n in numbers if keys[n] not in blocked]
    plan = _Plan(suppressed=[n for n in numbers if keys[n] in blocked])
    if kept:
        plan.messages.append((None, _as_is({**payload, "to": kept})))
    return plan


def deliver_notification(notification_id: str) -> str:
    """RQ entry point (job id = notification id); safe to run twice for one id. Returns the
    outcome, or "handed over" when the worker's delivery thread delivers it."""
    if handoff.taken(notification_id):
        return "handed over"
    return _deliver(notification_id)


def hand_over(notification_id: str) -> None:
    """Hand this job's delivery to the worker's delivery thread the moment RQ dequeues it
    (see engine/handoff.py)."""
    handoff.hand(notification_id, lambda: _deliver(notification_id))


def _deliver(notification_id: str) -> str:
    runtime.ensure_own_connections()
    database.connect(reuse_if_open=True)
    notification = claim(notification_id)
    if notification is None:
        return "skipped"
    token = current_notification.set((str(notification.workspace_id), notification_id))
    try:
        if notification.channel == "webhook":
            return deliver_webhook_notification(notification)
        return _deliver_messages(notification)
    except INFRASTRUCTURE:
        raise  # as a crash: the row, still `sending`, waits for the reconciler
    except Exception as err:
        if notification.status != "sending":  # recorded: a plugin's outcome event raised
            raise
        return _failed(notification, err)
    finally:
        current_notification.reset(token)


def _failed(notification: Notification, err: Exception) -> str:
    """An exception outside any one message (a payload no plan can read, a bug): a permanent
    failure of the notification, recorded now rather than tried again by the reconciler,
    which would send again whatever this attempt had sent."""
    log.error("delivering notification %s failed: %s", notification.id, type(err).__name__,
              exc_info=err)
    attempt = _row(notification, None, "permanent", 0, PermanentError(_described(err)))
    # A fan-out may have reached some, in an earlier attempt or in a checkpoint of this one.
    reached = notification.channel == "email" and \
        notification_store.reached_a_recipient(notification.id)
    status = "delivered" if reached else "failed"
    notification_store.record_outcome(notification, [attempt], status,
                                      None if reached else attempt["error"], None)
    outcome_events.emit_outcome(notification, attempt)
    return status


def _described(err: BaseException) -> str:
    return f"{type(err).__name__}: {err}"


def _as_outcome(err: Exception) -> DeliveryError:
    """A message's exception that is no DeliveryError, as its outcome (see INFRASTRUCTURE)."""
    if isinstance(err, INFRASTRUCTURE):
        return TransientError(_described(err))
    return PermanentError(_described(err))


class _Outcomes:
    """A delivery's outcomes as they settle. A fan-out's are committed as it goes, every
    CHECKPOINT_ROWS outcomes or CHECKPOINT_SECONDS, so that a worker killed in the middle
    re-sends only the messages settled since (the next attempt skips settled recipients)."""

    def __init__(self, notification: Notification, expected: int) -> None:
        self.notification = notification
        self.left = expected  # outcomes still to come
        self.attempts: list[dict[str, Any]] = []
        self.saved = 0  # attempts[:saved] are committed
        self.bounced: list[str] = []
        self.bounces_saved = 0
        self.delivered = self.failed = 0
        self.transient: TransientError | None = None
        self.unexpected: list[tuple[str | None, Exception]] = []
        self.since = time.monotonic()

    def add(self, recipient: str | None, started: float, result: Any,
            err: Exception | None) -> None:
        notification = self.notification
        self.left -= 1
        if err is not None and not isinstance(err, DeliveryError):
            self.unexpected.append((recipient, err))
            err = _as_outcome(err)
        if isinstance(err, TransientError):
            self.transient = err
            self.attempts.append(_row(notification, recipient, "transient", started, err))
        elif isinstance(err, SuppressedError):
            self.bounced.extend(err.recipients)
            self.attempts.append(_row(notification, recipient, "suppressed", started, err))
        elif err is not None:
            self.failed += 1
            self.attempts.append(_row(notification, recipient, "permanent", started, err))
        else:
            self.bounced.extend(result.bounced)
            self.delivered += 1
            row = _row(notification, recipient, "delivered", started, None)
            row["provider_message_id"] = result.provider_message_id
            if result.rejected:
                row["error"] = "; ".join(f"{a}: {r}" for a, r in result.rejected.items())
            self.attempts.append(row)
        unsaved = len(self.attempts) - self.saved
        if self.left > 0 and (unsaved >= CHECKPOINT_ROWS or
                              time.monotonic() - self.since >= CHECKPOINT_SECONDS):
            self.checkpoint()

    def checkpoint(self) -> None:
        """Commit the attempt rows and bounces so far (an error here ends the attempt as a
        crash: nothing more can be recorded, so nothing more is sent)."""
        self.save_bounces()
        notification_store.record_attempts(self.attempts[self.saved:])
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


def _deliver_messages(notification: Notification) -> str:
    registry = default_registry()
    channel = registry.channel(notification.channel)
    plan = plan_email(notification) if notification.channel == "email" else plan_sms(notification)
    outcomes = _Outcomes(notification, len(plan.messages))
    provider = None
    if plan.messages:
        try:
            provider = provider_for(notification.channel, notification.workspace_id)
        except DeliveryError as err:
            outcomes.failed = len(plan.messages)
            outcomes.attempts.append(_row(notification, None, "permanent", 0, err))
    if provider is not None:
        with contextlib.closing(send_all(channel, provider, plan.messages)) as sent:
            for outcome in sent:
                outcomes.add(*outcome)
    outcomes.log_unexpected()
    outcomes.save_bounces()
    plan.suppressed.extend(outcomes.bounced)
    attempts, transient = outcomes.attempts, outcomes.transient
    # A marketing send delivered to some recipients in an earlier attempt counts as delivered.
    reached = outcomes.delivered > 0 or plan.reached_before
    wait = None
    if transient is not None and notification.attempts < MAX_EMAIL_ATTEMPTS:
        status, error = "queued", str(transient)
        wait = retry_delay(notification.attempts, backoff=EMAIL_BACKOFF,
                           retry_after=transient.retry_after)
    elif reached:
        status, error = "delivered", None
    elif outcomes.failed or transient is not None:
        status, error = "failed", attempts[-1]["error"] if attempts else None
    elif plan.suppressed:
        status, error = "suppressed", None
    else:
        status, error = "failed", "no recipient left to send to"

    notification_store.record_outcome(notification, attempts[outcomes.saved:], status, error,
                                      wait)
    if plan.suppressed:
        outcome_events.emit("notification_suppressed", notification, recipients=plan.suppressed)
    outcome_events.emit_outcome(notification, attempts[-1] if attempts else {})
    return status


def _row(notification: Notification, recipient: str | None, outcome: str, started: float,
         error: Exception | None) -> dict[str, Any]:
    duration = int((time.perf_counter() - started) * 1000) if started else 0
    return {
        "notification": notification.id,
        "number": notification.attempts,
        "recipient": recipient,
        "started_at": utcnow(),
        "duration_ms": duration,
        "outcome": outcome,
        "status_code": getattr(error, "status_code", None),
        "provider_message_id": None,
        "response_excerpt": None,
        "error": str(error)[:2000] if error else None,
    }
