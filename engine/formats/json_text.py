"""JSON text as ``json.dumps(value)`` writes it with its default arguments, for less.

``json.dumps`` builds a new C encoder at every call (with the table it checks for
circular references), about 12,000 instructions before it writes a byte; the encoder is
made once here, and the values written are trees the code builds (an API answer), so no
table is kept. And the C encoder escapes a string by reading each character twice (to size
the result, then to write it), about 37 instructions a character: ``string`` writes a long
string of printable ASCII without a quote or a backslash as it is, which a check by
``bytes.translate`` tells at about 15 (a preview's rendered body, most of its answer),
once searches for a quote, a newline and a backslash, which cost next to nothing, found
none.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Hashable
from json.encoder import (  # type: ignore[attr-defined]
    c_make_encoder,
    encode_basestring,
    encode_basestring_ascii,
)
from typing import Any

# Below this a string's escape costs less than the check.
LONG = 128
# What ensure_ascii escapes in ASCII text: control characters, the quote, the backslash
# and DEL (written \u007f).
_ESCAPED = bytes(range(32)) + b'"\\\x7f'


def _refuse(value: Any) -> Any:
    """json.JSONEncoder.default's answer."""
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


# json.dumps's own encoder (its separators, ensure_ascii, NaN allowed), without the
# circular-reference table.
_encode = None if c_make_encoder is None else c_make_encoder(
    None, _refuse, encode_basestring_ascii, None, ": ", ", ", False, False, True)
# The stored columns' form: no spaces, any character written as itself.
_compact = None if c_make_encoder is None else c_make_encoder(
    None, _refuse, encode_basestring, None, ":", ",", False, False, True)


def dumps(value: Any) -> str:
    """``json.dumps(value)``, the same text, for a value that holds no reference to itself."""
    if _encode is None:  # pragma: no cover - an interpreter without the C encoder
        return json.dumps(value)
    return "".join(_encode(value, 0))


def compact(value: Any) -> str:
    """``json.dumps(value, separators=(",", ":"), ensure_ascii=False)``, the same text, for
    a value that holds no reference to itself."""
    if _compact is None:  # pragma: no cover - an interpreter without the C encoder
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return "".join(_compact(value, 0))


def string(text: str) -> str:
    """``text`` as a JSON string, the same text ``json.dumps(text)`` gives."""
    # The commonest escapes (an attribute's quotes, a text part's lines) are found first,
    # by searches that cost a fraction of an instruction a character.
    if len(text) < LONG or not text.isascii() or '"' in text or "\n" in text \
            or "\\" in text:
        return encode_basestring_ascii(text)
    raw = text.encode("ascii")
    if len(raw.translate(None, _ESCAPED)) != len(raw):
        return encode_basestring_ascii(text)
    return '"' + text + '"'


class LastStrings:
    """The JSON of each key's last long texts, for the texts that come back whole: a
    preview asked again with the same tags renders the same parts, and their escape is most
    of its answer. A text is compared whole with the one its key wrote last, so a key never
    answers for a text it did not write. At most ``keys`` keys and ``chars`` characters of
    texts and their JSON are kept, the key written longest ago dropped first."""

    def __init__(self, keys: int = 256, chars: int = 4_000_000) -> None:
        self._keys = keys
        self._max_chars = chars
        self._chars = 0
        self._rows: dict[Hashable, tuple[tuple[str, str] | None, ...]] = {}
        self._lock = threading.Lock()

    def strings(self, key: Hashable, texts: tuple[str | None, ...]) -> list[str]:
        """Each of ``texts`` as JSON (``null`` for None), as ``json.dumps`` writes it."""
        row = self._rows.get(key)
        written: list[str] = []
        fresh = False
        for index, text in enumerate(texts):
            if text is None:
                written.append("null")
            elif len(text) < LONG:
                written.append(encode_basestring_ascii(text))
            elif row is not None and (kept := row[index]) is not None and kept[0] == text:
                written.append(kept[1])
            else:
                written.append(string(text))
                fresh = True
        if fresh:
            self._keep(key, tuple(
                None if text is None or len(text) < LONG else (text, json)
                for text, json in zip(texts, written, strict=True)))
        return written

    def _keep(self, key: Hashable, row: tuple[tuple[str, str] | None, ...]) -> None:
        size = sum(len(pair[0]) + len(pair[1]) for pair in row if pair is not None)
        if size > self._max_chars // 4:
            return
        with self._lock:
            old = self._rows.pop(key, None)
            if old is not None:
                self._chars -= sum(len(p[0]) + len(p[1]) for p in old if p is not None)
            self._rows[key] = row
            self._chars += size
            while len(self._rows) > self._keys or self._chars > self._max_chars:
                oldest = self._rows.pop(next(iter(self._rows)))
                self._chars -= sum(len(p[0]) + len(p[1]) for p in oldest if p is not None)

    def clear(self) -> None:
        with self._lock:
            self._rows.clear()
            self._chars = 0
