"""One delivery attempt observed once it is recorded: a log line naming the notification,
its outcome and why, and its metrics.

The outcome is the notification's, as recorded: ``delivered``, ``retry`` (with the time of
the next attempt), ``failed`` (permanent, or attempts used up), ``suppressed``. A failure
is logged as one, at WARNING (retry) or ERROR (failed), never as a success.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from engine.observability import metrics
from engine.plugins.manager import default_registry

log = logging.getLogger("herald.delivery")
_OUTCOMES = {"delivered": "delivered", "queued": "retry", "failed": "failed",
             "suppressed": "suppressed"}
_LEVELS = {"delivered": logging.INFO, "retry": logging.WARNING, "failed": logging.ERROR,
           "suppressed": logging.INFO}


def _own_sender(channel: str) -> str:
    """Who sent a message with no provider of the operator's: the engine's signed POST
    (a channel whose ``delivery`` is ``"webhook"``), else none."""
    try:
        delivery = default_registry().channel(channel).delivery
    except LookupError:
        return "none"
    return "none" if delivery == "messages" else delivery


def observed(notification: Any, attempts: list[dict[str, Any]], status: str,
             error: str | None, wait: float | None, provider: str | None,
             suppressed: int = 0) -> None:
    """Log and count the attempt ``notification`` just recorded (its status is ``status``)."""
    outcome = _OUTCOMES.get(str(status), str(status))
    provider = provider or _own_sender(notification.channel)
    durations = [row.get("duration_ms") or 0 for row in attempts]
    fields: dict[str, Any] = {
        "notificationId": str(notification.id),
        "correlationId": getattr(notification, "correlation_id", None),
        "workspaceId": str(notification.workspace_id), "channel": notification.channel,
        "provider": provider, "attempt": notification.attempts, "outcome": outcome,
        "durationMs": sum(durations), "messages": len(attempts)}
    if attempts and attempts[-1].get("status_code") is not None:
        fields["statusCode"] = attempts[-1]["status_code"]
    message = f"delivery attempt {notification.attempts}: {outcome}"
    if outcome == "retry" and wait is not None:
        at = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=wait)
        fields["retryAt"] = at.strftime("%Y-%m-%dT%H:%M:%SZ")
        message += f", next attempt at {fields['retryAt']}"
    if error and outcome != "delivered":
        fields["reason"] = " ".join(error.split())[:500]
        message += f": {fields['reason']}"
    if suppressed:
        fields["suppressed"] = suppressed
    log.log(_LEVELS.get(outcome, logging.INFO), "%s", message, extra=fields)
    metrics.delivery(notification.channel, provider, outcome,
                     [d / 1000 for d in durations if d], suppressed)
