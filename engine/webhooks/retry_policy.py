"""How long to wait before another attempt (spec 6.5, D7 in docs/api.md): the one schedule
for webhook notifications, email and SMS retries (engine/delivery/retry.py) and delivery
callbacks (engine/callbacks/)."""

from __future__ import annotations

import random
from collections.abc import Sequence

MAX_WAIT = 900.0  # 15 minutes, whatever Retry-After asks
BASE_WAIT = 5.0


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
