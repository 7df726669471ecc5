"""Whether a request's body is worth parsing: the cheap checks of admission, run first.

Parsing a 10 MB body costs about a second of CPU; a request without a valid key, or from an
address or key already over its rate limit, is refused whatever its body holds. Admission
(admission.py) still decides and counts the request in D1's order; this only lets the API
skip the parse for a request that cannot get past it.

The rate-limit windows are read only for a body over ``SMALL_BODY`` (or of unknown length):
a small body parses in microseconds, less than the Redis round trip that would spare it
(about a third of a send's CPU, measured: docs/performance.md). The key, from this
process's cache, is checked for every body.
"""

from __future__ import annotations

from typing import NamedTuple

from engine import runtime
from engine.catalog import keycache
from engine.sending import limits

SMALL_BODY = 16 * 1024  # bytes: parsed (bounded, docs/api.md) sooner than Redis answers


class Gate(NamedTuple):
    parse: bool  # whether the body is worth parsing
    # The header's look-up, for the request's admission to use while it is current
    # (keycache.reuse): the key is hashed and looked up once a request.
    found: keycache.Found | None


def check(header: str | None, ip: str, length: int | None = None) -> Gate:
    """``parse`` false when admission will refuse the request before looking at its body
    (``length``: its Content-Length, None when not given)."""
    if not header:
        return Gate(False, None)
    found = keycache.find(header)
    key = found.info
    if key is None or key.status() != "active":
        return Gate(False, found)
    if length is not None and length <= SMALL_BODY:
        return Gate(True, found)  # admission counts and refuses it all the same, in D1's order
    settings = runtime.settings()
    return Gate(not limits.over_already("send", ip, key.id, settings.rate_limit_send_per_ip,
                                        settings.rate_limit_send_per_key), found)
