"""The dev inbox: email and SMS kept in the database (development and test only)."""

from __future__ import annotations

import uuid
from typing import Any

from engine.plugin_api import OutboundEmail, OutboundSms, ProviderContext, SendResult, hookimpl


class InboxProvider:
    """Stores what would have been sent; nothing leaves the machine."""

    def __init__(self, url: str, context: ProviderContext) -> None:
        self.context = context

    def send(self, message: Any) -> SendResult:
        if isinstance(message, OutboundEmail):
            mime = message.mime
            raw = mime.as_string() if mime is not None else ""
            self.context.store_inbox_message({
                "channel": "email",
                "sender": message.sender,
                "to": message.to,
                "cc": message.cc,
                "bcc": message.bcc,
                "subject": message.subject,
                "text": message.text,
                "html": message.html,
                "raw": raw,
                "headers": {k: str(v) for k, v in mime.items()} if mime is not None else {},
                "size_bytes": len(raw.encode("utf-8")),
            })
        elif isinstance(message, OutboundSms):
            self.context.store_inbox_message({
                "channel": "sms", "sender": message.sender, "to": message.to, "cc": [],
                "bcc": [], "subject": None, "text": message.text, "html": None, "raw": None,
                "headers": {}, "size_bytes": len(message.text.encode("utf-8")),
            })
        else:
            raise TypeError(f"the inbox cannot store {type(message).__name__}")
        return SendResult(provider_message_id=f"inbox-{uuid.uuid4()}")


@hookimpl
def register_providers(register) -> None:
    register("inbox", InboxProvider)
