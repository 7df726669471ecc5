"""Which notification a provider's report is about: the provider message id recorded on
its delivery attempt when the provider accepted it."""

from __future__ import annotations

from typing import Any

from engine.database.models import DeliveryAttempt, Notification

MAX_ID_CHARS = 200


def by_provider_message_id(message_id: str, workspace_id: Any = None) -> Notification | None:
    """The notification whose attempt recorded ``message_id``; None when none did, or when
    it belongs to another workspace than ``workspace_id`` (when given).

    A Twilio SMS to several numbers records their message ids joined by commas: the first
    is found by the index's prefix, the others by a scan (rare: most SMS go to one number).
    """
    message_id = (message_id or "").strip()
    if not message_id or len(message_id) > MAX_ID_CHARS or "," in message_id:
        return None
    column = DeliveryAttempt.provider_message_id
    attempt = (DeliveryAttempt.select(DeliveryAttempt.notification)
               .where(column == message_id).first())
    if attempt is None and message_id.isascii() and message_id.isalnum():  # a Twilio SID
        attempt = (DeliveryAttempt.select(DeliveryAttempt.notification)
                   .where(column.startswith(message_id + ",")
                          | column.contains("," + message_id)).first())
    if attempt is None:
        return None
    notification = Notification.get_or_none(Notification.id == attempt.notification_id)
    if notification is None:
        return None
    if workspace_id is not None and str(notification.workspace_id) != str(workspace_id):
        return None
    return notification


def message_ids_of(notification: Notification) -> set[str]:
    """The message ids its attempts recorded, without angle brackets."""
    rows = (DeliveryAttempt.select(DeliveryAttempt.provider_message_id)
            .where(DeliveryAttempt.notification == notification.id,
                   DeliveryAttempt.provider_message_id.is_null(False)).tuples())
    return {value.strip().strip("<>") for (value,) in rows for value in value.split(",")}
