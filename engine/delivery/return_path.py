"""VERP envelope senders: each notification's mail carries its own bounce address.

``bounces+<notification id>-<tag>@<return-path host>``: a bounce (RFC 3464 DSN) or a
complaint (RFC 5965 ARF) that comes back to that address names its notification without
reading the message. The tag is an HMAC of the id under HERALD_SECRET_KEY, so a forged
bounce cannot name a notification it did not see: only mail we sent carries a valid tag.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import uuid

from engine import runtime

LOCAL_PREFIX = "bounces+"
_TAG_CHARS = 10
_LOCAL = re.compile(r"^bounces\+([0-9a-f]{32})-([a-z2-7]{10})$")


def _tag(notification_hex: str) -> str:
    key = hashlib.sha256(b"herald return-path " + runtime.settings().secret_key.encode()).digest()
    digest = hmac.new(key, notification_hex.encode("ascii"), hashlib.sha256).digest()
    return base64.b32encode(digest).decode("ascii").lower()[:_TAG_CHARS]


def envelope_sender(notification_id: str | uuid.UUID, host: str) -> str:
    """The MAIL FROM address of a notification's mail, at ``host`` (the return-path host)."""
    hex_id = uuid.UUID(str(notification_id)).hex
    return f"{LOCAL_PREFIX}{hex_id}-{_tag(hex_id)}@{host.rstrip('.').lower()}"


def notification_of(address: str) -> str | None:
    """The notification id an envelope address names, or None when it is not one of ours
    (another shape, or a tag that does not verify). Case-insensitive, as mail servers are."""
    local, _, _host = address.strip().strip("<>").rpartition("@")
    match = _LOCAL.match(local.lower())
    if match is None:
        return None
    hex_id, tag = match.groups()
    if not hmac.compare_digest(tag, _tag(hex_id)):
        return None
    return str(uuid.UUID(hex_id))
