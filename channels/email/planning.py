"""The email channel's delivery plan: suppressed recipients dropped, then one message to all
(Transactional) or one per recipient with its own tracking and unsubscribe links (Marketing,
D5 in docs/api.md)."""

from __future__ import annotations

import functools
from typing import Any

from channels.email.attachment_parts import shared
from engine.plugin_api import Plan, PlannedDelivery, html_to_text, suppression_key


def _personalised(delivery: PlannedDelivery, payload: dict[str, Any], address: str,
                  recipient: str) -> dict[str, Any]:
    """One recipient's message of a marketing send: its own tracking and unsubscribe links."""
    link = delivery.unsubscribe_url(recipient)
    headers = {**(payload.get("headers") or {}),
               "List-Unsubscribe": f"<{link}>",
               "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}
    return {**payload, "to": [address], "cc": [], "bcc": [],
            "html": delivery.tracked_html(payload, recipient), "headers": headers}


def plan(delivery: PlannedDelivery) -> Plan:
    payload = delivery.payload
    lists = {k: list(payload.get(k) or []) for k in ("to", "cc", "bcc")}
    everyone = [a for values in lists.values() for a in values]
    keys = {a: suppression_key(a) for a in everyone}
    blocked = delivery.suppressed(list(keys.values()))
    result = Plan(suppressed=[a for a in everyone if keys[a] in blocked])
    kept = {k: [a for a in v if keys[a] not in blocked] for k, v in lists.items()}
    if payload.get("text") is None and payload.get("html") is not None:
        # Once per notification, from the HTML before tracking (the text has no pixel).
        payload = {**payload, "text": html_to_text(payload["html"])}
    # Decoded and encoded once, however many messages carry them.
    payload = shared(payload)
    if payload.get("emailType") == "Marketing":
        # An earlier attempt, or an earlier slice of this one (a fan-out that yielded the
        # worker, docs/delivery.md), may have settled some.
        done = delivery.settled()
        result.reached_before = "delivered" in done.values()
        for address in [a for values in kept.values() for a in values]:
            recipient = suppression_key(address)
            if recipient not in done:
                result.messages.append((recipient, functools.partial(
                    _personalised, delivery, payload, address, recipient)))
        return result
    if any(kept.values()):
        message = {**payload, **kept, "html": delivery.tracked_html(payload, None)}
        result.messages.append((None, lambda: message))
    return result
