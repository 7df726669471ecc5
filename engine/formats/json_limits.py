"""The shape a request body may have before it is parsed into objects.

The spec's largest request holds about 4,000 recipients, tags and headers, nested four deep;
a hostile 10 MB body of nested empty arrays cost a second of CPU and 200 MB to build. The
structure is counted in one pass over the bytes as they are, strings skipped at C speed
(one regular expression finds the next string or bracket or comma), and the pass stops at
the first limit reached: a body of 2.5 million recipients is refused after its first
20,000 values, with no copy of it made (blanking its strings first cost 445 MiB and 1.3 s).
Only a body of a plausible shape reaches the JSON parser.

`loads` is what a request's body goes through. When the bytes alone show that no count can
reach its limit (brackets, commas and quotes counted inside strings too, which only
overcounts), the body is parsed at once and only its depth is read off the parsed value:
the editor's 50 KB template, a string full of escapes and of Handlebars braces, took the
pass 270 µs and takes the parser 75 (docs/performance.md,
"Measurements behind the code's shape").
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 32
MAX_CONTAINERS = 10_000
MAX_VALUES = 20_000  # elements and members in all (commas, roughly)
# In JSON a string is a value or a member's name: at most two a comma, and a few more.
MAX_STRINGS = 2 * MAX_VALUES + 2
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},]')
_OPEN = frozenset(b"[{")
_CLOSE = frozenset(b"]}")
_COMMA = ord(",")
_UNCOUNTED = bytes(set(range(256)) - set(b'[{,"'))
_TOO_DEEP = f"the body nests deeper than {MAX_DEPTH} levels"


def _plainly_small(raw: bytes) -> bool:
    """Whether no limit can be reached, by counting bytes at C speed (a send's body of a
    few hundred bytes skips the pass): brackets, commas and quotes inside strings count too,
    which only errs on the side of the full pass."""
    return (raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH and raw.count(b",") < MAX_VALUES
            and raw.count(b'"') <= 2 * MAX_STRINGS)


class StructureRefused(ValueError):
    """A body whose shape is past a limit; its message says which."""


class NotText(ValueError):
    """A body that parses but holds a lone UTF-16 surrogate: that is not text, and no
    database, mail or HTTP header could carry it (encoding it later is a 500)."""

    def __init__(self) -> None:
        super().__init__("the body holds a lone UTF-16 surrogate (\\ud800-\\udfff), "
                         "which is not text")


# Where a lone UTF-16 surrogate can hide in a body json.loads accepts: a \uD800-\uDFFF
# escape, its three UTF-8 bytes (ED A0-BF), or anywhere in a UTF-16 or UTF-32 body.
_MAYBE_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _may_hold_surrogate(raw: bytes) -> bool:
    # The pattern's two starts are searched for first (memchr-fast): the pattern itself is
    # tried at every byte, about 80 instructions each, and most bodies hold neither.
    return (b"\x00" in raw[:4] or raw.startswith((b"\xff\xfe", b"\xfe\xff"))
            or ((b"\\u" in raw or b"\xed" in raw)
                and _MAYBE_SURROGATE.search(raw) is not None))


def holds_surrogate(text: str) -> bool:
    """Whether ``text`` (a value parsed from JSON a person typed) holds a lone surrogate."""
    return _SURROGATE.search(text) is not None


def loads_text(raw: bytes) -> Any:
    """``loads``, then refused with NotText where a string holds a lone surrogate (checked
    only when the bytes could hide one: a scan of the parsed value costs, the regex not)."""
    value = loads(raw)
    if _may_hold_surrogate(raw):
        try:
            json.dumps(value, ensure_ascii=False).encode()
        except UnicodeEncodeError:
            raise NotText() from None
    return value


def loads(raw: bytes) -> Any:
    """``raw`` parsed, if its shape is within the limits; StructureRefused says why not, and
    json.loads's ValueError that it is not JSON."""
    # The bytes that count, in one pass (four counts over the whole body took longer).
    counted = raw.translate(None, _UNCOUNTED)
    brackets = counted.count(b"[") + counted.count(b"{")
    # A count (strings included) that could pass its limit: the pass decides.
    could_pass = (brackets > MAX_CONTAINERS or counted.count(b",") >= MAX_VALUES
                  or counted.count(b'"') > 2 * MAX_STRINGS)
    if could_pass and (problem := _counted_problem(raw)):
        raise StructureRefused(problem)
    try:
        value = json.loads(raw)
    except RecursionError:  # nested past the interpreter's limit, far past MAX_DEPTH
        raise StructureRefused(_TOO_DEEP) from None
    # The depth, the one limit the counts do not bound, read off the parsed value: the
    # parse is bounded (at most MAX_CONTAINERS arrays and objects, MAX_VALUES values).
    if brackets > MAX_DEPTH and _deeper_than_allowed(value):
        raise StructureRefused(_TOO_DEEP)
    return value


def _deeper_than_allowed(value: Any) -> bool:
    """Whether arrays and objects nest in ``value`` deeper than MAX_DEPTH (walked without
    recursion; at most MAX_CONTAINERS of them)."""
    stack = [(value, 1)] if isinstance(value, (dict, list)) else []
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1))
    return False


def structure_problem(raw: bytes) -> str | None:
    """Why ``raw`` is refused before parsing, or None (also for text that is not JSON at
    all: the parser says that)."""
    return None if _plainly_small(raw) else _counted_problem(raw)


def _counted_problem(raw: bytes) -> str | None:
    """The counting pass itself: each string, bracket and comma outside strings in turn."""
    containers = values = strings = depth = 0
    for match in _TOKEN.finditer(raw):
        byte = raw[match.start()]
        if byte in _OPEN:
            containers += 1
            depth += 1
            if containers > MAX_CONTAINERS:
                return f"the body holds more than {MAX_CONTAINERS:,} arrays and objects"
            if depth > MAX_DEPTH:
                return _TOO_DEEP
        elif byte in _CLOSE:
            depth -= 1
        elif byte == _COMMA:
            values += 1
            if values >= MAX_VALUES:
                return f"the body holds more than {MAX_VALUES:,} values"
        else:
            strings += 1
            if strings > MAX_STRINGS:
                return f"the body holds more than {MAX_VALUES:,} values"
    return None
