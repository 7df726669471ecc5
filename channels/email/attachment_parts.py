"""A notification's attachments, decoded and base64-encoded once and shared by the message
of every recipient: a Marketing fan-out builds one message per recipient, and encoding a
1 MiB attachment again for each of 1,000 of them cost most of the worker's time (issue #30).

The delivery plan (channels/email/planning.py) puts one ``AttachmentParts`` in the payload
under ``PARTS_KEY``; ``EmailChannel.build`` takes the decoded attachments and their MIME
parts from it. Without it (a preview, a test send built directly) each message decodes and
encodes its own.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Mapping
from email import encoders
from email.base64mime import body_encode
from typing import Any

from engine.plugin_api import MEDIA_TYPE, Attachment, SharedPart

# Not a field of the stored payload: added by the plan, in the worker's memory only.
PARTS_KEY = "_attachmentParts"


def decoded(payload: Mapping[str, Any]) -> list[Attachment]:
    """The payload's attachments with their content decoded."""
    return [
        Attachment(
            name=item["name"],
            content_type=item.get("contentType") or "application/octet-stream",
            content=base64.b64decode(item.get("content") or ""),
            cid=item.get("cid") or None,
        )
        for item in payload.get("attachments") or []
    ]


def encoded_part(item: Attachment, inline: bool, name: str) -> SharedPart:
    """One attachment as a base64 MIME part (``name``: its filename, already one line)."""
    content_type = item.content_type.strip()
    maintype, _, subtype = (content_type if MEDIA_TYPE.fullmatch(content_type)
                            else "application/octet-stream").partition("/")
    part = SharedPart(maintype, subtype)  # subtype: with the type's parameters
    part.set_payload(item.content)
    encoders.encode_base64(part)
    filename = name if name.isascii() else ("utf-8", "", name)
    part.add_header("Content-Disposition", "inline" if inline else "attachment",
                    filename=filename)
    if inline:
        part["Content-ID"] = f"<{item.cid}>"
    return part


def text_part(text: str, subtype: str) -> SharedPart:
    """What MIMEText(text, subtype, "utf-8") builds (utf-8 bodies are base64 in compat32),
    as a part many messages can hold."""
    part = SharedPart("text", subtype, charset="utf-8")
    part["Content-Transfer-Encoding"] = "base64"
    part.set_payload(body_encode(text.encode("utf-8")))
    return part


class AttachmentParts:
    """One notification's attachments and their parts, each made once, when the first
    message is built (lanes build messages at once: the first to ask makes it, the others
    wait). Content that does not decode fails each message as it is built, as before.

    Also the plain-text part, the same in every recipient's message of a fan-out (the HTML
    differs: each carries its own signed links)."""

    def __init__(self, payload: Mapping[str, Any]) -> None:
        self._payload = payload
        self._attachments: list[Attachment] | None = None
        self._parts: dict[tuple[int, bool], SharedPart] = {}
        self._text: tuple[str, SharedPart] | None = None
        self._lock = threading.Lock()

    def text(self, text: str) -> SharedPart:
        """The plain-text part of ``text``: made once for the notification's text, made
        anew for any other (a message whose text is its own)."""
        made = self._text
        if made is not None and made[0] is text:
            return made[1]
        part = text_part(text, "plain")
        if text is self._payload.get("text"):
            self._text = (text, part)  # two lanes making it at once make the same part
        return part

    @property
    def attachments(self) -> list[Attachment]:
        with self._lock:
            if self._attachments is None:
                self._attachments = decoded(self._payload)
            return self._attachments

    def part(self, item: Attachment, inline: bool, name: str) -> SharedPart:
        key = (id(item), inline)
        with self._lock:
            made = self._parts.get(key)
            if made is None:
                made = self._parts[key] = encoded_part(item, inline, name)
            return made


def shared(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload with its attachments, and a fan-out's text part, prepared once for all
    its messages."""
    if PARTS_KEY in payload or not (payload.get("attachments")
                                    or payload.get("emailType") == "Marketing"):
        return payload
    return {**payload, PARTS_KEY: AttachmentParts(payload)}
