"""Attempt rows, built in one place for every kind of delivery: a message's outcome, a
webhook attempt, an attempt the reconciler ends for a worker that never finished it."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

from engine.database.models import Notification, utcnow
from engine.database.vocabulary import Outcome

MAX_ERROR_CHARS = 2000
MAX_EXCERPT_CHARS = 4096


def elapsed_ms(started: float) -> int:
    """Milliseconds since ``started`` (time.perf_counter); 0 for a message never sent."""
    return int((time.perf_counter() - started) * 1000) if started else 0


def attempt_row(notification: Notification, outcome: Outcome, *, recipient: str | None = None,
                duration_ms: int = 0, status_code: int | None = None,
                error: str | None = None, response_excerpt: str | None = None,
                provider_message_id: str | None = None,
                started_at: dt.datetime | None = None) -> dict[str, Any]:
    """One DeliveryAttempt row of the notification's current attempt, as a dict of its
    fields (engine/database/notification_store.py writes them)."""
    return {
        "notification": notification.id,
        "number": notification.attempts,
        "recipient": recipient,
        "started_at": started_at or utcnow(),
        "duration_ms": duration_ms,
        "outcome": outcome,
        "status_code": status_code,
        "provider_message_id": provider_message_id,
        "response_excerpt": None if response_excerpt is None
        else response_excerpt[:MAX_EXCERPT_CHARS],
        "error": None if error is None else error[:MAX_ERROR_CHARS],
    }
