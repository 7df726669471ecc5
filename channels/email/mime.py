"""The email channel's MIME: text and HTML alternatives, inline images, attachments, and
headers that stay one line whatever a tag put in them."""

from __future__ import annotations

import binascii
import functools
import random
import re
import time
from email.header import Header
from email.message import Message
from email.utils import formataddr, formatdate, parseaddr, quote
from typing import Any

from channels.email.attachment_parts import AttachmentParts, encoded_part
from engine.plugin_api import (
    CONTROLS,
    PLAIN_ADDRESS,
    Attachment,
    OutboundEmail,
    ascii_form,
)

PRIORITY_HEADERS = {
    "High": ("1 (Highest)", "high"),
    "Normal": ("3 (Normal)", "normal"),
    "Low": ("5 (Lowest)", "low"),
}
# RFC 2156 Sensitivity values; "Normal" means no header at all.
SENSITIVITY = {"Personal": "Personal", "Private": "Private",
               "Confidential": "Company-Confidential"}


def one_line(value: str) -> str:
    """Line breaks and other control characters as spaces: a subject rendered from tags, a
    display name or a header value stays one header line and can neither add a header of
    its own nor break the message, whatever a stored payload or a plugin hands over (the
    API refuses them in what it is given; a tag can still bring them into a subject)."""
    if value.isprintable():
        # Holds none of them (all are unprintable), found by one pass in C: the pattern's
        # search tries a match at every position, about 2 µs for a one-click unsubscribe
        # link, once a recipient of a fan-out.
        return value
    return CONTROLS.sub(" ", value) if CONTROLS.search(value) else value


# RFC 5322 2.1.1: a line is at most 998 octets. compat32 folds only at white space, so a
# longer word (a 3,000-character tag in a subject) would stay one line and the relay would
# refuse the whole message ("500 Line too long"); such a value goes out as RFC 2047
# encoded-words, which fold anywhere. 900 leaves room for the longest header name (76).
LONGEST_WORD = 900
_LONG_WORD = re.compile(rf"\S{{{LONGEST_WORD + 1},}}")


def _header(value: str) -> str | Header:
    value = one_line(value)
    if value.isascii() and not _LONG_WORD.search(value):
        return value
    return Header(value, "utf-8")


def ascii_domain(value: str) -> str:
    """``addr`` or ``Name <addr>`` with an internationalised domain in its ASCII form (IDNA
    2008, as the API's validator checked it): every server takes that, where a UTF-8
    domain would need SMTPUTF8. A non-ASCII local part has no such form and stays."""
    if value.isascii():
        return value
    address = parseaddr(value)[1]
    domain = address.rpartition("@")[2]
    encoded = ascii_form(domain)
    if encoded == domain:
        return value
    head, _, tail = value.rpartition(f"@{domain}")  # the address's, after any name
    return f"{head}@{encoded}{tail}"


@functools.lru_cache(maxsize=64)  # a fan-out's sender, the same in every message
def _mailbox(name: str, address: str) -> str:
    name = one_line(name)
    if address.isascii():
        return formataddr((name, address), charset="utf-8")
    # A non-ASCII local part: the header is UTF-8 as it stands (RFC 6532, with SMTPUTF8).
    return f'"{quote(name)}" <{address}>' if name else address


def _address(value: str) -> str:
    if PLAIN_ADDRESS.fullmatch(value):
        return value
    return _mailbox(*parseaddr(value))


def _address_list(values: list[str]) -> str:
    addresses = [_address(v) for v in values]
    # UTF-8 headers skip compat32's folding (_FastGenerator): one address a line instead.
    return ", ".join(addresses) if all(a.isascii() for a in addresses) else ",\n ".join(
        addresses)


def _boundary() -> str:
    """Set up front: the generator would otherwise compile a regex per message to pick one.
    Every part is base64, whose lines never hold "=_", so no body line can be the boundary
    line: it needs to differ between messages, not to be secret. Python's own generator,
    not the kernel's: a read of os.urandom releases the interpreter lock, which a fan-out's
    lanes then wait to take back, once a recipient (docs/performance.md, "Fan-out")."""
    return f"=_{random.getrandbits(64):016x}"  # short: the Content-Type header stays one line


def _add(msg: Message, headers: list[tuple[str, Any]]) -> None:
    """``msg[name] = value`` for each, as compat32 does it: its ``__setitem__`` asks the
    policy for a count limit (none) and a stored form (the pair as given) before it appends
    the pair; a fan-out's message sets a dozen headers, each of them three calls."""
    msg._headers.extend(headers)  # compat32's own list of pairs


def _text_part(text: str, subtype: str) -> Message:
    """What MIMEText(text, subtype, "utf-8") builds, without its parameter parsing (a
    fan-out builds two per recipient): utf-8 bodies are base64 in compat32."""
    part = Message()
    _add(part, [("Content-Type", f'text/{subtype}; charset="utf-8"'), ("MIME-Version", "1.0"),
                ("Content-Transfer-Encoding", "base64")])
    part.set_payload(base64_lines(text.encode("utf-8")))
    return part


def base64_lines(data: bytes) -> str:
    """What ``email.base64mime.body_encode`` gives (76-character lines, each ended by a
    newline), encoded in one call instead of one a line: an HTML part is encoded once a
    recipient of a fan-out, and the 13 KB of a typical body took 74 µs, now 42."""
    encoded = binascii.b2a_base64(data, newline=False).decode("ascii")
    return "".join([encoded[i:i + 76] + "\n" for i in range(0, len(encoded), 76)])


def _multipart(subtype: str, parts: list[Message]) -> Message:
    """What MIMEMultipart(subtype, boundary=_boundary(), _subparts=parts) builds, without
    its rewriting of the Content-Type header to set the boundary."""
    msg = Message()
    _add(msg, [("Content-Type", f'multipart/{subtype}; boundary="{_boundary()}"'),
               ("MIME-Version", "1.0")])
    msg.set_payload(parts)
    return msg


_date: tuple[int, str] = (0, "")


def _date_now() -> str:
    """The Date header of now: the same text for the whole second (a fan-out sends hundreds
    a second), so written once a second."""
    global _date
    second = int(time.time())
    made = _date
    if made[0] != second:
        made = _date = (second, formatdate(second, usegmt=True))
    return made[1]


def _attachment_part(item: Attachment, inline: bool,
                     parts: AttachmentParts | None) -> Message:
    name = one_line(item.name)
    if parts is not None:  # one part for every message of the notification
        return parts.part(item, inline, name)
    return encoded_part(item, inline, name)


def build_mime(email: OutboundEmail, payload: dict[str, Any],
               parts: AttachmentParts | None = None) -> Message:
    """text+html alternative; cid images related to the html; other files mixed around it.
    ``parts``: the notification's attachment parts, shared with its other messages.

    Built with the compat32 classes: the modern header registry parses every header it is
    given and costs several times more per message, which a 1,000-recipient fan-out feels.
    """
    inline = [a for a in email.attachments if a.cid] if email.html is not None else []
    files = [a for a in email.attachments if a not in inline]
    # A fan-out's recipients share one text part, encoded and written once: inside a
    # multipart only, since a lone text part is the message and takes its headers.
    if parts is not None and email.text is not None and (email.html is not None or files):
        text = parts.text(email.text)
    else:
        text = _text_part(email.text or "", "plain")
    if email.html is None:
        body: Message = text
    else:
        html: Message = _text_part(email.html, "html")
        if inline:
            html = _multipart("related", [
                html, *(_attachment_part(a, True, parts) for a in inline)])
        body = _multipart("alternative", [text, html])
    msg = body if not files else _multipart("mixed", [
        body, *(_attachment_part(a, False, parts) for a in files)])
    headers: list[tuple[str, Any]] = [("From", _mailbox(email.sender_name or "", email.sender))]
    if email.to:
        headers.append(("To", _address_list(email.to)))
    if email.cc:
        headers.append(("Cc", _address_list(email.cc)))
    # Bcc never appears in the headers: it lives only in the SMTP envelope.
    if email.reply_to:
        headers.append(("Reply-To", _address_list([email.reply_to])))
    headers += [("Subject", _header(email.subject)), ("Date", _date_now()),
                ("Message-ID", email.message_id)]
    priority = payload.get("priority")
    if priority in PRIORITY_HEADERS:
        headers += zip(("X-Priority", "Importance"), PRIORITY_HEADERS[priority], strict=True)
    if payload.get("sensitivity") in SENSITIVITY:
        headers.append(("Sensitivity", SENSITIVITY[payload["sensitivity"]]))
    if payload.get("requestReadReceipt"):
        headers.append(("Disposition-Notification-To", email.sender))
    headers += [(name, _header(value)) for name, value in email.headers.items()]
    _add(msg, headers)
    return msg
