"""Attempt limits of the sign-in and reset forms: fixed windows counted in Redis, shared by
every process, per email address and per client IP."""

from __future__ import annotations

import hashlib
import time

from engine import runtime

WINDOW = 15 * 60
# Per window: a person mistyping gets ten tries; an office behind one IP gets many more.
LIMITS = {"sign-in": {"address": 10, "ip": 50}, "reset": {"address": 3, "ip": 20}}


def _key(kind: str, what: str, value: str, window: int) -> str:
    # Hashed: Redis is no place to keep a list of the addresses people typed.
    digest = hashlib.sha256(value.strip().lower().encode("utf-8", "replace")).hexdigest()[:32]
    return f"herald:web:{kind}:{what}:{digest}:{window}"


def attempt(kind: str, address: str, ip: str) -> int | None:
    """Count one attempt; None when allowed, else the seconds until the window ends."""
    now = time.time()
    window = int(now // WINDOW)
    pipe = runtime.redis().pipeline()
    keys = [(_key(kind, "address", address, window), LIMITS[kind]["address"]),
            (_key(kind, "ip", ip, window), LIMITS[kind]["ip"])]
    for key, _ in keys:
        pipe.incr(key)
        pipe.expire(key, WINDOW + 60)
    counts = pipe.execute()[::2]
    if any(count > limit for count, (_, limit) in zip(counts, keys, strict=True)):
        return int(WINDOW - now % WINDOW) + 1
    return None
