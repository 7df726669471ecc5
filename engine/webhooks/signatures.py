"""Webhook signatures (spec 6.3, 6.4, docs/api.md), for Herald and for receivers alike.

Signed string: ``{timestamp}.{deliveryId}.{rawBody}`` as exact bytes; key: the workspace
secret's UTF-8 bytes exactly as shown (D7); header: ``v1=`` + lowercase hex HMAC-SHA256.
Receivers may copy ``verify_webhook``: it needs only the standard library.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Mapping

TOLERANCE_SECONDS = 300


def sign(secret: str, timestamp: int, delivery_id: str, body: bytes) -> str:
    message = f"{timestamp}.{delivery_id}.".encode() + body
    return "v1=" + hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


def verify_webhook(secret: str, raw_body: bytes, headers: Mapping[str, str], *,
                   now: float | None = None, tolerance: int = TOLERANCE_SECONDS) -> bool:
    """True when the signature matches the raw body and the timestamp is fresh.

    Dedupe on ``X-Service-Delivery-Id`` after this returns True: retries reuse it.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    delivery_id = lowered.get("x-service-delivery-id", "")
    signature = lowered.get("x-service-signature", "")
    try:
        timestamp = int(lowered.get("x-service-timestamp", ""))
    except ValueError:
        return False
    if not delivery_id or abs((now if now is not None else time.time()) - timestamp) > tolerance:
        return False
    expected = sign(secret, timestamp, delivery_id, raw_body)
    # Equal lengths first, then a constant-time comparison (spec 6.4, docs/api.md).
    return len(signature) == len(expected) and hmac.compare_digest(signature, expected)
