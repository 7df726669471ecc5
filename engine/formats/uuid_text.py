"""UUIDs as text without the cost of ``uuid.UUID`` at every request.

``str()`` of a UUID runs its Python ``__str__`` (a format and five slices) and parsing one
runs its Python ``__init__``: about 7,000 instructions each, ten of them a send. The ids a
request names (its tenantId, its templateId) and the ids of the rows it reads from the
process's caches (a workspace, an account, a version) are the same few values again and
again: their text is worked out once and kept (at most ``KEPT`` of each, then forgotten
all at once). A new id's text is written straight from its random bytes.
"""

from __future__ import annotations

import os
import uuid
from typing import Any

KEPT = 4096
# The longest usual spelling, "urn:uuid:" and the 36 characters; uuid.UUID reads longer ones
# (any number of hyphens), which are worked out each time.
LONGEST_KEPT = 45
_MISSING = object()
_canonical: dict[str, str | None] = {}
# Keyed by the object's id(), its value held beside its text: while the entry keeps the
# object alive, no other object can have that id.
_texts: dict[int, tuple[uuid.UUID, str]] = {}


def canonical(text: str) -> str | None:
    """``str(uuid.UUID(text))``: the canonical text of the UUID ``text`` spells (any
    spelling ``uuid.UUID`` reads), None when it spells none."""
    found = _canonical.get(text, _MISSING)
    if found is _MISSING:
        try:
            found = str(uuid.UUID(text))
        except ValueError:
            found = None
        if len(text) > LONGEST_KEPT:
            return found  # a caller's megabyte of text is not kept 4,096 times over
        if len(_canonical) >= KEPT:
            _canonical.clear()
        _canonical[text] = found
    return found  # type: ignore[return-value]


def of(value: uuid.UUID) -> str:
    """``str(value)``, kept for an object seen before (the id of a row a cache holds)."""
    kept = _texts.get(id(value))
    if kept is not None and kept[0] is value:
        return kept[1]
    text = str(value)
    if len(_texts) >= KEPT:
        _texts.clear()
    _texts[id(value)] = (value, text)
    return text


def lower(value: Any) -> str:
    """``str(value).lower()``: an id's text, a UUID object's kept as ``of`` keeps it."""
    return of(value) if value.__class__ is uuid.UUID else str(value).lower()


def _random_hex() -> str:
    """A random (version 4) UUID's 32 hex digits, as ``uuid.uuid4().hex`` gives them."""
    raw = bytearray(os.urandom(16))
    raw[6] = raw[6] & 0x0F | 0x40  # version 4
    raw[8] = raw[8] & 0x3F | 0x80  # RFC 4122 variant
    return raw.hex()


def random_hex() -> str:
    """``uuid.uuid4().hex``."""
    return _random_hex()


def random_text() -> str:
    """``str(uuid.uuid4())``."""
    h = _random_hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
