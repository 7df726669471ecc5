"""The webhook part of the job: one attempt, recorded, then done, failed or rescheduled."""

from __future__ import annotations

import datetime as dt

from channels.webhook import deliver_webhook
from engine import runtime
from engine.db import database
from engine.models import DeliveryAttempt, Notification, Workspace, utcnow
from engine.retry import retry_delay


def deliver_webhook_notification(notification: Notification) -> str:
    settings = runtime.settings()
    payload = notification.payload
    # Read the secret now, not at send: a rotation applies to pending retries at once (D7).
    secret = Workspace.get_by_id(notification.workspace_id).signing_secret
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
    with database.atomic():
        DeliveryAttempt.create(
            notification=notification, number=notification.attempts, started_at=started,
            duration_ms=result.duration_ms, outcome=result.outcome,
            status_code=result.status_code, response_excerpt=result.response_excerpt[:4096],
            error=result.error)
        notification.status = status
        notification.last_error = result.error
        notification.updated_at = utcnow()
        notification.next_attempt_at = utcnow() + dt.timedelta(seconds=wait) if wait else None
        notification.save(only=[Notification.status, Notification.last_error,
                                Notification.updated_at, Notification.next_attempt_at])
    return status
