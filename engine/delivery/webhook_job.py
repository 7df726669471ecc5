"""A webhook notification's delivery: one attempt (engine/webhooks/), recorded, and the next
one scheduled by the webhook retry policy (spec 6.5, D7 in docs/api.md)."""

from __future__ import annotations

from engine import runtime
from engine.delivery import outcome_events
from engine.delivery.retry import retry_delay
from engine.store import notification_store
from engine.store.models import Notification, utcnow
from engine.webhooks.delivery import deliver_webhook


def deliver_webhook_notification(notification: Notification) -> str:
    settings = runtime.settings()
    payload = notification.payload
    # Read the secret now, not at send: a rotation applies to pending retries at once (D7).
    secret = notification_store.signing_secret(notification)
    started = utcnow()
    result = deliver_webhook(
        payload["url"], payload["body"].encode("utf-8"), content_type=payload["contentType"],
        custom_headers=payload.get("headers") or {}, secret=secret,
        delivery_id=notification.delivery_id, allow_private=settings.webhook_allow_private)
    status, wait = "failed", None
    if result.outcome == "delivered":
        status = "delivered"
    elif result.outcome == "transient" and notification.attempts < settings.webhook_max_attempts:
        status = "queued"
        wait = retry_delay(notification.attempts, backoff=settings.webhook_backoff or None,
                           retry_after=result.retry_after)
    attempt = {"notification": notification.id, "number": notification.attempts,
               "started_at": started, "duration_ms": result.duration_ms,
               "outcome": result.outcome, "status_code": result.status_code,
               "response_excerpt": result.response_excerpt[:4096], "error": result.error}
    notification_store.record_outcome(notification, [attempt], status, result.error, wait)
    outcome_events.emit_outcome(notification, attempt)
    return status
