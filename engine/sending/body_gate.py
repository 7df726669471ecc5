"""Whether a request's body is worth parsing: the cheap checks of admission, run first.

Parsing a 10 MB body costs about a second of CPU; a request without a valid key, or from an
address or key already over its rate limit, is refused whatever its body holds. Admission
(admission.py) still decides and counts the request in D1's order; this only lets the API
skip the parse for a request that cannot get past it.
"""

from __future__ import annotations

from engine import runtime
from engine.catalog import keycache
from engine.sending import limits


def body_worth_parsing(header: str | None, ip: str) -> bool:
    """False when admission will refuse the request before looking at its body."""
    if not header:
        return False
    key = keycache.lookup(header)
    if key is None or key.status() != "active":
        return False
    settings = runtime.settings()
    return not limits.over_already("send", ip, key.id, settings.rate_limit_send_per_ip,
                                   settings.rate_limit_send_per_key)
