"""API-key lookup for the hot path: cached per process, checked against the keys'
generation in the request's admission round trip (engine/database/generations.py), so a key
created, revoked or changed anywhere is seen by the next request on every process.

lastUsedAt is written behind, at most once a minute per key and process.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from dataclasses import dataclass

from engine import runtime
from engine.database import generations, secrets
from engine.database.db import drop_connection
from engine.database.generations import KEYS_SCOPE
from engine.database.models import ApiKey, key_status, utcnow
from engine.observability.outages import DATABASE_DOWN, dependency_of, incidents

LAST_USED_EVERY = 60.0


@dataclass(frozen=True)
class KeyInfo:
    id: str
    workspace_id: str
    name: str
    created_at: dt.datetime
    expires_at: dt.datetime | None
    revoked_at: dt.datetime | None
    last_used_at: dt.datetime | None

    def status(self, now: dt.datetime | None = None) -> str:
        return key_status(self.revoked_at, self.expires_at, now)


@dataclass(frozen=True)
class Found:
    """A header's look-up: the key (None when it does not resolve) and the keys' generation
    it was loaded under, so that the same request's admission can rely on it (``reuse``)
    instead of hashing the header and looking it up again."""
    info: KeyInfo | None
    tag: str | None


# digest -> (expires at, the key or None and the keys' generation it was loaded under)
_cache: dict[str, tuple[float, Found]] = {}
_last_written: dict[str, float] = {}
_lock = threading.Lock()


def lookup(value: str) -> KeyInfo | None:
    """The key behind a header value, whatever its status; None when it does not resolve."""
    return find(value).info


def reuse(found: Found | None) -> bool:
    """Whether ``found``, looked up earlier in this request, may answer for the key now: the
    same test as a cached entry's, so the request's script checks its generation (a key
    revoked meanwhile is refused) and the last try after a stale one reads the database."""
    return found is not None and generations.cached(found.tag, KEYS_SCOPE)


def find(value: str) -> Found:
    """``lookup``'s answer with the generation it was loaded under."""
    digest = secrets.hash_api_key(value)
    now = time.monotonic()
    hit = _cache.get(digest)
    if hit is not None and hit[0] > now and generations.cached(hit[1].tag, KEYS_SCOPE):
        return hit[1]
    tag = generations.loaded(KEYS_SCOPE)
    row = ApiKey.get_or_none(ApiKey.key_hash == digest)
    info = None if row is None else KeyInfo(
        str(row.id), str(row.workspace_id), row.name, row.created_at, row.expires_at,
        row.revoked_at, row.last_used_at)
    found = Found(info, tag)
    with _lock:
        if len(_cache) > 10000:
            _cache.clear()
        _cache[digest] = (now + runtime.settings().key_cache_seconds, found)
    return found


def touch(info: KeyInfo) -> None:
    """Record use, at most once a minute per key from this process; never fails the request
    for a database lost meanwhile."""
    now = time.monotonic()
    last = _last_written.get(info.id)
    if last is not None and now - last < LAST_USED_EVERY:
        return
    _last_written[info.id] = now
    try:
        ApiKey.update(last_used_at=utcnow()).where(ApiKey.id == info.id).execute()
    except DATABASE_DOWN as err:
        # Written after the send's commit: a database lost now must not turn an accepted
        # send into a 503. The next request writes it; the broken connection is dropped.
        if dependency_of(err) is None:
            raise
        _last_written.pop(info.id, None)
        incidents.failed("database", err)
        drop_connection()


def clear() -> None:
    with _lock:
        _cache.clear()
        _last_written.clear()
