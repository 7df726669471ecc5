"""The shape a request body may have before it is parsed into objects.

The spec's largest request holds about 4,000 recipients, tags and headers, nested four deep;
a hostile 10 MB body of nested empty arrays cost a second of CPU and 200 MB to build. The
structure is counted in one pass over the bytes as they are, strings skipped at C speed
(one regular expression finds the next string or bracket or comma), and the pass stops at
the first limit reached: a body of 2.5 million recipients is refused after its first
20,000 values, with no copy of it made (blanking its strings first cost 445 MiB and 1.3 s).
Only a body of a plausible shape reaches the JSON parser.
"""

from __future__ import annotations

import re

MAX_DEPTH = 32
MAX_CONTAINERS = 10_000
MAX_VALUES = 20_000  # elements and members in all (commas, roughly)
# In JSON a string is a value or a member's name: at most two a comma, and a few more.
MAX_STRINGS = 2 * MAX_VALUES + 2
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},]')
_OPEN = frozenset(b"[{")
_CLOSE = frozenset(b"]}")
_COMMA = ord(",")


def _plainly_small(raw: bytes) -> bool:
    """Whether no limit can be reached, by counting bytes at C speed (a send's body of a
    few hundred bytes skips the pass): brackets, commas and quotes inside strings count too,
    which only errs on the side of the full pass."""
    return (raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH and raw.count(b",") < MAX_VALUES
            and raw.count(b'"') <= 2 * MAX_STRINGS)


def structure_problem(raw: bytes) -> str | None:
    """Why ``raw`` is refused before parsing, or None (also for text that is not JSON at
    all: the parser says that)."""
    if _plainly_small(raw):
        return None
    containers = values = strings = depth = 0
    for match in _TOKEN.finditer(raw):
        byte = raw[match.start()]
        if byte in _OPEN:
            containers += 1
            depth += 1
            if containers > MAX_CONTAINERS:
                return f"the body holds more than {MAX_CONTAINERS:,} arrays and objects"
            if depth > MAX_DEPTH:
                return f"the body nests deeper than {MAX_DEPTH} levels"
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
