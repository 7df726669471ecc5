"""The email channel: MIME built with the standard library from a rendered payload."""

from __future__ import annotations

import base64
from email.headerregistry import Address
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import formataddr, formatdate, make_msgid
from typing import Any

from engine.contracts import Attachment, OutboundEmail
from engine.hookspecs import hookimpl

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


def build_mime(email: OutboundEmail, payload: dict[str, Any]) -> EmailMessage:
    """text+html alternative; cid images related to the html; other files mixed around it."""
    msg = EmailMessage(policy=SMTP)
    msg["From"] = formataddr((email.sender_name or "", email.sender))
    if email.to:
        msg["To"] = ", ".join(email.to)
    if email.cc:
        msg["Cc"] = ", ".join(email.cc)
    # Bcc never appears in the headers: it lives only in the SMTP envelope.
    if email.reply_to:
        msg["Reply-To"] = email.reply_to
    msg["Subject"] = email.subject
    msg["Date"] = formatdate(usegmt=True)
    msg["Message-ID"] = email.message_id
    priority = payload.get("priority")
    if priority in PRIORITY_HEADERS:
        msg["X-Priority"], msg["Importance"] = PRIORITY_HEADERS[priority]
    if payload.get("sensitivity") in SENSITIVITY:
        msg["Sensitivity"] = SENSITIVITY[payload["sensitivity"]]
    if payload.get("requestReadReceipt"):
        msg["Disposition-Notification-To"] = str(Address(addr_spec=email.sender))
    for name, value in email.headers.items():
        msg[name] = value

    msg.set_content(email.text or "", subtype="plain", charset="utf-8")
    if email.html is not None:
        msg.add_alternative(email.html, subtype="html", charset="utf-8")
    inline = [a for a in email.attachments if a.cid]
    files = [a for a in email.attachments if not a.cid]
    if inline and email.html is not None:
        html_part = msg.get_payload()[-1]
        for item in inline:
            maintype, _, subtype = item.content_type.partition("/")
            html_part.add_related(item.content, maintype=maintype,
                                  subtype=subtype or "octet-stream", cid=f"<{item.cid}>",
                                  filename=item.name, disposition="inline")
    else:
        files = email.attachments
    for item in files:
        maintype, _, subtype = item.content_type.partition("/")
        msg.add_attachment(item.content, maintype=maintype, subtype=subtype or "octet-stream",
                           filename=item.name)
    return msg


class EmailChannel:
    """Builds one OutboundEmail (structured fields and the MIME) per message to send."""

    name = "email"
    needs_provider = True

    def build(self, payload: dict[str, Any]) -> OutboundEmail:
        sender = payload["from"]["address"]
        email = OutboundEmail(
            sender=sender,
            sender_name=payload["from"].get("name"),
            to=list(payload.get("to") or []),
            cc=list(payload.get("cc") or []),
            bcc=list(payload.get("bcc") or []),
            subject=payload.get("subject") or "",
            html=payload.get("html"),
            text=payload.get("text"),
            reply_to=payload.get("replyTo"),
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
