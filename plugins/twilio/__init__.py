"""Twilio's Messages API: ``twilio://ACCOUNT_SID:AUTH_TOKEN@[host[:port]]?from=+1...``.

Each message asks for status callbacks at HERALD_PUBLIC_URL's /api/inbound/twilio
(docs/reports.md); ``?status_callback=URL`` or ``=off`` overrides it.

The host defaults to api.twilio.com over HTTPS; ``?scheme=http`` exists for local tests.
"""

from __future__ import annotations

from urllib.parse import parse_qs, unquote, urlsplit

from engine.plugin_api import (
    HttpVendorProvider,
    OutboundSms,
    PermanentError,
    ProviderContext,
    SendResult,
    SuppressedError,
    hookimpl,
)
from plugins.twilio.events import TwilioEvents

# Twilio error codes: 21610 the recipient replied STOP; 21614 not a mobile number.
UNSUBSCRIBED = {21610}
BAD_NUMBER = {21211, 21614, 21612}


class TwilioProvider(HttpVendorProvider):
    def __init__(self, url: str, context: ProviderContext | None = None) -> None:
        parts = urlsplit(url)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        if not parts.username or not parts.password:
            raise ValueError("twilio provider: use twilio://ACCOUNT_SID:AUTH_TOKEN@")
        self.sid, self.token = unquote(parts.username), unquote(parts.password)
        host = parts.hostname or "api.twilio.com"
        port = f":{parts.port}" if parts.port else ""
        scheme = query.get("scheme", "https")
        if scheme not in ("https", "http"):  # else the "scheme" could carry a whole URL
            raise ValueError("twilio provider: scheme must be https or http")
        self.endpoint = (f"{scheme}://{host}{port}"
                         f"/2010-04-01/Accounts/{self.sid}/Messages.json")
        self.default_from = query.get("from")
        super().__init__(context)
        # Where Twilio reports each message's fate (Herald's /api/inbound/twilio, signed
        # with this account's token); ?status_callback=URL names another, =off none.
        public = getattr(getattr(context, "settings", None), "public_url", None)
        callback = query.get("status_callback")
        if callback is None and public:
            callback = f"{public.rstrip('/')}/api/inbound/twilio"
        self.status_callback = None if callback in (None, "", "off") else callback

    def send(self, message: OutboundSms) -> SendResult:
        sender = message.sender or self.default_from
        if not sender:
            raise PermanentError("no fromNumber on the version and no ?from= on the provider")
        ids: list[str] = []
        result = SendResult()
        for number in message.to:
            form = {"To": number, "From": sender, "Body": message.text}
            if self.status_callback:
                form["StatusCallback"] = self.status_callback
            response, data = self.post(self.endpoint, auth=(self.sid, self.token),
                                  data=form)
            if response.status_code in (200, 201):
                ids.append(str(data.get("sid", "")))
                continue
            code = data.get("code")
            detail = f"{code}: {data.get('message', '')}" if data else response.text[:200]
            if code in UNSUBSCRIBED:
                result.rejected[number] = detail
                result.bounced.append(number)
                continue
            if code in BAD_NUMBER:
                result.rejected[number] = detail
                continue
            self.raise_for_status(response.status_code, detail, response.headers.get("Retry-After"))
        if not ids:
            if result.bounced and len(result.bounced) == len(message.to):
                raise SuppressedError("every number unsubscribed", result.bounced)
            raise PermanentError("; ".join(f"{n}: {r}" for n, r in result.rejected.items()))
        result.provider_message_id = ",".join(ids)
        return result


@hookimpl
def register_providers(register) -> None:
    register("twilio", TwilioProvider)


@hookimpl
def register_event_webhooks(register) -> None:
    """Twilio's status callbacks (events.py), served at /api/inbound/twilio."""
    register("twilio", TwilioEvents())
