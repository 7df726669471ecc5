"""The webhook channel's provider: the engine's signed POST (engine/webhooks/, spec 6.1 and
6.5), sending the one message a webhook notification plans, as a provider sends an email.

The job delivers a webhook notification as it delivers any other (planning, send lanes,
outcomes, the status rule): only the provider differs, chosen by the channel's
``delivery = "webhook"`` (engine/delivery/providers.py). Its retry policy is the webhook
one (HERALD_WEBHOOK_MAX_ATTEMPTS, HERALD_WEBHOOK_BACKOFF; engine/delivery/retry.py).
"""

from __future__ import annotations

from typing import Any

from engine import runtime
from engine.database import notification_store
from engine.database.models import Notification
from engine.database.vocabulary import Outcome
from engine.plugins.contracts import PermanentError, SendResult, TransientError
from engine.webhooks.delivery import deliver_webhook


class SignedWebhookProvider:
    """One notification's signed POST: its delivery id, and its workspace's signing secret
    read now, not at send (a rotation applies to pending retries at once; D7, docs/api.md)."""

    herald_scheme = None  # no provider of the operator's: the attempt rows name none

    def __init__(self, notification: Notification) -> None:
        self.secret = notification_store.signing_secret(notification)
        self.delivery_id = notification.delivery_id

    def send(self, message: dict[str, Any]) -> SendResult:
        """One attempt: delivered, or the receiver's or the network's refusal as a
        TransientError (retried by the webhook policy) or a PermanentError."""
        settings = runtime.settings()
        result = deliver_webhook(
            message["url"], message["body"].encode("utf-8"),
            content_type=message["contentType"], custom_headers=message.get("headers") or {},
            secret=self.secret, delivery_id=self.delivery_id,
            allow_private=settings.webhook_allow_private, hint=not settings.production)
        if result.outcome == Outcome.DELIVERED:
            return SendResult(status_code=result.status_code,
                              response_excerpt=result.response_excerpt)
        error = TransientError(result.error or "", status_code=result.status_code,
                               retry_after=result.retry_after) \
            if result.outcome == Outcome.TRANSIENT else \
            PermanentError(result.error or "", status_code=result.status_code)
        error.response_excerpt = result.response_excerpt
        raise error
