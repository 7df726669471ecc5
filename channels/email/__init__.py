"""The email channel: one OutboundEmail (structured fields and the MIME) per message."""

from __future__ import annotations

import base64
from email.utils import make_msgid
from typing import Any

from channels.email.mime import ascii_domain, build_mime, one_line
from engine.plugin_api import Attachment, OutboundEmail, hookimpl, html_to_text


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


class EmailChannel:
    """Builds one OutboundEmail (structured fields and the MIME) per message to send."""

    name = "email"
    needs_provider = True

    def build(self, payload: dict[str, Any]) -> OutboundEmail:
        sender = ascii_domain(payload["from"]["address"])
        email = OutboundEmail(
            sender=sender,
            sender_name=one_line(payload["from"].get("name") or "") or None,
            to=[ascii_domain(a) for a in payload.get("to") or []],
            cc=[ascii_domain(a) for a in payload.get("cc") or []],
            bcc=[ascii_domain(a) for a in payload.get("bcc") or []],
            subject=one_line(payload.get("subject") or ""),  # every provider sends one line
            html=payload.get("html"),
            # The API leaves the text to the worker: the conversion is off the request path.
            text=payload.get("text") if payload.get("text") is not None or payload.get(
                "html") is None else html_to_text(payload["html"]),
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
