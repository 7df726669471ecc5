"""Twilio's status callbacks and inbound messages (an SMS reply: STOP, START, HELP...),
read and authenticated here, beside the provider (served at /api/inbound/twilio,
docs/reports.md and docs/delivery.md, "SMS keywords"): X-Twilio-Signature is the base64
HMAC-SHA1, keyed by the account's auth token, of the full URL Twilio called followed by
each POST parameter's name and value, sorted by name."""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Iterable
from html import escape
from urllib.parse import unquote, urlsplit

from engine.plugin_api import (
    InboundCall,
    InboundMessage,
    InboundRefused,
    ProviderEvent,
    Reported,
)

# Twilio error codes that say the number will never receive: blocked, unknown handset,
# landline or unreachable carrier, STOP, invalid or non-mobile number.
HARD = {"30004", "30005", "30006", "21610", "21211", "21612", "21614"}


class TwilioEvents:
    """The receiver of Twilio's status callbacks (one account: the twilio:// provider's)."""

    per_workspace = False
    acknowledgement = "empty"

    def events(self, call: InboundCall) -> list[ProviderEvent | InboundMessage]:
        params = call.form()
        if not authentic(call.provider_urls("twilio"), call.urls, params,
                         call.headers.get("X-Twilio-Signature")):
            raise InboundRefused(403, "X-Twilio-Signature does not sign this request.")
        form = dict(params)
        if (message := incoming(form)) is not None:
            return [message]
        found = read(form)
        return [found] if found is not None else []

    @staticmethod
    def answer(text: str) -> tuple[str, str]:
        """A reply to the message in the call's response: TwiML's <Message>, which Twilio
        sends back to the person from the number they wrote to."""
        return (f"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Response><Message>"
                f"{escape(text)}</Message></Response>", "text/xml")


def incoming(form: dict[str, str]) -> InboundMessage | None:
    """A message someone sent to the account's number (Twilio's inbound webhook, pointed at
    the same URL as the status callbacks): it has a body and no delivery status."""
    sid = form.get("MessageSid") or form.get("SmsSid")
    status = (form.get("SmsStatus") or "received").lower()
    if not sid or "Body" not in form or form.get("MessageStatus") or status != "received":
        return None
    sender, recipient = form.get("From") or "", form.get("To") or ""
    if not sender or not recipient:
        return None
    return InboundMessage(sender=sender, recipient=recipient, text=form["Body"],
                          message_id=sid, source="twilio")


def credentials(provider_urls: Iterable[str]) -> tuple[str, str] | None:
    """(account SID, auth token) of the first twilio:// provider URL configured."""
    for url in provider_urls:
        parts = urlsplit(url)
        if parts.scheme == "twilio" and parts.username and parts.password:
            return unquote(parts.username), unquote(parts.password)
    return None


def signature(token: str, url: str, params: Iterable[tuple[str, str]]) -> str:
    data = url + "".join(f"{name}{value}" for name, value in sorted(params))
    digest = hmac.new(token.encode(), data.encode("utf-8"), hashlib.sha1).digest()
    return base64.b64encode(digest).decode("ascii")


def authentic(provider_urls: Iterable[str], urls: Iterable[str],
              params: list[tuple[str, str]], given: str | None) -> bool:
    """Whether ``given`` signs the callback for one of ``urls`` (the public URL Twilio was
    told, then the URL as this server saw it) and the provider's account."""
    found = credentials(provider_urls)
    if found is None or not given:
        return False
    sid, token = found
    if dict(params).get("AccountSid", sid) != sid:
        return False
    return any(hmac.compare_digest(signature(token, url, params).encode(), given.encode())
               for url in urls)


def read(form: dict[str, str]) -> ProviderEvent | None:
    """(MessageSid, the report) of a status callback; None for a status on the way
    (queued, sending, sent...) that says nothing final."""
    sid = form.get("MessageSid") or form.get("SmsSid")
    status = (form.get("MessageStatus") or form.get("SmsStatus") or "").lower()
    if not sid or status not in ("delivered", "undelivered", "failed"):
        return None
    recipient = form.get("To") or None
    if status == "delivered":
        return sid, Reported("delivered", recipient, "twilio", None, f"twilio:{sid}:delivered")
    code = (form.get("ErrorCode") or "").strip()
    kind = "bounced" if code in HARD else "soft_bounced"
    detail = f"{status} (error {code})" if code else status
    return sid, Reported(kind, recipient, "twilio", detail, f"twilio:{sid}:{status}")
