"""The plugin events of a delivery's outcome (docs/plugins.md), for every channel."""

from __future__ import annotations

from typing import Any

from engine.database.models import Notification
from engine.database.vocabulary import NotificationStatus
from engine.plugins.manager import default_registry


def emit(name: str, notification: Notification, **kwargs: Any) -> None:
    """Call the ``name`` hook of every plugin that implements it, once the outcome it reports
    is committed."""
    hook = getattr(default_registry().manager.hook, name)
    if not hook.get_hookimpls():  # nobody listens: nothing to build or call
        return
    hook(notification={"id": str(notification.id), "channel": notification.channel,
                       "workspaceId": str(notification.workspace_id),
                       "status": notification.status}, **kwargs)


def emit_outcome(notification: Notification, attempt: dict[str, Any]) -> None:
    """``notification_delivered`` or ``notification_failed`` for a final status; nothing for
    a notification that waits for a retry or was suppressed."""
    if notification.status in (NotificationStatus.DELIVERED, NotificationStatus.FAILED):
        emit(f"notification_{notification.status}", notification, attempt=attempt)
