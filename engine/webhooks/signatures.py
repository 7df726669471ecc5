"""Webhook signatures (spec 6.3, 6.4, docs/api.md), for Herald and for receivers alike.

Signed string: ``{timestamp}.{deliveryId}.{rawBody}`` as exact bytes; key: the workspace
secret's UTF-8 bytes exactly as shown (D7); header: ``v1=`` + lowercase hex HMAC-SHA256.
Receivers may copy ``verify_webhook``: it needs only the standard library.

The spec's string is ambiguous to a receiver that takes the headers as they come: the
body's prefix up to its first ``.`` moved into the delivery id still verifies (with a new
dedupe key), and `` +<ts> `` parses as a timestamp. So verification is strict: Herald's
delivery ids are lower-case UUIDs and its timestamps plain digits, and anything else is
refused. Beside ``v1``, ``X-Herald-Signature: v2=`` signs length-prefixed fields that
include the destination URL: the stronger check (a delivery for one receiver of a
workspace cannot be replayed at another).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from collections.abc import Mapping

TOLERANCE_SECONDS = 300
DELIVERY_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TIMESTAMP = re.compile(r"[0-9]{1,12}")
V2_HEADER = "X-Herald-Signature"


def sign(secret: str, timestamp: int, delivery_id: str, body: bytes) -> str:
    message = f"{timestamp}.{delivery_id}.".encode() + body
    return "v1=" + hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


def verify_webhook(secret: str, raw_body: bytes, headers: Mapping[str, str], *,
                   now: float | None = None, tolerance: int = TOLERANCE_SECONDS) -> bool:
    """True when the signature matches the raw body and the timestamp is fresh.

    Dedupe on ``X-Service-Delivery-Id`` after this returns True: retries reuse it.
    """
    fields = _strict_fields(headers, now, tolerance)
    if fields is None:
        return False
    timestamp, delivery_id, signature = fields[0], fields[1], fields[2]["x-service-signature"]
    expected = sign(secret, timestamp, delivery_id, raw_body)
    # Equal lengths first, then a constant-time comparison (spec 6.4, docs/api.md).
    return len(signature) == len(expected) and hmac.compare_digest(signature, expected)


def _strict_fields(headers: Mapping[str, str], now: float | None,
                   tolerance: int) -> tuple[int, str, dict[str, str]] | None:
    """Timestamp and delivery id as Herald writes them (plain digits, a lower-case UUID),
    fresh; None for anything else."""
    lowered = {k.lower(): v for k, v in headers.items()}
    raw_timestamp = lowered.get("x-service-timestamp", "")
    delivery_id = lowered.get("x-service-delivery-id", "")
    if not (TIMESTAMP.fullmatch(raw_timestamp) and DELIVERY_ID.fullmatch(delivery_id)):
        return None
    timestamp = int(raw_timestamp)
    if abs((now if now is not None else time.time()) - timestamp) > tolerance:
        return None
    lowered.setdefault("x-service-signature", "")
    lowered.setdefault(V2_HEADER.lower(), "")
    return timestamp, delivery_id, lowered


def _field(value: bytes) -> bytes:
    return str(len(value)).encode() + b":" + value + b","


def sign_v2(secret: str, timestamp: int, delivery_id: str, url: str, body: bytes) -> str:
    """``v2=`` + hex HMAC-SHA256 of length-prefixed fields (netstrings): a scheme label, the
    timestamp, the delivery id, the destination URL as given on the send, and the body. No
    field can borrow bytes from the next, and the URL binds a delivery to its receiver."""
    message = b"".join(_field(f) for f in (
        b"herald-webhook-v2", str(timestamp).encode(), delivery_id.encode(),
        url.encode("utf-8"), body))
    return "v2=" + hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


def verify_webhook_v2(secret: str, raw_body: bytes, headers: Mapping[str, str], url: str, *,
                      now: float | None = None, tolerance: int = TOLERANCE_SECONDS) -> bool:
    """The stronger check: ``X-Herald-Signature`` over the body and ``url``, the exact
    destination URL this receiver was configured with (webhookOptions.urlOverride)."""
    fields = _strict_fields(headers, now, tolerance)
    if fields is None:
        return False
    timestamp, delivery_id, lowered = fields
    given = lowered[V2_HEADER.lower()]
    expected = sign_v2(secret, timestamp, delivery_id, url, raw_body)
    return len(given) == len(expected) and hmac.compare_digest(given, expected)
