"""An email message as it goes on the wire: the bytes the standard library's BytesGenerator
writes, written faster for the shapes Herald builds (tests/channels/test_message_bytes.py
holds it to the generator, byte for byte).

Shared by the email channel and every provider that speaks SMTP; the plugin API
(engine/plugin_api.py) re-exports ``message_bytes`` and ``PLAIN_ADDRESS``.
"""

from __future__ import annotations

import functools
import io
import re
from email.generator import BytesGenerator
from email.message import Message
from email.mime.base import MIMEBase
from email.policy import compat32
from typing import Any

# An address that formataddr(parseaddr(...)) and smtplib.quoteaddr give back unchanged (the
# latter between angle brackets): no name, no quoting (tests/plugins/test_smtp_addresses.py).
PLAIN_ADDRESS = re.compile(r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9.-]+")
# A header value that compat32's folding writes back unchanged: printable ASCII, single
# spaces, short enough for one line (checked with the name in _FastGenerator).
_PLAIN_VALUE = re.compile(r"[!-~]+(?: [!-~]+)*")
# A value that compat32 cannot break (no white space, and none of the ";" and "," it may
# split at): too long for the name's line, it goes whole onto the next (a one-click
# unsubscribe URL on every marketing message).
_ONE_WORD = re.compile(r"[!-+\--:<-~]+")
LINE = 78


def _header_bytes(msg: Message, policy: Any, nl: str) -> bytes:
    """The message's header block as compat32 writes it, with a header that folding would
    leave as it is written directly (folding runs every header through email.header.Header,
    most of a message's serialisation time; a short single-line printable value comes out
    of it unchanged)."""
    out = []
    # Only at compat32's own line length: a multipart/signed has its parts' headers written
    # unfolded (max_line_length 0), which fold_binary then does.
    fast = policy.max_line_length == LINE
    for name, value in msg.raw_items():
        if not (fast and isinstance(value, str)):
            out.append(policy.fold_binary(name, value))
        elif len(name) + len(value) + 2 <= LINE and _PLAIN_VALUE.fullmatch(value):
            out.append(f"{name}: {value}{nl}".encode("ascii"))
        elif _ONE_WORD.fullmatch(value):
            out.append(f"{name}: {nl} {value}{nl}".encode("ascii"))
        elif not value.isascii():  # an SMTPUTF8 address
            out.append(f"{name}: {value}{nl}".replace("\n ", f"{nl} ").encode("utf-8"))
        else:
            out.append(policy.fold_binary(name, value))
    out.append(nl.encode("ascii"))
    return b"".join(out)


class _FastGenerator(BytesGenerator):
    """compat32 bytes, with the header block from ``_header_bytes``."""

    def _write_headers(self, msg: Message) -> None:
        self._fp.write(_header_bytes(msg, self.policy, self._NL))


class SharedPart(MIMEBase):
    """A leaf that many messages hold (one notification's attachment, in the message of each
    recipient of a fan-out): base64-encoded once when built, and its wire bytes written
    once, the first time a message holding it is written, then reused by every other.

    Complete when built: a part changed after it was first written would keep its old bytes.
    """

    def wire(self, policy: Any, nl: str) -> bytes | None:
        """Its bytes as the generator writes them, or None for a shape it cannot write."""
        key = (nl, policy.max_line_length)
        cached = self.__dict__.get("_herald_wire")
        if cached is not None and cached[0] == key:
            return cached[1]
        payload = self._payload
        if not (isinstance(payload, str) and payload.isascii()):
            return None
        written = _header_bytes(self, policy, nl) + _LINE_ENDS.sub(nl, payload).encode("ascii")
        # Two lanes writing it at once both write the same bytes: no lock needed.
        self.__dict__["_herald_wire"] = (key, written)
        return written


_MULTIPART = re.compile(r'multipart/(?:alternative|mixed|related); boundary="([0-9A-Za-z=_.-]+)"')
_LINE_ENDS = re.compile(r"\r\n|\r|\n")


def _direct(msg: Message, policy: Any, nl: str) -> bytes | None:
    """What the generator writes for the shapes build_mime makes (text leaves with an ASCII
    payload, shared attachment parts, multiparts with a boundary and no preamble or
    epilogue), without its machinery; None for any other shape, which the generator then
    writes."""
    if isinstance(msg, SharedPart):
        return msg.wire(policy, nl)
    payload = msg._payload
    content_type = msg.get("Content-Type")
    if isinstance(payload, list):
        match = _MULTIPART.fullmatch(content_type) if isinstance(content_type, str) else None
        if (match is None or not payload or msg.preamble is not None
                or msg.epilogue is not None):
            return None
        parts: list[bytes] = []
        for part in payload:
            written = _direct(part, policy, nl) if isinstance(part, Message) else None
            if written is None:
                return None
            parts.append(written)
        delimiter = f"{nl}--{match[1]}{nl}".encode("ascii")
        return b"".join([_header_bytes(msg, policy, nl), delimiter[len(nl):],
                         delimiter.join(parts), f"{nl}--{match[1]}--{nl}".encode("ascii")])
    if not (isinstance(payload, str) and payload.isascii() and isinstance(content_type, str)
            and content_type.lower().startswith("text/")):
        return None
    return _header_bytes(msg, policy, nl) + _LINE_ENDS.sub(nl, payload).encode("ascii")


def message_bytes(msg: Message, linesep: str = "\r\n") -> bytes:
    """The message as it goes on the wire (CRLF line ends): what the standard library's
    BytesGenerator writes (tests/channels/test_message_bytes.py holds it to that)."""
    policy = _policy(msg.policy, linesep)
    direct = _direct(msg, policy, linesep) if msg.policy is compat32 else None
    if direct is not None:
        return direct
    out = io.BytesIO()
    _FastGenerator(out, mangle_from_=False, policy=policy).flatten(msg, linesep=linesep)
    return out.getvalue()


@functools.lru_cache(maxsize=8)
def _policy(policy: Any, linesep: str) -> Any:
    """The policy with our line ends, cloned once (policies are immutable), not per message."""
    return policy.clone(linesep=linesep)
