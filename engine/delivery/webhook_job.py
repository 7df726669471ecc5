"""A webhook notification's delivery: one attempt (engine/webhooks/), recorded, and the next
one scheduled by the webhook retry policy (spec 6.5, D7 in docs/api.md)."""

from __future__ import annotations

from engine import runtime
from engine.callbacks import delivered as callbacks
from engine.delivery import outcome_events
from engine.delivery.attempts import attempt_row
from engine.delivery.retry import retry_delay
from engine.observability import deliveries
from engine.store import notification_store
from engine.store.models import Notification, utcnow
from engine.store.vocabulary import NotificationStatus, Outcome
from engine.webhooks.delivery import deliver_webhook


def deliver_webhook_notification(notification: Notification) -> str:
    settings = runtime.settings()
    payload = notification.payload
    # Read the secret now, not at send: a rotation applies to pending retries at once
    # (D7, docs/api.md).
    secret = notification_store.signing_secret(notification)
    started = utcnow()
    result = deliver_webhook(
        payload["url"], payload["body"].encode("utf-8"), content_type=payload["contentType"],
        custom_headers=payload.get("headers") or {}, secret=secret,
        delivery_id=notification.delivery_id, allow_private=settings.webhook_allow_private,
        hint=not settings.production)
    status, wait = NotificationStatus.FAILED, None
    if result.outcome == Outcome.DELIVERED:
        status = NotificationStatus.DELIVERED
    elif result.outcome == Outcome.TRANSIENT and \
            notification.attempts < settings.webhook_max_attempts:
        status = NotificationStatus.QUEUED
        wait = retry_delay(notification.attempts, backoff=settings.webhook_backoff or None,
                           retry_after=result.retry_after)
    attempt = attempt_row(notification, result.outcome, started_at=started,
                          duration_ms=result.duration_ms, status_code=result.status_code,
                          response_excerpt=result.response_excerpt, error=result.error)
    notification_store.record_outcome(notification, [attempt], status, result.error, wait)
    deliveries.observed(notification, [attempt], status, result.error, wait, "webhook")
    callbacks.settled(notification)
    outcome_events.emit_outcome(notification, attempt)
    return status
