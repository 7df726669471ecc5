"""Reading bounce and complaint reports that arrive by mail: DSNs (RFC 3464) and ARF
feedback reports (RFC 5965) with the standard library's parser, and the bounce shapes of
mail servers that do not follow RFC 3464 with flufl.bounce (Mailman's detectors).

Nothing here trusts the report: it yields what the report claims, and the caller records
only claims about its notification's own recipients (engine/reports/events.py).
"""

from __future__ import annotations

import email
import email.policy
import re
from dataclasses import dataclass, field
from email.message import Message

from flufl.bounce import all_failures

from engine.reports.events import Reported

MAX_BYTES = 1024 * 1024
MAX_PARTS = 200
_STATUS = re.compile(r"\b([245])\.\d{1,3}\.\d{1,3}\b")
_MESSAGE_ID = re.compile(r"<[^<>\s]{1,250}>")


class MalformedReport(ValueError):
    """Mail that is no report we can read: logged and dropped by the listener."""


@dataclass
class MailReport:
    reports: list[Reported] = field(default_factory=list)
    message_ids: set[str] = field(default_factory=set)  # of the original message, no <>


def _address(value: str | None) -> str | None:
    """``rfc822; user@example.com`` -> ``user@example.com``."""
    if not value:
        return None
    text = value.partition(";")[2] if ";" in value else value
    text = text.strip().strip("<>").strip()
    return text if "@" in text and len(text) <= 320 and not any(c.isspace() for c in text) \
        else None


def _header(block: Message, name: str) -> str:
    return " ".join(str(block.get(name, "")).split())


def _dsn(part: Message, out: MailReport) -> None:
    blocks = part.get_payload()
    if not isinstance(blocks, list) or not blocks:
        raise MalformedReport("a message/delivery-status part without fields")
    envelope_id = _header(blocks[0], "Original-Envelope-Id")
    if envelope_id:
        out.message_ids.add(envelope_id.strip("<>"))
    for block in blocks[1:]:
        recipient = _address(_header(block, "Original-Recipient")) or \
            _address(_header(block, "Final-Recipient"))
        if recipient is None:  # Final-Recipient is required (RFC 3464 2.3.2)
            continue
        action = _header(block, "Action").lower()
        status = _STATUS.search(_header(block, "Status"))
        diagnostic = _header(block, "Diagnostic-Code") or None
        detail = " ".join(filter(None, (status.group(0) if status else None, diagnostic)))
        if action == "failed":
            kind = "soft_bounced" if status and status.group(1) == "4" else "bounced"
        elif action == "delayed":
            kind = "deferred"
        elif action in ("delivered", "relayed", "expanded"):
            kind = "delivered"
        else:
            continue
        out.reports.append(Reported(kind, recipient, "dsn", detail or action))


def _arf(part: Message, out: MailReport) -> None:
    inner = part.get_payload()
    fields = inner[0] if isinstance(inner, list) and inner else part
    feedback = _header(fields, "Feedback-Type").lower() or "abuse"
    if feedback not in ("abuse", "fraud", "virus", "other"):
        return  # not-spam, auth-failure: nothing about the recipient's consent
    recipient = _address(_header(fields, "Original-Rcpt-To"))
    out.reports.append(Reported("complained", recipient, "arf",
                                f"feedback-type {feedback}"))


def _original(part: Message, out: MailReport) -> None:
    """The returned original message (or its headers): its Message-ID."""
    inner = part.get_payload()
    message = inner[0] if isinstance(inner, list) and inner else None
    if message is None and isinstance(inner, str):
        message = email.message_from_string(inner)
    if isinstance(message, Message):
        found = _MESSAGE_ID.search(str(message.get("Message-ID", "")))
        if found:
            out.message_ids.add(found.group(0).strip("<>"))


def parse(raw: bytes) -> MailReport:
    """The reports a DSN or ARF message makes; MalformedReport when it is neither."""
    if len(raw) > MAX_BYTES:
        raise MalformedReport("larger than a report can be")
    message = email.message_from_bytes(raw, policy=email.policy.compat32)
    out = MailReport()
    kinds: set[str] = set()
    for count, part in enumerate(message.walk()):
        if count > MAX_PARTS:
            raise MalformedReport("too many MIME parts")
        kind = part.get_content_type()
        kinds.add(kind)
        if kind == "message/delivery-status":
            _dsn(part, out)
        elif kind == "message/feedback-report":
            _arf(part, out)
        elif kind in ("message/rfc822", "text/rfc822-headers"):
            _original(part, out)
    if not kinds & {"message/delivery-status", "message/feedback-report"}:
        _heuristic(message, out)
    if not out.reports:
        raise MalformedReport("no DSN, no feedback report, no bounce a detector recognises")
    return out


def _heuristic(message: Message, out: MailReport) -> None:
    """A bounce in a shape of its own (qmail, Exim, Exchange...): flufl.bounce's detectors.
    Permanent failures are hard bounces; temporary ones only a delay."""
    try:
        temporary, permanent = all_failures(message)
    except Exception as err:  # a detector's own bug on hostile input
        raise MalformedReport(f"bounce detectors failed: {type(err).__name__}") from None
    for addresses, kind in ((permanent, "bounced"), (temporary - permanent, "deferred")):
        for address in sorted(addresses):
            text = address.decode("utf-8", "replace") if isinstance(address, bytes) else address
            if (found := _address(text)) is not None:
                out.reports.append(Reported(kind, found, "dsn", "detected bounce"))
