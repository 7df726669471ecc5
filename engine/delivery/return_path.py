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
from dataclasses import dataclass

from engine import runtime
from engine.formats.addresses import suppression_key

LOCAL_PREFIX = "bounces+"
_TAG_CHARS = 10
_RECIPIENT_CHARS = 8
# bounces+<notification>-<recipient>-<tag>: 60 characters, under the 64 a local part has.
_LOCAL = re.compile(r"^bounces\+([0-9a-f]{32})-(?:([a-z2-7]{8})-)?([a-z2-7]{10})$")


@dataclass(frozen=True)
class ReturnPath:
    """What a VERP address names: the notification, and the recipient it was made for
    (``recipient_tag``; None for an address made before envelopes were per recipient)."""

    notification_id: str
    recipient_tag: str | None


def _digest(text: str, length: int) -> str:
    key = hashlib.sha256(b"herald return-path " + runtime.settings().secret_key.encode()).digest()
    digest = hmac.new(key, text.encode("utf-8"), hashlib.sha256).digest()
    return base64.b32encode(digest).decode("ascii").lower()[:length]


def _tag(signed: str) -> str:
    return _digest(signed, _TAG_CHARS)


def recipient_tag(notification_id: str | uuid.UUID, recipient: str) -> str:
    """The recipient part of a VERP address: whose bounce the address may carry."""
    hex_id = uuid.UUID(str(notification_id)).hex
    return _digest(f"recipient {hex_id} {suppression_key(recipient)}", _RECIPIENT_CHARS)


def envelope_sender(notification_id: str | uuid.UUID, host: str,
                    recipient: str | None = None) -> str:
    """The MAIL FROM address of a notification's mail to ``recipient``, at ``host`` (the
    return-path host). One address per recipient: a report that comes back to it speaks
    for that recipient only, so a co-recipient who reads the envelope (Return-Path) cannot
    bounce or complain for another (issue 37)."""
    hex_id = uuid.UUID(str(notification_id)).hex
    signed = hex_id if recipient is None else f"{hex_id}-{recipient_tag(hex_id, recipient)}"
    return f"{LOCAL_PREFIX}{signed}-{_tag(signed)}@{host.rstrip('.').lower()}"


def return_path_of(address: str) -> ReturnPath | None:
    """What an envelope address names, or None when it is not one of ours (another shape,
    or a tag that does not verify). Case-insensitive, as mail servers are."""
    local, _, _host = address.strip().strip("<>").rpartition("@")
    match = _LOCAL.match(local.lower())
    if match is None:
        return None
    hex_id, rcpt, tag = match.groups()
    signed = hex_id if rcpt is None else f"{hex_id}-{rcpt}"
    if not hmac.compare_digest(tag, _tag(signed)):
        return None
    return ReturnPath(str(uuid.UUID(hex_id)), rcpt)


def notification_of(address: str) -> str | None:
    """The notification id an envelope address names, or None when it is not one of ours."""
    found = return_path_of(address)
    return found.notification_id if found else None
