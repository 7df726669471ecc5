"""Retry policy (spec 6.5 for webhooks, docs/api.md; email and SMS alike): what is retried,
how long to wait, and how many attempts a channel gets."""

from __future__ import annotations

import random
from collections.abc import Sequence

from engine.plugins.manager import default_registry

MAX_WAIT = 900.0  # 15 minutes, whatever Retry-After asks
BASE_WAIT = 5.0
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


def retry_delay(attempt: int, *, backoff: Sequence[float] | None = None,
                retry_after: float | None = None, rng: random.Random | None = None) -> float:
    """Wait before the next attempt; ``attempt`` is how many attempts were already made."""
    rng = rng or random.Random()
    if retry_after is not None:
        # Honour the receiver, plus jitter so that many retries do not arrive at once.
        return min(MAX_WAIT, retry_after + rng.uniform(0, max(1.0, retry_after * 0.1)))
    if backoff:
        base = backoff[min(attempt, len(backoff)) - 1]
        return min(MAX_WAIT, base * rng.uniform(0.9, 1.1))
    base = min(MAX_WAIT, BASE_WAIT * 3 ** max(0, attempt - 1))
    # "Equal jitter": between half and all of the exponential step.
    return min(MAX_WAIT, base / 2 + rng.uniform(0, base / 2))
