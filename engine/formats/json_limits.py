"""The shape a request body may have before it is parsed into objects.

The spec's largest request holds about 4,000 recipients, tags and headers, nested four deep;
a hostile 10 MB body of nested empty arrays cost a second of CPU and 200 MB to build. Strings
are blanked out and the structure counted at C speed (regular expressions, bytes.count), so
only a body of a plausible shape reaches the JSON parser.
"""

from __future__ import annotations

import re

MAX_DEPTH = 32
MAX_CONTAINERS = 10_000
MAX_VALUES = 20_000  # elements and members in all (commas, roughly)
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(rb"[^\[\]{}]+")


def structure_problem(raw: bytes) -> str | None:
    """Why ``raw`` is refused before parsing, or None (also for text that is not JSON at
    all: the parser says that)."""
    bare = _STRING.sub(b'""', raw)
    containers = bare.count(b"[") + bare.count(b"{")
    if containers > MAX_CONTAINERS:
        return f"the body holds more than {MAX_CONTAINERS:,} arrays and objects"
    if bare.count(b",") >= MAX_VALUES:
        return f"the body holds more than {MAX_VALUES:,} values"
    depth = deepest = 0
    for byte in _NOT_BRACKET.sub(b"", bare):  # at most 2 x MAX_CONTAINERS brackets
        depth += 1 if byte in b"[{" else -1
        deepest = max(deepest, depth)
    if deepest > MAX_DEPTH:
        return f"the body nests deeper than {MAX_DEPTH} levels"
    return None
