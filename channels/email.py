"""The email channel: MIME built with the standard library from a rendered payload."""

from __future__ import annotations

import base64
import functools
import io
import re
import secrets
from email import encoders
from email.base64mime import body_encode
from email.generator import BytesGenerator
from email.header import Header
from email.message import Message
from email.mime.base import MIMEBase
from email.policy import compat32
from email.utils import formataddr, formatdate, make_msgid, parseaddr, quote
from typing import Any

from channels.plaintext import html_to_text
from engine.formats.addresses import ascii_form
from engine.formats.header_text import CONTROLS, MEDIA_TYPE
from engine.plugins.contracts import Attachment, OutboundEmail
from engine.plugins.hookspecs import hookimpl

PRIORITY_HEADERS = {
    "High": ("1 (Highest)", "high"),
    "Normal": ("3 (Normal)", "normal"),
    "Low": ("5 (Lowest)", "low"),
}
# RFC 2156 Sensitivity values; "Normal" means no header at all.
SENSITIVITY = {"Personal": "Personal", "Private": "Private",
               "Confidential": "Company-Confidential"}


def _domain(address: str) -> str:
    return address.rpartition("@")[2] or "localhost"


def _attachments(payload: dict[str, Any]) -> list[Attachment]:
    return [
        Attachment(
            name=item["name"],
            content_type=item.get("contentType") or "application/octet-stream",
            content=base64.b64decode(item.get("content") or ""),
            cid=item.get("cid") or None,
        )
        for item in payload.get("attachments") or []
    ]


def text_from_html(html: str) -> str:
    """The plain-text alternative, derived from the HTML (D6; rules in channels/plaintext.py)."""
    return html_to_text(html)


# An address that formataddr(parseaddr(...)) and smtplib.quoteaddr give back unchanged (the
# latter between angle brackets): no name, no quoting (tests/plugins/test_smtp_addresses.py).
PLAIN_ADDRESS = re.compile(r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9.-]+")
# A header value that compat32's folding writes back unchanged: printable ASCII, single
# spaces, short enough for one line (checked with the name in _FastGenerator).
_PLAIN_VALUE = re.compile(r"[!-~]+(?: [!-~]+)*")
# A value that compat32 cannot break (no white space, and none of the ";" and "," it may
# split at): too long for the name's line, it goes whole onto the next (a one-click
# unsubscribe URL on every marketing message).
_ONE_WORD = re.compile(r"[!-+\--:<-~]+")
LINE = 78


def _one_line(value: str) -> str:
    """Line breaks and other control characters as spaces: a subject rendered from tags, a
    display name or a header value stays one header line and can neither add a header of
    its own nor break the message, whatever a stored payload or a plugin hands over (the
    API refuses them in what it is given; a tag can still bring them into a subject)."""
    return CONTROLS.sub(" ", value) if CONTROLS.search(value) else value


def _header(value: str) -> str | Header:
    value = _one_line(value)
    return value if value.isascii() else Header(value, "utf-8")


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


def _mailbox(name: str, address: str) -> str:
    name = _one_line(name)
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
    Random, and every part is base64, so no body line can be the boundary line."""
    return f"=_{secrets.token_hex(8)}"  # short: the Content-Type header stays one line


def _header_bytes(msg: Message, policy: Any, nl: str) -> bytes:
    """The message's header block as compat32 writes it, with a header that folding would
    leave as it is written directly (folding runs every header through email.header.Header,
    most of a message's serialisation time; a short single-line printable value comes out
    of it unchanged)."""
    out = []
    # Only at compat32's own line length: a multipart/signed has its parts' headers written
    # unfolded (max_line_length 0), which fold_binary then does.
    fast = policy.max_line_length == LINE
    for name, value in msg.raw_items():
        if not (fast and isinstance(value, str)):
            out.append(policy.fold_binary(name, value))
        elif len(name) + len(value) + 2 <= LINE and _PLAIN_VALUE.fullmatch(value):
            out.append(f"{name}: {value}{nl}".encode("ascii"))
        elif _ONE_WORD.fullmatch(value):
            out.append(f"{name}: {nl} {value}{nl}".encode("ascii"))
        elif not value.isascii():  # an SMTPUTF8 address
            out.append(f"{name}: {value}{nl}".replace("\n ", f"{nl} ").encode("utf-8"))
        else:
            out.append(policy.fold_binary(name, value))
    out.append(nl.encode("ascii"))
    return b"".join(out)


class _FastGenerator(BytesGenerator):
    """compat32 bytes, with the header block from ``_header_bytes``."""

    def _write_headers(self, msg: Message) -> None:
        self._fp.write(_header_bytes(msg, self.policy, self._NL))


_MULTIPART = re.compile(r'multipart/(?:alternative|mixed|related); boundary="([0-9A-Za-z=_.-]+)"')
_LINE_ENDS = re.compile(r"\r\n|\r|\n")


def _direct(msg: Message, policy: Any, nl: str) -> bytes | None:
    """What the generator writes for the shapes build_mime makes of text and html (leaves
    with an ASCII payload, multiparts with a boundary and no preamble or epilogue), without
    its machinery; None for any other shape, which the generator then writes."""
    payload = msg._payload
    content_type = msg.get("Content-Type")
    if isinstance(payload, list):
        match = _MULTIPART.fullmatch(content_type) if isinstance(content_type, str) else None
        if (match is None or not payload or msg.preamble is not None
                or msg.epilogue is not None):
            return None
        parts: list[bytes] = []
        for part in payload:
            written = _direct(part, policy, nl) if isinstance(part, Message) else None
            if written is None:
                return None
            parts.append(written)
        delimiter = f"{nl}--{match[1]}{nl}".encode("ascii")
        return b"".join([_header_bytes(msg, policy, nl), delimiter[len(nl):],
                         delimiter.join(parts), f"{nl}--{match[1]}--{nl}".encode("ascii")])
    if not (isinstance(payload, str) and payload.isascii() and isinstance(content_type, str)
            and content_type.lower().startswith("text/")):
        return None
    return _header_bytes(msg, policy, nl) + _LINE_ENDS.sub(nl, payload).encode("ascii")


def message_bytes(msg: Message, linesep: str = "\r\n") -> bytes:
    """The message as it goes on the wire (CRLF line ends): what the standard library's
    BytesGenerator writes (tests/channels/test_message_bytes.py holds it to that)."""
    policy = _policy(msg.policy, linesep)
    direct = _direct(msg, policy, linesep) if msg.policy is compat32 else None
    if direct is not None:
        return direct
    out = io.BytesIO()
    _FastGenerator(out, mangle_from_=False, policy=policy).flatten(msg, linesep=linesep)
    return out.getvalue()


@functools.lru_cache(maxsize=8)
def _policy(policy: Any, linesep: str) -> Any:
    """The policy with our line ends, cloned once (policies are immutable), not per message."""
    return policy.clone(linesep=linesep)


def _text_part(text: str, subtype: str) -> Message:
    """What MIMEText(text, subtype, "utf-8") builds, without its parameter parsing (a
    fan-out builds two per recipient): utf-8 bodies are base64 in compat32."""
    part = Message()
    part["Content-Type"] = f'text/{subtype}; charset="utf-8"'
    part["MIME-Version"] = "1.0"
    part["Content-Transfer-Encoding"] = "base64"
    part.set_payload(body_encode(text.encode("utf-8")))
    return part


def _multipart(subtype: str, parts: list[Message]) -> Message:
    """What MIMEMultipart(subtype, boundary=_boundary(), _subparts=parts) builds, without
    its rewriting of the Content-Type header to set the boundary."""
    msg = Message()
    msg["Content-Type"] = f'multipart/{subtype}; boundary="{_boundary()}"'
    msg["MIME-Version"] = "1.0"
    msg.set_payload(parts)
    return msg


def _attachment_part(item: Attachment, inline: bool) -> MIMEBase:
    content_type = item.content_type.strip()
    maintype, _, subtype = (content_type if MEDIA_TYPE.fullmatch(content_type)
                            else "application/octet-stream").partition("/")
    part = MIMEBase(maintype, subtype)  # subtype: with the type's parameters
    part.set_payload(item.content)
    encoders.encode_base64(part)
    name = _one_line(item.name)
    filename = name if name.isascii() else ("utf-8", "", name)
    part.add_header("Content-Disposition", "inline" if inline else "attachment",
                    filename=filename)
    if inline:
        part["Content-ID"] = f"<{item.cid}>"
    return part


def build_mime(email: OutboundEmail, payload: dict[str, Any]) -> Message:
    """text+html alternative; cid images related to the html; other files mixed around it.

    Built with the compat32 classes: the modern header registry parses every header it is
    given and costs several times more per message, which a 1,000-recipient fan-out feels.
    """
    text = _text_part(email.text or "", "plain")
    inline = [a for a in email.attachments if a.cid] if email.html is not None else []
    files = [a for a in email.attachments if a not in inline]
    if email.html is None:
        body: Message = text
    else:
        html: Message = _text_part(email.html, "html")
        if inline:
            html = _multipart("related", [
                html, *(_attachment_part(a, inline=True) for a in inline)])
        body = _multipart("alternative", [text, html])
    msg = body if not files else _multipart("mixed", [
        body, *(_attachment_part(a, inline=False) for a in files)])
    msg["From"] = _mailbox(email.sender_name or "", email.sender)
    if email.to:
        msg["To"] = _address_list(email.to)
    if email.cc:
        msg["Cc"] = _address_list(email.cc)
    # Bcc never appears in the headers: it lives only in the SMTP envelope.
    if email.reply_to:
        msg["Reply-To"] = _address_list([email.reply_to])
    msg["Subject"] = _header(email.subject)
    msg["Date"] = formatdate(usegmt=True)
    msg["Message-ID"] = email.message_id
    priority = payload.get("priority")
    if priority in PRIORITY_HEADERS:
        msg["X-Priority"], msg["Importance"] = PRIORITY_HEADERS[priority]
    if payload.get("sensitivity") in SENSITIVITY:
        msg["Sensitivity"] = SENSITIVITY[payload["sensitivity"]]
    if payload.get("requestReadReceipt"):
        msg["Disposition-Notification-To"] = email.sender
    for name, value in email.headers.items():
        msg[name] = _header(value)
    return msg


class EmailChannel:
    """Builds one OutboundEmail (structured fields and the MIME) per message to send."""

    name = "email"
    needs_provider = True

    def build(self, payload: dict[str, Any]) -> OutboundEmail:
        sender = ascii_domain(payload["from"]["address"])
        email = OutboundEmail(
            sender=sender,
            sender_name=_one_line(payload["from"].get("name") or "") or None,
            to=[ascii_domain(a) for a in payload.get("to") or []],
            cc=[ascii_domain(a) for a in payload.get("cc") or []],
            bcc=[ascii_domain(a) for a in payload.get("bcc") or []],
            subject=_one_line(payload.get("subject") or ""),  # every provider sends one line
            html=payload.get("html"),
            # The API leaves the text to the worker: the conversion is off the request path.
            text=payload.get("text") if payload.get("text") is not None or payload.get(
                "html") is None else text_from_html(payload["html"]),
            reply_to=ascii_domain(payload["replyTo"]) if payload.get("replyTo") else None,
            headers=dict(payload.get("headers") or {}),
            attachments=_attachments(payload),
            request_delivery_receipt=bool(payload.get("requestDeliveryReceipt")),
            message_id=payload.get("messageId") or make_msgid(domain=_domain(sender)),
        )
        email.mime = build_mime(email, payload)
        return email


@hookimpl
def register_channels(register) -> None:
    register("email", EmailChannel())
