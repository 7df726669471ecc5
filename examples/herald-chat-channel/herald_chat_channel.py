"""A Herald channel plugin in one module: ``chat``, a message POSTed as JSON to a room.

A version of a ``chat`` template has a ``body`` (template text, plain) and the room's
incoming ``url``; a send may name the ``username`` the message is posted as, and a room
``member`` it is for (the message starts ``@member``), in ``chatOptions``. The channel needs
no provider: it sends each message itself.

It declares what the web application shows of it (its label, what a test send asks for and
sends with, its list column), so its templates look like a built-in channel's in the editor,
are sent to a list of members (a ``member`` column, one message each), and read in Reports
as a built-in's do (the member as the recipient, beside the room's host).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from engine.plugin_api import (
    BaseChannel,
    FieldErrors,
    PermanentError,
    SendRequest,
    SendResult,
    TransientError,
    hookimpl,
    options_object,
    parse_retry_after,
    suppression_key,
)

MAX_USERNAME = 80
TIMEOUT = 10.0


class ChatChannel(BaseChannel):
    name = "chat"
    options_field = "chatOptions"
    content_fields = ("body", "url")
    needs_provider = False
    label = "Chat"
    recipient_hint = "the name to post the test as"
    recipient_example = "Herald test"
    recipients_note = "A chat template posts to its room's URL: it has no recipients."
    list_column = "member"  # a list of the room's members: one message to each

    def list_options(self, recipient: str) -> dict[str, Any]:
        """A list's row: the message for that member of the room."""
        return {"member": recipient}

    def test_options(self, recipient: str) -> dict[str, Any]:
        """A test posts to the room, as the name given for the test."""
        return {"username": recipient}

    def check_content(self, content: Mapping[str, Any]) -> list[tuple[str, str]]:
        problems = super().check_content(content)
        url = content.get("url")
        if not (isinstance(url, str) and urlsplit(url).scheme in ("http", "https")
                and urlsplit(url).hostname):
            problems.append(("url", "must be the room's http(s) incoming URL"))
        return problems

    def validate_options(self, options: object, errors: FieldErrors) -> None:
        found = options_object(errors, options, "chatOptions")
        for key in ("username", "member"):
            name = (found or {}).get(key)
            if name is not None and not (isinstance(name, str) and name.strip()
                                         and len(name) <= MAX_USERNAME):
                errors.add(f"chatOptions.{key}", f"notifications.chat.{key}_invalid",
                           f"a name of 1 to {MAX_USERNAME} characters")

    def payload(self, request: SendRequest,
                rendered: Mapping[str, str | None]) -> dict[str, Any]:
        member = request.options.get("member")
        return {"url": request.content["url"], "text": rendered.get("body") or "",
                "username": request.options.get("username"), "member": member,
                # Who it is for, as Reports shows and searches it (and suppressions match).
                "suppressionKeys": [suppression_key(member)] if member else []}

    def send(self, message: dict[str, Any]) -> SendResult:
        """POST the message; 2xx delivered, 429 and 5xx later, anything else never."""
        text = (f"@{message['member']} " if message.get("member") else "") + message["text"]
        body = {"text": text, **({"username": message["username"]}
                                 if message.get("username") else {})}
        request = urllib.request.Request(message["url"], data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
                return SendResult(provider_message_id=answer.headers.get("X-Message-Id"))
        except urllib.error.HTTPError as err:
            detail = f"chat server answered {err.code}"
            if err.code == 429 or err.code >= 500:
                raise TransientError(detail, status_code=err.code,
                                     retry_after=parse_retry_after(
                                         err.headers.get("Retry-After"))) from None
            raise PermanentError(detail, status_code=err.code) from None
        except (urllib.error.URLError, TimeoutError) as err:
            raise TransientError(f"chat server unreachable: {err}") from None


@hookimpl
def register_channels(register) -> None:
    register("chat", ChatChannel())
