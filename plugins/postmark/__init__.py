"""Postmark's HTTP email API: ``postmark://SERVER_TOKEN@[host[:port]]?stream=outbound``.

The host defaults to api.postmarkapp.com over HTTPS; ``?scheme=http`` exists for local tests.
"""

from __future__ import annotations

import base64
from email.utils import formataddr
from urllib.parse import parse_qs, unquote, urlsplit

from engine.plugin_api import (
    HttpVendorProvider,
    OutboundEmail,
    PermanentError,
    ProviderContext,
    SendResult,
    SuppressedError,
    hookimpl,
)
from plugins.postmark.events import PostmarkEvents

# Postmark ErrorCode values: 406 inactive recipient (bounced, complained, unsubscribed).
INACTIVE_RECIPIENT = 406
HEADERS_POSTMARK_SETS = {"from", "to", "cc", "bcc", "subject", "reply-to", "date",
                         "message-id", "mime-version", "content-type"}


class PostmarkProvider(HttpVendorProvider):
    def __init__(self, url: str, context: ProviderContext | None = None) -> None:
        parts = urlsplit(url)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        if not parts.username:
            raise ValueError("postmark provider: the server token goes in the URL's user part")
        self.token = unquote(parts.username)
        host = parts.hostname or "api.postmarkapp.com"
        port = f":{parts.port}" if parts.port else ""
        scheme = query.get("scheme", "https")
        if scheme not in ("https", "http"):  # else the "scheme" could carry a whole URL
            raise ValueError("postmark provider: scheme must be https or http")
        self.endpoint = f"{scheme}://{host}{port}/email"
        self.stream = query.get("stream", "outbound")
        super().__init__(context)

    def payload(self, message: OutboundEmail) -> dict:
        # Quoted as one mailbox whatever the name holds (a quote, a comma, "<").
        sender = formataddr((message.sender_name or "", message.sender))
        body: dict = {
            "From": sender,
            "To": ", ".join(message.to),
            "Subject": message.subject,
            "MessageStream": self.stream,
        }
        if message.cc:
            body["Cc"] = ", ".join(message.cc)
        if message.bcc:
            body["Bcc"] = ", ".join(message.bcc)
        if message.reply_to:
            body["ReplyTo"] = message.reply_to
        if message.html is not None:
            body["HtmlBody"] = message.html
        if message.text is not None:
            body["TextBody"] = message.text
        extra = dict(message.headers)
        if message.mime is not None:
            # Priority, sensitivity and receipts were set on the MIME; carry them over.
            for name, value in message.mime.items():
                if name.lower() not in HEADERS_POSTMARK_SETS and name not in extra:
                    extra[name] = str(value)
        if extra:
            body["Headers"] = [{"Name": k, "Value": v} for k, v in extra.items()]
        if message.attachments:
            body["Attachments"] = [
                {"Name": a.name, "Content": base64.b64encode(a.content).decode("ascii"),
                 "ContentType": a.content_type,
                 **({"ContentID": f"cid:{a.cid}"} if a.cid else {})}
                for a in message.attachments
            ]
        return body

    def send(self, message: OutboundEmail) -> SendResult:
        response, data = self.post(
            self.endpoint, json=self.payload(message),
            headers={"Accept": "application/json", "X-Postmark-Server-Token": self.token})
        code = data.get("ErrorCode", 0)
        if response.status_code == 200 and code == 0:
            return SendResult(provider_message_id=data.get("MessageID"))
        detail = f"ErrorCode {code}: {data.get('Message', '')}" if data else response.text[:200]
        if response.status_code == 422 and code == INACTIVE_RECIPIENT:
            raise SuppressedError(detail, message.recipients, status_code=422)
        if response.status_code == 422:
            raise PermanentError(detail, status_code=422)
        self.raise_for_status(response.status_code, detail, response.headers.get("Retry-After"))
        raise PermanentError(detail, status_code=response.status_code)


@hookimpl
def register_providers(register) -> None:
    register("postmark", PostmarkProvider)


@hookimpl
def register_event_webhooks(register) -> None:
    """Postmark's delivery, bounce and complaint webhooks (events.py), served at
    /api/inbound/postmark/<workspace id>."""
    register("postmark", PostmarkEvents())
