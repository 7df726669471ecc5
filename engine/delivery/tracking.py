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
import re
import time
import zlib
from typing import Any

from itsdangerous import BadSignature, URLSafeSerializer

from engine import runtime
from engine.formats import json_text

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
        # What itsdangerous writes (json.dumps(data, ensure_ascii=False, separators=(",", ":"))),
        # from one C encoder: json.dumps, and a JSONEncoder's encode, build one a call.
        raw = json_text.compact(data).encode("utf-8")
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
    if not track_opens and not track_clicks:
        return html_body  # what TrackedHtml renders then, without copying the body to a piece
    return TrackedHtml(html_body, track_opens=track_opens,
                       track_clicks=track_clicks).render(notification_id, recipient)


# Where a TrackedHtml's open pixel goes.
_PIXEL = object()


class TrackedHtml:
    """One HTML body's tracking worked out once: where its links and its open pixel go,
    and each link's target. Every recipient of a fan-out gets the same body with links
    signed for them alone, so the body is searched once per send, not once a recipient
    (``render`` only signs and joins).

    The pixel goes before the first ``</body>`` of the body as written: no rewritten link
    can hold one (neither a link's tag nor its URL holds a ">"), and no signed URL makes
    one (it is escaped), so that is where it was found after the links were rewritten.
    """

    def __init__(self, html_body: str, *, track_opens: bool, track_clicks: bool) -> None:
        self.html_body = html_body
        self.track_opens = track_opens
        # Cut points in the body: (start, end, what goes there).
        cuts: list[tuple[int, int, object]] = []
        if track_clicks:
            for match in _HREF.finditer(html_body):
                opening, attribute, quote, url = match.groups()
                if url is None:
                    continue
                target = link_target(html.unescape(url))
                cuts.append((match.start(), match.end(),
                             (f"{opening}{attribute}{quote}", target, quote)))
                if len(cuts) >= MAX_TRACKED_LINKS:
                    break
        self.pixel_at_end = False
        if track_opens:
            end = _BODY_END.search(html_body)
            if end is None:
                self.pixel_at_end = True
            else:
                cuts.append((end.start(), end.start(), _PIXEL))
                cuts.sort(key=lambda cut: cut[0])
        self.pieces: list[Any] = []
        position = 0
        for start, stop, what in cuts:
            self.pieces.append(html_body[position:start])
            self.pieces.append(what)
            position = stop
        self.pieces.append(html_body[position:])

    def render(self, notification_id: str | None, recipient: str | None) -> str:
        """The body as ``recipient`` gets it, its links and pixel signed for them."""
        if len(self.pieces) == 1 and not self.pixel_at_end:
            return self.html_body
        ident = notification_id or "preview"
        out: list[str] = []
        pixel = ""
        if self.track_opens:
            pixel = (f'<img src="{html.escape(open_url(ident, recipient))}" width="1" '
                     'height="1" alt="" style="display:none">')
        for piece in self.pieces:
            if type(piece) is str:
                out.append(piece)
            elif piece is _PIXEL:
                out.append(pixel)
            else:
                before, target, quote = piece
                out.append(before)
                out.append(html.escape(click_url(ident, recipient, target), quote=True))
                out.append(quote)
        if self.pixel_at_end:
            out.append(pixel)
        return "".join(out)
