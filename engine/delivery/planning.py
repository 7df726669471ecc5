"""Planning a delivery: which messages a notification still needs, each made when it is sent.

Suppressed recipients are dropped; a transactional email is one message, a marketing email
one message per recipient with its own tracking and unsubscribe links (D5, docs/api.md).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.delivery.message_lanes import Planned
from engine.delivery.tracking import apply_tracking, unsubscribe_url
from engine.formats.addresses import suppression_key
from engine.formats.plaintext import html_to_text
from engine.store import notification_store
from engine.store.models import DeliveryAttempt, Notification


@dataclass
class Plan:
    """The messages still to send and what was decided without sending."""

    messages: list[Planned] = field(default_factory=list)
    suppressed: list[str] = field(default_factory=list)
    reached_before: bool = False  # an earlier attempt delivered to some (a fan-out)


def _as_is(payload: dict[str, Any]) -> Callable[[], dict[str, Any]]:
    return lambda: payload


def _tracked_html(payload: dict[str, Any], notification_id: str,
                  recipient: str | None = None) -> str | None:
    """The payload's HTML with the open pixel and click links its options ask for."""
    html = payload.get("html")
    if html is None:
        return None
    return apply_tracking(html, notification_id=notification_id,
                          track_opens=bool(payload.get("trackOpens")),
                          track_clicks=bool(payload.get("trackClicks")), recipient=recipient)


def _personalised(payload: dict[str, Any], notification_id: str, address: str,
                  recipient: str) -> dict[str, Any]:
    """One recipient's message of a marketing send: its own tracking and unsubscribe links."""
    html = _tracked_html(payload, notification_id, recipient)
    link = unsubscribe_url(notification_id, recipient)
    headers = {**(payload.get("headers") or {}),
               "List-Unsubscribe": f"<{link}>",
               "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}
    return {**payload, "to": [address], "cc": [], "bcc": [], "html": html, "headers": headers}


def _suppressed(notification: Notification, keys: list[str]) -> set[str]:
    """The suppressed keys among ``keys``: read by the claim when the payload lists exactly
    these keys (a row queued before the keys were spelt as now lists others: asked again)."""
    known = getattr(notification, "suppressed_keys", None)
    wanted = set(keys)
    if known is not None and wanted.issubset(notification.payload["suppressionKeys"]):
        return known & wanted
    return notification_store.suppressed(notification.workspace_id, keys)


def _settled_recipients(notification: Notification) -> dict[str, str]:
    """The recipients of a fan-out that an earlier attempt settled, with how: delivered,
    permanent or suppressed. Only a transient outcome is tried again: a permanent one would
    fail the same way (or, its outcome unknown, might be sent twice)."""
    rows = DeliveryAttempt.select(DeliveryAttempt.recipient, DeliveryAttempt.outcome).where(
        DeliveryAttempt.notification == notification, DeliveryAttempt.outcome != "transient",
        DeliveryAttempt.recipient.is_null(False))
    return {row.recipient: row.outcome for row in rows}


def plan_email(notification: Notification) -> Plan:
    """Drop suppressed recipients; one message (Transactional) or one per recipient (Marketing)."""
    payload = notification.payload
    lists = {k: list(payload.get(k) or []) for k in ("to", "cc", "bcc")}
    everyone = [a for values in lists.values() for a in values]
    keys = {a: suppression_key(a) for a in everyone}
    blocked = _suppressed(notification, list(keys.values()))
    plan = Plan(suppressed=[a for a in everyone if keys[a] in blocked])
    kept = {k: [a for a in v if keys[a] not in blocked] for k, v in lists.items()}
    nid = str(notification.id)
    if payload.get("text") is None and payload.get("html") is not None:
        # Once per notification, from the HTML before tracking (the text has no pixel).
        payload = {**payload, "text": html_to_text(payload["html"])}
    if payload.get("emailType") == "Marketing":
        # Only an earlier attempt (the claim counts this one) can have settled some.
        done = _settled_recipients(notification) if notification.attempts > 1 else {}
        plan.reached_before = "delivered" in done.values()
        for address in [a for values in kept.values() for a in values]:
            recipient = suppression_key(address)
            if recipient not in done:
                plan.messages.append((recipient, functools.partial(
                    _personalised, payload, nid, address, recipient)))
        return plan
    if any(kept.values()):
        plan.messages.append((None, _as_is({**payload, **kept,
                                            "html": _tracked_html(payload, nid)})))
    return plan


def plan_sms(notification: Notification) -> Plan:
    """Drop suppressed numbers; one message to the others."""
    payload = notification.payload
    numbers = list(payload.get("to") or [])
    keys = {n: suppression_key(n) for n in numbers}
    blocked = _suppressed(notification, list(keys.values()))
    kept = [n for n in numbers if keys[n] not in blocked]
    plan = Plan(suppressed=[n for n in numbers if keys[n] in blocked])
    if kept:
        plan.messages.append((None, _as_is({**payload, "to": kept})))
    return plan
