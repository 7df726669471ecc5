"""Postmark's webhooks: Bounce, SpamComplaint and Delivery, read and authenticated here,
beside the provider (served at /api/inbound/postmark/<workspace id>, docs/reports.md).

A call carries the workspace's inbound secret for Postmark in the URL (basic auth, as
Postmark's settings page takes it); Herald makes, keeps and rotates the secret, prints the
URL and refuses a call without it before this receiver reads anything.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from engine.plugin_api import InboundCall, InboundRefused, ProviderEvent, Reported

# Postmark bounce types: the address will never work; or it may work later.
HARD = {"HardBounce", "BadEmailAddress", "ManuallyDeactivated"}
SOFT = {"SoftBounce", "Transient", "DnsError", "Undeliverable", "Blocked", "DMARCPolicy"}


class PostmarkEvents:
    """The receiver of a workspace's Postmark webhook."""

    per_workspace = True
    secret_in = "basic"
    label = "Postmark"
    acknowledgement = "recorded"

    def events(self, call: InboundCall) -> list[ProviderEvent]:
        payload = call.json()
        if not isinstance(payload, dict):
            raise InboundRefused(400, "The body is not a JSON object.")
        found = read(payload)
        return [found] if found is not None else []


def _when(value: Any) -> dt.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        when = dt.datetime.fromisoformat(value.replace("Z", "+00:00")[:32])
    except ValueError:
        return None
    if when.tzinfo is not None:
        when = when.astimezone(dt.UTC).replace(tzinfo=None)
    return when


def _text(value: Any, limit: int = 1000) -> str | None:
    return str(value)[:limit] if value not in (None, "") else None


def read(payload: Any) -> ProviderEvent | None:
    """(Postmark MessageID, the report) of one webhook body; None for a record type or
    bounce type that says nothing about deliverability (an auto-responder, a subscribe)."""
    if not isinstance(payload, dict) or not isinstance(payload.get("MessageID"), str):
        return None
    record = payload.get("RecordType")
    message_id = payload["MessageID"]
    if record == "Delivery":
        recipient = _text(payload.get("Recipient"), 320)
        return message_id, Reported("delivered", recipient, "postmark",
                                    _text(payload.get("Details")),
                                    f"postmark:delivery:{message_id}:{recipient}",
                                    _when(payload.get("DeliveredAt")))
    kind = None
    if record == "SpamComplaint" or payload.get("Type") == "SpamComplaint":
        kind = "complained"
    elif record == "Bounce" and payload.get("Type") in HARD:
        kind = "bounced"
    elif record == "Bounce" and payload.get("Type") in SOFT:
        kind = "soft_bounced"
    if kind is None:
        return None
    detail = " ".join(filter(None, (_text(payload.get("Type"), 40),
                                    _text(payload.get("Description")),
                                    _text(payload.get("Details")))))
    return message_id, Reported(kind, _text(payload.get("Email"), 320), "postmark", detail,
                                f"postmark:{record}:{payload.get('ID')}",
                                _when(payload.get("BouncedAt")))
