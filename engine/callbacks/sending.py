"""One attempt of one callback: the webhook attempt of engine/webhooks/ (destination judged
again, signed with the workspace's secret of this moment, POSTed pinned within the webhook
timeout), then its result on the row and the next attempt scheduled (spec 6.5)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from engine import runtime
from engine.callbacks import queue
from engine.database.models import Workspace, utcnow
from engine.database.models.callbacks import Callback
from engine.database.vocabulary import Outcome
from engine.webhooks.delivery import AttemptResult, deliver_webhook
from engine.webhooks.retry_policy import retry_delay

PENDING, RETRYING, DELIVERED, FAILED = "pending", "retrying", "delivered", "failed"
DUE = (PENDING, RETRYING)
EXCERPT_CHARS = 500
_ATTEMPT_FIELDS = (Callback.attempts, Callback.status_code, Callback.error, Callback.updated_at,
                   Callback.next_attempt_at, Callback.status)


@dataclass(frozen=True)
class Sent:
    """What an attempt came to: the row's new status, and whether the receiver answered."""

    status: str
    answered: bool


def attempt(callback: Callback) -> Sent:
    """Send ``callback`` once and record how it went. The URL and the secret are read now:
    a changed URL or a rotated secret applies to every pending retry."""
    settings = runtime.settings()
    workspace = (Workspace.select(Workspace.callback_url, Workspace.signing_secret)
                 .where(Workspace.id == callback.workspace_id).first())
    if workspace is None or not workspace.callback_url:
        return _record(callback, AttemptResult(Outcome.PERMANENT, None, 0, "",
                                               "the workspace has no callback URL now", None))
    result = deliver_webhook(
        workspace.callback_url, callback.body.encode("utf-8"),
        content_type="application/json", custom_headers=None,
        secret=workspace.signing_secret, delivery_id=callback.delivery_id,
        allow_private=settings.webhook_allow_private, hint=not settings.production)
    return _record(callback, result)


def _error(result: AttemptResult) -> str | None:
    if result.outcome == Outcome.PERMANENT and result.status_code is not None \
            and 400 <= result.status_code < 500:
        return f"receiver answered {result.status_code}: retries stopped (a 4xx other than " \
               "408 or 429 is not retried, spec 6.5)"
    return result.error


def _record(callback: Callback, result: AttemptResult) -> Sent:
    settings = runtime.settings()
    now = utcnow()
    callback.attempts += 1
    callback.status_code = result.status_code
    callback.error = _error(result)
    callback.updated_at = now
    callback.next_attempt_at = None
    wait = None
    if result.outcome == Outcome.DELIVERED:
        callback.status = DELIVERED
    elif result.outcome == Outcome.TRANSIENT and callback.attempts < settings.webhook_max_attempts:
        wait = retry_delay(callback.attempts, backoff=settings.webhook_backoff or None,
                           retry_after=result.retry_after)
        callback.status = RETRYING
        callback.next_attempt_at = now + dt.timedelta(seconds=wait)
    else:
        callback.status = FAILED
    # Only what an attempt changes: the body (written once, perhaps kilobytes) and the rest
    # of the row are not sent again.
    callback.save(only=_ATTEMPT_FIELDS)
    if wait is not None:
        queue.enqueue(callback.workspace_id, delay=wait)
    return Sent(callback.status, result.status_code is not None)
