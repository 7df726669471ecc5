"""The correlation id and notification id of the work in hand, for every log line.

Set once where the work starts (an API request, a delivery) and read by the log formatter,
so a line logged anywhere below carries them without being passed them.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

correlation_id: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "herald_correlation_id", default=None)
notification_id: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "herald_notification_id", default=None)


@contextlib.contextmanager
def bound(correlation: str | None = None, notification: str | None = None) -> Iterator[None]:
    """Within the block, log lines carry these ids (None keeps what is already bound)."""
    tokens = []
    if correlation is not None:
        tokens.append((correlation_id, correlation_id.set(correlation)))
    if notification is not None:
        tokens.append((notification_id, notification_id.set(notification)))
    try:
        yield
    finally:
        for var, token in reversed(tokens):
            var.reset(token)


def current() -> dict[str, str]:
    """The ids bound now, under the names the logs use."""
    ids = {"correlationId": correlation_id.get(), "notificationId": notification_id.get()}
    return {k: v for k, v in ids.items() if v}
