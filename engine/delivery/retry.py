"""Retry policy (spec 6.5 for webhooks, docs/api.md; email and SMS alike): what is retried,
how long to wait, and how many attempts a channel gets."""

from __future__ import annotations

from engine.plugins.manager import default_registry
from engine.webhooks.retry_policy import BASE_WAIT, MAX_WAIT, retry_delay

__all__ = ["BASE_WAIT", "MAX_EMAIL_ATTEMPTS", "MAX_WAIT", "max_attempts", "retry_delay",
           "webhook_channel"]

MAX_EMAIL_ATTEMPTS = 8  # email and SMS; webhooks: HERALD_WEBHOOK_MAX_ATTEMPTS


def webhook_channel() -> str:
    """The channel whose delivery is the engine's signed webhook POST (its attempts follow
    HERALD_WEBHOOK_MAX_ATTEMPTS); "" when none is installed."""
    for channel in default_registry().ordered_channels():
        if channel.delivery == "webhook":
            return channel.name
    return ""


def max_attempts(channel: str, webhook_max_attempts: int) -> int:
    """The attempts a notification of ``channel`` gets, however they end (a crash counts)."""
    return webhook_max_attempts if channel == webhook_channel() else MAX_EMAIL_ATTEMPTS
