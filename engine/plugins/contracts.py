"""The types a channel or provider plugin sees: plain messages in, one of four outcomes out.

Plugins reach them through engine/plugin_api.py; this module imports no model.
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC
from email.message import Message
from typing import Any, Protocol

_SECONDS = re.compile(r"[0-9]+")  # ASCII only: str.isdigit() also takes "²" and "١٢"
LONGEST_RETRY_AFTER = 365 * 86400.0  # the retry policy caps every wait far below this


@dataclass
class Attachment:
    name: str
    content_type: str
    content: bytes
    cid: str | None = None


@dataclass(frozen=True)
class DkimKey:
    """What signs a message (RFC 6376): ``d=`` domain, ``s=`` selector, a PEM private key."""

    domain: str
    selector: str
    private_key: bytes = field(repr=False)


@dataclass
class OutboundEmail:
    """One email as a provider sends it; ``mime`` is the exact message for SMTP-like providers."""

    sender: str                      # bare address (From; the envelope's too, by default)
    sender_name: str | None
    to: list[str]
    cc: list[str]
    bcc: list[str]
    subject: str
    html: str | None
    text: str | None
    reply_to: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    attachments: list[Attachment] = field(default_factory=list)
    request_delivery_receipt: bool = False
    message_id: str | None = None
    mime: Message | None = None
    # Mail from a verified domain through the service's provider: the bounce address for
    # MAIL FROM (else ``sender``) and the key an SMTP-like provider signs ``mime`` with.
    envelope_sender: str | None = None
    dkim: DkimKey | None = None

    @property
    def recipients(self) -> list[str]:
        return [*self.to, *self.cc, *self.bcc]


@dataclass
class OutboundSms:
    sender: str | None
    to: list[str]
    text: str

    @property
    def recipients(self) -> list[str]:
        return list(self.to)


@dataclass
class SendResult:
    """A provider accepted the message (for all or some recipients)."""

    provider_message_id: str | None = None
    rejected: dict[str, str] = field(default_factory=dict)  # address -> reason (permanent)
    bounced: list[str] = field(default_factory=list)        # hard bounces: suppress them


class DeliveryError(Exception):
    """Base of the provider errors the engine understands."""

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class TransientError(DeliveryError):
    """Try again later (network, 4xx SMTP, 429, 5xx HTTP)."""

    def __init__(self, message: str, *, status_code: int | None = None,
                 retry_after: float | None = None) -> None:
        super().__init__(message, status_code=status_code)
        self.retry_after = retry_after


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds from a Retry-After header (delay-seconds or an HTTP-date), else None.

    The header is the receiver's to write: anything that is not one of the two forms
    gives None (the normal backoff), never an exception that would fail the attempt
    after the receiver had already answered.
    """
    if not value:
        return None
    text = value.strip()
    if _SECONDS.fullmatch(text):
        return min(float(text), LONGEST_RETRY_AFTER)
    if not text.isascii():
        return None
    try:
        when = email.utils.parsedate_to_datetime(text)
        if when.tzinfo is None:  # an HTTP-date is always GMT ("-0000", asctime format)
            when = when.replace(tzinfo=UTC)
        seconds = when.timestamp() - (now if now is not None else time.time())
    except Exception:  # whatever email.utils makes of a receiver's text: not a date
        return None
    return min(max(0.0, seconds), LONGEST_RETRY_AFTER)


class PermanentError(DeliveryError):
    """Will never succeed as sent (bad request, bad credentials, refused content)."""


class SuppressedError(PermanentError):
    """Every recipient is undeliverable for good (hard bounce, unsubscribed); suppress them."""

    def __init__(self, message: str, recipients: list[str], *,
                 status_code: int | None = None) -> None:
        super().__init__(message, status_code=status_code)
        self.recipients = recipients


class Provider(Protocol):
    """A backend for a channel's messages: ``send`` raises a DeliveryError or returns a
    SendResult. Which channel it serves is the setting or workspace that names its URL."""

    def send(self, message: Any) -> SendResult: ...


@dataclass
class ProviderContext:
    """What the engine lends a provider: the dev inbox store and the notification's ids."""

    store_inbox_message: Callable[[dict[str, Any]], None]
    settings: Any = None


ProviderFactory = Callable[[str, ProviderContext], Provider]
