"""Signed tracking URLs: open pixel, click redirect and RFC 8058 one-click unsubscribe.

A click URL carries its destination and its notification inside the signature, and the
endpoint redirects only while that notification exists: so only to a link Herald rewrote
in a message it sent, never an open redirect. A preview's URLs name no notification.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import html
import json
import re
import time
import zlib
from typing import Any

from itsdangerous import BadSignature, URLSafeSerializer

from engine import runtime

# An <a tag with no http(s) href is taken whole by the second branch, so the search goes on
# after it instead of back at each "<a" inside it, each read on to the same ">" again
# (quadratic in the body: seconds for tens of kilobytes, docs/performance.md). An "<a"
# inside can find no href that the tag's own start did not, so the links rewritten are the
# same.
_HREF = re.compile(r"""(<a\b)(?:([^>]*?\bhref\s*=\s*)(["'])(https?://[^"'\s>]+)\3|[^>]*)""",
                   re.IGNORECASE)
_BODY_END = re.compile(r"</body\s*>", re.IGNORECASE)


# A payload this short is never worth compressing (itsdangerous tries zlib on every one):
# under it a token is ids, an address and a time, of which zlib saves a dozen bytes, for
# the set-up of its window and tables each time (tens to hundreds of microseconds, once a
# recipient of a fan-out for the unsubscribe link alone). A click URL with a long query
# is where compressing pays.
_COMPRESS_FROM = 256


class _TokenSigner:
    """Makes the tokens of itsdangerous's URLSafeSerializer, which reads them back: compact
    JSON, zlib where that shortens a long payload, base64url, then "." and the HMAC-SHA1 of
    it all under itsdangerous's key ("django-concat": SHA-1 of salt, "signer", secret).

    Keyed once per key and purpose: a fan-out signs two tokens per recipient, and
    itsdangerous derives its key, builds a signer and sets up zlib's state for every one.
    """

    def __init__(self, secret_key: str, salt: str) -> None:
        key = hashlib.sha1(salt.encode() + b"signer" + secret_key.encode()).digest()
        self._mac = hmac.new(key, digestmod=hashlib.sha1)

    def dumps(self, data: Any) -> str:
        raw = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        body = _b64(raw)
        if len(raw) >= _COMPRESS_FROM:
            packed = zlib.compress(raw)
            if len(packed) < len(raw) - 1:
                body = b"." + _b64(packed)
        mac = self._mac.copy()
        mac.update(body)
        return (body + b"." + _b64(mac.digest())).decode("ascii")


def _b64(data: bytes) -> bytes:
    return base64.urlsafe_b64encode(data).rstrip(b"=")


def _serializer(purpose: str) -> URLSafeSerializer:
    return _serializer_for(runtime.settings().secret_key, purpose)


@functools.lru_cache(maxsize=16)
def _serializer_for(secret_key: str, purpose: str) -> URLSafeSerializer:
    return URLSafeSerializer(secret_key, salt=_salt(purpose))


@functools.lru_cache(maxsize=16)
def _signer_for(secret_key: str, purpose: str) -> _TokenSigner:
    return _TokenSigner(secret_key, _salt(purpose))


def _salt(purpose: str) -> str:
    return f"herald-{purpose}"


def make_token(purpose: str, data: dict[str, Any]) -> str:
    return _signer_for(runtime.settings().secret_key, purpose).dumps(data)


def read_token(purpose: str, token: str) -> dict[str, Any] | None:
    """The signed data, or None for anything forged, truncated or for another purpose."""
    try:
        data = _serializer(purpose).loads(token)
    except (BadSignature, UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _base() -> str:
    return runtime.settings().public_url.rstrip("/")


def open_url(notification_id: str, recipient: str | None) -> str:
    return f"{_base()}/t/o/{make_token('open', {'n': notification_id, 'r': recipient})}"


# What a browser does to an href before it follows it (WHATWG URL parsing): C0 controls and
# spaces trimmed at both ends, every tab and newline removed. Any other control left is
# percent-encoded, as a browser does in a path, so the Location header can carry it.
_ENDS = "".join(map(chr, range(0x21)))
_TAB_OR_NEWLINE = str.maketrans("", "", "\t\n\r")
_CONTROL_LEFT = re.compile(r"[\x00-\x1f\x7f]")


def link_target(url: str) -> str:
    """The URL a browser would go to for ``href="url"`` (after character references), so a
    tracked link leads where the untracked one would, and always fits a Location header."""
    url = url.strip(_ENDS).translate(_TAB_OR_NEWLINE)
    return _CONTROL_LEFT.sub(lambda m: f"%{ord(m.group()):02X}", url)


def click_url(notification_id: str, recipient: str | None, url: str) -> str:
    token = make_token("click", {"n": notification_id, "r": recipient, "u": url})
    return f"{_base()}/t/c/{token}"


def unsubscribe_url(notification_id: str, recipient: str, workspace_id: str | None = None,
                    topic: str | None = None) -> str:
    """The recipient's link to the preferences page (docs/delivery.md, "Topics"): signed with
    the workspace, the message's topic and when it was made, so the page outlives neither
    the workspace's retention period nor anyone else's address."""
    data: dict[str, Any] = {"n": notification_id, "r": recipient}
    if workspace_id is not None:
        data.update(w=workspace_id, i=int(time.time()))
    if topic:
        data["t"] = topic
    return f"{_base()}/t/u/{make_token('unsubscribe', data)}"


# Links a message's click tracking rewrites; later ones are left as written. Each signed
# link adds bytes and CPU for every recipient of a fan-out: a body of tens of thousands of
# links would multiply both (docs/performance.md, "Measurements behind the code's shape").
MAX_TRACKED_LINKS = 1000


def apply_tracking(html_body: str, *, notification_id: str | None, track_opens: bool,
                   track_clicks: bool, recipient: str | None = None) -> str:
    """Rewrite http(s) links to signed click URLs and add an open pixel before </body>.

    Without a notification (a preview) the URLs show what would be sent and lead nowhere.
    """
    ident = notification_id or "preview"
    if track_clicks:
        tracked = 0

        def rewrite(match: re.Match[str]) -> str:
            nonlocal tracked
            opening, attribute, quote, url = match.groups()
            if url is None or tracked >= MAX_TRACKED_LINKS:
                return match.group(0)
            tracked += 1
            target = link_target(html.unescape(url))
            signed = html.escape(click_url(ident, recipient, target), quote=True)
            return f"{opening}{attribute}{quote}{signed}{quote}"

        html_body = _HREF.sub(rewrite, html_body)
    if track_opens:
        pixel = (f'<img src="{html.escape(open_url(ident, recipient))}" width="1" height="1" '
                 'alt="" style="display:none">')
        if _BODY_END.search(html_body):
            html_body = _BODY_END.sub(lambda m: pixel + m.group(0), html_body, count=1)
        else:
            html_body += pixel
    return html_body
