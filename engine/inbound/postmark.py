"""Postmark's webhooks: Bounce, SpamComplaint and Delivery, authenticated by a secret of
the workspace in the webhook URL (basic auth, as Postmark's settings page takes it).

The secret is derived from HERALD_SECRET_KEY and the workspace id, so there is nothing to
store; `herald inbound postmark-url --workspace ID` prints the URL to paste into Postmark.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
from typing import Any

from engine import runtime
from engine.reports.events import Reported

# Postmark bounce types: the address will never work; or it may work later.
HARD = {"HardBounce", "BadEmailAddress", "ManuallyDeactivated"}
SOFT = {"SoftBounce", "Transient", "DnsError", "Undeliverable", "Blocked", "DMARCPolicy"}
USER = "herald"


def secret(workspace_id: Any) -> str:
    """The workspace's Postmark webhook password."""
    key = runtime.settings().secret_key.encode()
    message = f"herald postmark webhook {str(workspace_id).lower()}".encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()[:40]


def webhook_url(workspace_id: Any) -> str:
    base = runtime.settings().public_url.rstrip("/")
    scheme, _, rest = base.partition("://")
    return f"{scheme}://{USER}:{secret(workspace_id)}@{rest}/api/inbound/postmark/{workspace_id}"


def authentic(workspace_id: Any, password: str | None) -> bool:
    """Whether ``password`` is the workspace's secret (compared in constant time)."""
    return bool(password) and hmac.compare_digest(password.encode(),
                                                  secret(workspace_id).encode())


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


def read(payload: Any) -> tuple[str, Reported] | None:
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
