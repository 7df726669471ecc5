"""A delivery's outcomes per recipient, once the notification's status is final: what the
worker settled for each one (delivered, failed, bounced) and who was suppressed.

Read at the end, from the attempt rows (one query, only for a workspace with a callback
URL), so a fan-out spread over checkpoints, slices and attempts is called back once per
recipient, each with its last outcome.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from engine.callbacks.recording import Outcome, record, wanted
from engine.database.models import DeliveryAttempt, Notification, utcnow
from engine.database.vocabulary import NotificationStatus
from engine.formats.addresses import suppression_key

log = logging.getLogger("herald.callbacks")
FINAL = (NotificationStatus.DELIVERED, NotificationStatus.FAILED, NotificationStatus.SUPPRESSED)
ERROR_CHARS = 1000


def recipients(notification: Notification) -> list[str]:
    """Every recipient of the notification in the order the payload lists them (their
    suppression keys); a webhook's is its destination URL."""
    payload = notification.payload or {}
    keys: list[str] = []
    for name in ("to", "cc", "bcc"):
        for value in payload.get(name) or []:
            if isinstance(value, str) and (key := suppression_key(value)) not in keys:
                keys.append(key)
    if not keys:
        keys = [str(k) for k in payload.get("suppressionKeys") or []]
    if not keys and isinstance(payload.get("url"), str):
        keys = [payload["url"]]
    return keys


def _at(row: Mapping[str, Any]) -> dt.datetime:
    started = row.get("started_at") or utcnow()
    return started + dt.timedelta(milliseconds=row.get("duration_ms") or 0)


def _detail(row: Mapping[str, Any]) -> dict[str, Any]:
    detail: dict[str, Any] = {}
    for key, name in (("provider", "provider"), ("provider_message_id", "providerMessageId"),
                      ("status_code", "statusCode")):
        if row.get(key) is not None:
            detail[name] = row[key]
    if row.get("error"):
        detail["error"] = str(row["error"])[:ERROR_CHARS]
    return detail


def _as_outcome(outcome: str) -> str:
    return {"delivered": "delivered", "suppressed": "bounced"}.get(outcome, "failed")


def settled(notification: Notification, *, suppressed: Iterable[str] = (),
            bounced: Iterable[str] = (), rejected: Mapping[str, str] | None = None) -> int:
    """Call back each recipient's outcome of a notification whose status just became final.

    ``suppressed``: recipients left out because the suppression list held them;
    ``bounced``: addresses the server refused for good in this attempt; ``rejected``:
    addresses a message that reached others did not reach, with the reason. Never raises:
    the outcome is committed, and its callback must not turn it into a crash.
    """
    try:
        return _settled(notification, suppressed, bounced, rejected)
    except Exception:
        log.exception("callbacks of notification %s could not be recorded", notification.id)
        return 0


def _settled(notification: Notification, suppressed: Iterable[str], bounced: Iterable[str],
             rejected: Mapping[str, str] | None) -> int:
    if notification.status not in FINAL or not wanted(notification, "delivered"):
        return 0
    bounced_keys = {suppression_key(a) for a in bounced}
    left_out = [k for k in dict.fromkeys(suppression_key(a) for a in suppressed)
                if k not in bounced_keys]
    refused = {suppression_key(a): why for a, why in (rejected or {}).items()}
    fields = (DeliveryAttempt.recipient, DeliveryAttempt.outcome, DeliveryAttempt.started_at,
              DeliveryAttempt.duration_ms, DeliveryAttempt.status_code, DeliveryAttempt.error,
              DeliveryAttempt.provider, DeliveryAttempt.provider_message_id)
    rows = list(DeliveryAttempt.select(*fields)
                .where(DeliveryAttempt.notification == notification.id)
                .order_by(DeliveryAttempt.id).dicts())
    per_recipient: dict[str, dict[str, Any]] = {}
    last_message: dict[str, Any] | None = None
    for row in rows:
        if row["recipient"]:
            per_recipient[row["recipient"]] = row  # its last attempt wins
        else:
            last_message = row
    outcomes = [Outcome("suppressed", key, notification.updated_at or utcnow(),
                        {"reason": "on the workspace's suppression list"})
                for key in left_out]
    for key, row in per_recipient.items():
        outcomes.append(Outcome(_as_outcome(row["outcome"]), key, _at(row), _detail(row)))
    if last_message is not None:
        done = set(left_out) | per_recipient.keys()
        for key in recipients(notification):
            if key in done:
                continue
            if key in bounced_keys:
                outcome, detail = "bounced", _detail(last_message)
            elif key in refused:
                outcome, detail = "failed", {**_detail(last_message), "error": refused[key]}
            else:
                outcome, detail = _as_outcome(last_message["outcome"]), _detail(last_message)
            outcomes.append(Outcome(outcome, key, _at(last_message), detail))
    return record(notification, outcomes)
