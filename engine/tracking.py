"""Signed tracking URLs: open pixel, click redirect and RFC 8058 one-click unsubscribe.

A click URL carries its destination inside the signature, so the endpoint can only ever
redirect to a link that Herald itself rewrote: never an open redirect.
"""

from __future__ import annotations

import functools
import html
import re
from typing import Any

from itsdangerous import BadSignature, URLSafeSerializer

from engine import runtime

_HREF = re.compile(r"""(<a\b[^>]*?\bhref\s*=\s*)(["'])(https?://[^"'\s>]+)\2""", re.IGNORECASE)
_BODY_END = re.compile(r"</body\s*>", re.IGNORECASE)


def _serializer(purpose: str) -> URLSafeSerializer:
    return _serializer_for(runtime.settings().secret_key, purpose)


@functools.lru_cache(maxsize=16)
def _serializer_for(secret_key: str, purpose: str) -> URLSafeSerializer:
    """Built once per key and purpose: a fan-out signs two tokens per recipient."""
    return URLSafeSerializer(secret_key, salt=f"herald-{purpose}")


def make_token(purpose: str, data: dict[str, Any]) -> str:
    return _serializer(purpose).dumps(data)


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


def click_url(notification_id: str, recipient: str | None, url: str) -> str:
    token = make_token("click", {"n": notification_id, "r": recipient, "u": url})
    return f"{_base()}/t/c/{token}"


def unsubscribe_url(notification_id: str, recipient: str) -> str:
    return f"{_base()}/t/u/{make_token('unsubscribe', {'n': notification_id, 'r': recipient})}"


def apply_tracking(html_body: str, *, notification_id: str | None, track_opens: bool,
                   track_clicks: bool, recipient: str | None = None) -> str:
    """Rewrite http(s) links to signed click URLs and add an open pixel before </body>."""
    ident = notification_id or "preview"
    if track_clicks:
        def rewrite(match: re.Match[str]) -> str:
            target = html.unescape(match.group(3))
            signed = html.escape(click_url(ident, recipient, target), quote=True)
            return f"{match.group(1)}{match.group(2)}{signed}{match.group(2)}"

        html_body = _HREF.sub(rewrite, html_body)
    if track_opens:
        pixel = (f'<img src="{html.escape(open_url(ident, recipient))}" width="1" height="1" '
                 'alt="" style="display:none">')
        if _BODY_END.search(html_body):
            html_body = _BODY_END.sub(lambda m: pixel + m.group(0), html_body, count=1)
        else:
            html_body += pixel
    return html_body
