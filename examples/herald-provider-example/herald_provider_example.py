"""A Herald provider plugin in one module: each email or SMS becomes one JSON line in a file.

URL: ``example-log:///absolute/path/to/file.jsonl``.

It also reports what became of its messages, as a real provider's webhook does: Herald
serves its receiver at ``/api/inbound/example-log/<workspace id>``, and a JSON body
``{"messageId": ..., "event": "delivered" | "bounced", "recipient": ...}`` to the URL
`herald inbound url --provider example-log` prints (it carries the workspace's secret for
this provider) records the event on its notification.
"""

from __future__ import annotations

import json
import threading
from urllib.parse import unquote, urlsplit

from engine.plugin_api import (
    InboundCall,
    InboundRefused,
    OutboundEmail,
    OutboundSms,
    PermanentError,
    ProviderEvent,
    Reported,
    SendResult,
    hookimpl,
)

EVENTS = {"delivered": "delivered", "bounced": "bounced"}


class LogProvider:
    def __init__(self, url: str, context: object = None) -> None:
        self.path = unquote(urlsplit(url).path)
        if not self.path:
            raise ValueError("example-log provider: use example-log:///path/to/file.jsonl")
        self.lock = threading.Lock()

    def send(self, message: OutboundEmail | OutboundSms) -> SendResult:
        if isinstance(message, OutboundEmail):
            line = {"channel": "email", "from": message.sender, "to": message.to,
                    "cc": message.cc, "bcc": message.bcc, "subject": message.subject,
                    "messageId": message.message_id}
        else:
            line = {"channel": "sms", "from": message.sender, "to": message.to,
                    "text": message.text}
        try:
            with self.lock, open(self.path, "a", encoding="utf-8") as out:
                out.write(json.dumps(line) + "\n")
        except OSError as err:
            raise PermanentError(f"cannot write {self.path}: {err.strerror}") from None
        return SendResult(provider_message_id=line.get("messageId"))


@hookimpl
def register_providers(register) -> None:
    register("example-log", LogProvider)


class LogEvents:
    """The receiver of this provider's events, one event a call. Herald authenticates each
    call first, by the workspace's own inbound secret for this provider (``secret_in``:
    the URL's basic auth); a call without it never reaches ``events``."""

    per_workspace = True
    secret_in = "basic"
    label = "Example log"
    acknowledgement = "recorded"

    def events(self, call: InboundCall) -> list[ProviderEvent]:
        body = call.json()
        if not isinstance(body, dict) or body.get("event") not in EVENTS \
                or not isinstance(body.get("messageId"), str):
            raise InboundRefused(400, "Expected {messageId, event, recipient}.")
        recipient = body.get("recipient") if isinstance(body.get("recipient"), str) else None
        return [(body["messageId"], Reported(EVENTS[body["event"]], recipient, "example-log",
                                             dedupe_key=f"example-log:{body['messageId']}:"
                                                        f"{body['event']}:{recipient}"))]


@hookimpl
def register_event_webhooks(register) -> None:
    register("example-log", LogEvents())
