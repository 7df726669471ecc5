"""A provider's ``rate=R``: at most R messages a second through it, across every worker
process, for relays that throttle (SES sends 14 a second by default, Twilio one a second a
long code).

The pace is kept in Redis (one key per provider, a digest of its URL), by the generic
cell rate algorithm: the key holds the moment the next message may go. Each message
reserves its moment in one script call and waits until then, so messages go out evenly
spaced, first come, first served, whichever process sends them. The clock is Redis's own
(``TIME``). A message whose moment is further off than ``MAX_WAIT`` reserves nothing and
is a transient failure, retried after that wait: a slot is never held longer than a
provider's deadline. When Redis cannot be reached the pace is not kept: it shapes the
traffic, and must never be the reason a message is not sent.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

from redis.exceptions import RedisError

from engine import runtime
from engine.plugins.contracts import TransientError
from engine.queue.redis_scripts import DirectScript

MAX_WAIT = 30.0  # seconds: a provider's longest deadline

# KEYS[1]: the provider's key; ARGV[1]: ms between two messages; ARGV[2]: the longest wait
# in ms. Returns the ms to wait before sending (0: now), or -(the wait) when it is longer.
_SCRIPT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local interval, longest = tonumber(ARGV[1]), tonumber(ARGV[2])
local at = tonumber(redis.call('GET', KEYS[1]) or '0')
if at < now then at = now end
local wait = at - now
if wait > longest then return -math.ceil(wait) end
redis.call('SET', KEYS[1], tostring(at + interval), 'PX', math.ceil(wait + interval) + 1000)
return math.ceil(wait)
"""


def rate_of(url: str) -> float | None:
    """The ``rate`` a provider URL asks for (messages a second), or None; ValueError when it
    is not a positive number."""
    values = parse_qs(urlsplit(url).query).get("rate")
    if not values:
        return None
    try:
        rate = float(values[-1])
    except ValueError:
        raise ValueError("a provider's rate must be a number of messages a second") from None
    if not 0 < rate < float("inf"):
        raise ValueError("a provider's rate must be a positive number of messages a second")
    return rate


def pace_key(plugin: str | None, url: str) -> str:
    digest = hashlib.sha256(f"{plugin or ''}\n{url}".encode()).hexdigest()[:32]
    return f"herald:pace:{digest}"


def _script() -> DirectScript:
    return runtime.redis_bound("pace", lambda redis: DirectScript(redis, _SCRIPT))


def wait_turn(key: str, rate: float) -> None:
    """Wait until this message may go; TransientError when that is over MAX_WAIT away."""
    try:
        wait_ms = int(_script()(keys=[key], args=[1000.0 / rate, int(MAX_WAIT * 1000)]))
    except (RedisError, OSError):
        return
    if wait_ms < 0:
        raise TransientError(f"the provider's rate ({rate:g} a second) is used up for the next "
                             f"{-wait_ms / 1000:.0f} s", retry_after=-wait_ms / 1000,
                             reason="rate")
    if wait_ms:
        time.sleep(wait_ms / 1000)


class PacedProvider:
    """A provider whose messages wait their turn under its ``rate``."""

    def __init__(self, provider: Any, key: str, rate: float) -> None:
        self.provider, self.key, self.rate = provider, key, rate
        for name in ("herald_scheme", "channel", "max_concurrency"):
            if hasattr(provider, name):
                setattr(self, name, getattr(provider, name))
        if hasattr(provider, "send_many"):
            self.send_many = self._send_many

    def send(self, message: Any) -> Any:
        wait_turn(self.key, self.rate)
        return self.provider.send(message)

    def _send_many(self, messages: Iterable[Any]) -> Iterator[Any]:
        def paced() -> Iterator[Any]:
            for message in messages:
                wait_turn(self.key, self.rate)
                yield message

        yield from self.provider.send_many(paced())

    def close(self) -> None:
        close = getattr(self.provider, "close", None)
        if close is not None:
            close()
