"""A Herald provider plugin in one module: each email or SMS becomes one JSON line in a file.

URL: ``example-log:///absolute/path/to/file.jsonl``.
"""

from __future__ import annotations

import json
import threading
from urllib.parse import unquote, urlsplit

from engine.plugin_api import OutboundEmail, OutboundSms, PermanentError, SendResult, hookimpl


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
