"""The worker's job: deliver one notification, record every attempt, decide what comes next."""

from __future__ import annotations

import functools
import logging
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from peewee import PeeweeException
from redis.exceptions import RedisError

from channels.email import text_from_html
from engine import (
    delivery_thread,
    notification_store,
    outcome_events,
    runtime,
    suppressions,
)
from engine.addresses import suppression_key
from engine.contracts import (
    DeliveryError,
    PermanentError,
    SuppressedError,
    TransientError,
)
from engine.db import database
from engine.models import DeliveryAttempt, Notification, utcnow
from engine.plugins import default_registry
from engine.providers import current_notification, provider_for
from engine.retry import MAX_EMAIL_ATTEMPTS, retry_delay
from engine.tracking import apply_tracking, unsubscribe_url
from engine.webhook_delivery import deliver_webhook_notification

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


# A message still to send: its recipient (one address of a fan-out, else None) and what
# makes its payload. A fan-out's per-recipient work (signed tracking and unsubscribe links)
# runs when the send lanes ask for the message, beside the other lanes' network waits,
# instead of for every recipient before the first message leaves.
Planned = tuple[str | None, Callable[[], dict[str, Any]]]


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
    """The suppressed keys among ``keys``: read by the claim when the payload lists them."""
    known = getattr(notification, "suppressed_keys", None)
    if known is not None:
        return known & set(keys)
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
    if delivery_thread.taken(notification_id):
        return "handed over"
    return _deliver(notification_id)


def hand_over(notification_id: str) -> None:
    """Hand this job's delivery to the worker's delivery thread the moment RQ dequeues it
    (see engine/delivery_thread.py)."""
    delivery_thread.hand(notification_id, lambda: _deliver(notification_id))


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
    reached = notification.attempts > 1 and notification.channel == "email" and \
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


def _deliver_messages(notification: Notification) -> str:
    registry = default_registry()
    channel = registry.channel(notification.channel)
    plan = plan_email(notification) if notification.channel == "email" else plan_sms(notification)
    attempts: list[dict[str, Any]] = []
    transient: TransientError | None = None
    delivered = failed = 0
    provider = None
    if plan.messages:
        try:
            provider = provider_for(notification.channel, notification.workspace_id)
        except DeliveryError as err:
            failed = len(plan.messages)
            attempts.append(_row(notification, None, "permanent", 0, err))
    sent = _send_all(channel, provider, plan.messages) if provider is not None else []
    bounced: list[str] = []
    unexpected: list[tuple[str | None, Exception]] = []
    for recipient, started, result, err in sent:
        if err is not None and not isinstance(err, DeliveryError):
            unexpected.append((recipient, err))
            err = _as_outcome(err)
        if isinstance(err, TransientError):
            transient = err
            attempts.append(_row(notification, recipient, "transient", started, err))
        elif isinstance(err, SuppressedError):
            bounced.extend(err.recipients)
            attempts.append(_row(notification, recipient, "suppressed", started, err))
        elif err is not None:
            failed += 1
            attempts.append(_row(notification, recipient, "permanent", started, err))
        else:
            bounced.extend(result.bounced)
            delivered += 1
            row = _row(notification, recipient, "delivered", started, None)
            row["provider_message_id"] = result.provider_message_id
            if result.rejected:
                row["error"] = "; ".join(f"{a}: {r}" for a, r in result.rejected.items())
            attempts.append(row)
    if unexpected:  # once, not once a message: a bad header fails every message of a fan-out
        recipient, first = unexpected[0]
        log.error("notification %s: %d of its messages raised instead of ending in an outcome "
                  "(the first, to %s: %s)", notification.id, len(unexpected),
                  recipient or "its recipients", type(first).__name__, exc_info=first)
    if bounced:
        suppressions.add(notification.workspace_id, bounced, "bounce")
        plan.suppressed.extend(bounced)
    # A marketing send delivered to some recipients in an earlier attempt counts as delivered.
    reached = delivered > 0 or plan.reached_before
    wait = None
    if transient is not None and notification.attempts < MAX_EMAIL_ATTEMPTS:
        status, error = "queued", str(transient)
        wait = retry_delay(notification.attempts, backoff=EMAIL_BACKOFF,
                           retry_after=transient.retry_after)
    elif reached:
        status, error = "delivered", None
    elif failed or transient is not None:
        status, error = "failed", attempts[-1]["error"] if attempts else None
    elif plan.suppressed:
        status, error = "suppressed", None
    else:
        status, error = "failed", "no recipient left to send to"

    notification_store.record_outcome(notification, attempts, status, error, wait)
    if plan.suppressed:
        outcome_events.emit("notification_suppressed", notification, recipients=plan.suppressed)
    outcome_events.emit_outcome(notification, attempts[-1] if attempts else {})
    return status


def _send_all(channel: Any, provider: Any, messages: list[Planned]) -> list[tuple]:
    """Send every planned message; (recipient, started, result, error) each, in order.

    Whatever one message raises (a DeliveryError, or any other exception while it is built or
    sent) is that message's error: the others go on, and every outcome is recorded.
    A fan-out is latency-bound (SMTP round trips), so a provider that declares
    ``max_concurrency`` gets that many lanes of messages in flight at once; one that has
    ``send_many`` is handed each lane's messages as a stream, built as it asks for them.
    """
    width = min(getattr(provider, "max_concurrency", 1), len(messages))
    if len(messages) > 1 and hasattr(provider, "send_many"):
        return _streamed(channel, provider, messages, width)

    def one(item: Planned) -> tuple:
        recipient, make = item
        started = time.perf_counter()
        try:
            return recipient, started, provider.send(channel.build(make())), None
        except Exception as err:
            return recipient, started, None, err

    if width <= 1:
        return [one(item) for item in messages]
    with ThreadPoolExecutor(max_workers=width, thread_name_prefix="herald-send") as pool:
        return list(pool.map(one, messages))


def _streamed(channel: Any, provider: Any, messages: list[Planned], width: int) -> list[tuple]:
    """``_send_all`` through ``provider.send_many``: each lane takes the next message from a
    shared queue, so a slow lane takes fewer."""
    sent: list[tuple | None] = [None] * len(messages)
    queue = deque(enumerate(messages))
    lock = threading.Lock()
    stopped: list[Exception] = []  # a send_many that raised before it took any message

    def lane() -> None:
        taken: deque[tuple[int, str | None, float]] = deque()

        def stream() -> Iterator[Any]:
            while True:
                with lock:
                    if not queue:
                        return
                    index, (recipient, make) = queue.popleft()
                started = time.perf_counter()
                try:
                    message = channel.build(make())
                except Exception as err:  # this message's outcome; the stream goes on
                    sent[index] = (recipient, started, None, err)
                    continue
                taken.append((index, recipient, started))
                yield message

        while True:
            try:
                for outcome in provider.send_many(stream()):
                    index, recipient, started = taken.popleft()
                    failed = isinstance(outcome, DeliveryError)
                    sent[index] = (recipient, started, None if failed else outcome,
                                   outcome if failed else None)
                return
            except Exception as err:
                if not taken:
                    stopped.append(err)
                    return
                # It raised on the message it took last: that one fails. Those it held
                # before it have no answer (the SMTP provider had not sent their content):
                # they go back to the queue for a new stream, as a message whose connection
                # was lost is sent again. Each time one message fails, so this ends.
                index, recipient, started = taken.pop()
                sent[index] = (recipient, started, None, err)
                with lock:
                    queue.extendleft((i, messages[i]) for i, _, _ in reversed(taken))
                taken.clear()

    if width <= 1:
        lane()
    else:
        with ThreadPoolExecutor(max_workers=width, thread_name_prefix="herald-send") as pool:
            for lane_done in [pool.submit(lane) for _ in range(width)]:
                lane_done.result()
    for index, row in enumerate(sent):
        if row is None:  # left in the queue by lanes that all stopped, or never answered
            sent[index] = (messages[index][0], 0.0, None, stopped[0] if stopped else
                           RuntimeError("provider.send_many gave no outcome for this message"))
    return sent  # type: ignore[return-value]


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
