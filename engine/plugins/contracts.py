"""The types a channel or provider plugin sees: plain messages in, one of four outcomes out.

Plugins reach them through engine/plugin_api.py; this module imports no model.
"""

from __future__ import annotations

import email.utils
import re
import socket
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
    # Each recipient's own envelope sender (VERP per recipient, docs/delivery.md), when the
    # message has several: an SMTP-like provider sends one transaction per recipient, each
    # with its MAIL FROM; a provider that has no envelope ignores it.
    envelope_senders: dict[str, str] | None = None
    # The recipients of this transaction only (RCPT TO), when a provider split the message.
    envelope_recipients: list[str] | None = None

    @property
    def recipients(self) -> list[str]:
        if self.envelope_recipients is not None:
            return list(self.envelope_recipients)
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
    status_code: int | None = None         # an HTTP answer's status, kept on the attempt
    response_excerpt: str | None = None    # what it answered, kept on the attempt (truncated)


class DeliveryError(Exception):
    """Base of the provider errors the engine understands.

    ``reason``: a short fixed phrase ("connection refused", "timed out", "TLS",
    "authentication", ...) that may be shown to a workspace's people where the message
    itself may not: the message can carry what a server or vendor said (docs/web.md).
    """

    reason: str | None = None
    response_excerpt: str | None = None  # what a receiver answered, kept on the attempt

    def __init__(self, message: str, *, status_code: int | None = None,
                 reason: str | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code
        if reason is not None:
            self.reason = reason


class TransientError(DeliveryError):
    """Try again later (network, 4xx SMTP, 429, 5xx HTTP)."""

    def __init__(self, message: str, *, status_code: int | None = None,
                 retry_after: float | None = None, reason: str | None = None) -> None:
        super().__init__(message, status_code=status_code, reason=reason)
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


class DestinationRefused(PermanentError):
    """Herald itself refused to connect: the host breaks the destination rules a
    workspace's own provider obeys (spec 6.1, docs/delivery.md). The message is Herald's
    own (the rule), never a server's."""

    reason = "refused by Herald"


class DestinationUnreachable(TransientError):
    """The provider's host could not be resolved now: retried as any network failure."""

    reason = "host not found"


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


class Egress(Protocol):
    """How a workspace's own provider reaches the network (docs/delivery.md, "Where a
    workspace's provider may connect"): every host judged by spec 6.1's address rules and
    the connection pinned to the address judged. Raises DestinationRefused for a host the
    rules refuse, DestinationUnreachable when it cannot be resolved."""

    def connect(self, host: str, port: int, timeout: float | None) -> socket.socket:
        """A TCP connection to ``host``:``port`` at an address the rules allow."""
        ...

    def check_url(self, url: str) -> None:
        """An HTTP vendor's endpoint: https:// on port 443 (http:// and any port only to
        loopback, with private destinations allowed), the addresses judged."""
        ...


@dataclass
class ProviderContext:
    """What the engine lends a provider: the dev inbox store, the settings, and for a
    workspace's own provider its ``egress`` (None: the operator's own setting, trusted)."""

    store_inbox_message: Callable[[dict[str, Any]], None]
    settings: Any = None
    egress: Egress | None = None


ProviderFactory = Callable[[str, ProviderContext], Provider]
