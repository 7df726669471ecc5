"""Twilio's status callbacks, authenticated as Twilio signs them: X-Twilio-Signature is
the base64 HMAC-SHA1, keyed by the account's auth token, of the full URL Twilio called
followed by each POST parameter's name and value, sorted by name."""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Iterable
from urllib.parse import unquote, urlsplit

from engine import runtime
from engine.reports.events import Reported

# Twilio error codes that say the number will never receive: blocked, unknown handset,
# landline or unreachable carrier, STOP, invalid or non-mobile number.
HARD = {"30004", "30005", "30006", "21610", "21211", "21612", "21614"}


def credentials() -> tuple[str, str] | None:
    """(account SID, auth token) of HERALD_SMS_PROVIDER when it is a twilio:// URL."""
    parts = urlsplit(runtime.settings().sms_provider or "")
    if parts.scheme != "twilio" or not parts.username or not parts.password:
        return None
    return unquote(parts.username), unquote(parts.password)


def signature(token: str, url: str, params: Iterable[tuple[str, str]]) -> str:
    data = url + "".join(f"{name}{value}" for name, value in sorted(params))
    digest = hmac.new(token.encode(), data.encode("utf-8"), hashlib.sha1).digest()
    return base64.b64encode(digest).decode("ascii")


def authentic(urls: Iterable[str], params: list[tuple[str, str]], given: str | None) -> bool:
    """Whether ``given`` signs the callback for one of ``urls`` (the public URL Twilio was
    told, then the URL as this server saw it) and the provider's account."""
    found = credentials()
    if found is None or not given:
        return False
    sid, token = found
    if dict(params).get("AccountSid", sid) != sid:
        return False
    return any(hmac.compare_digest(signature(token, url, params).encode(), given.encode())
               for url in urls)


def read(form: dict[str, str]) -> tuple[str, Reported] | None:
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
