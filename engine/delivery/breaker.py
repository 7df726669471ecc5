"""A circuit breaker per provider, shared through Redis by every worker thread and process.

Closed: every message tries the provider; ``failures`` consecutive failures (a connection
that fails, a timeout, a temporary answer) open it. Open: the provider is skipped for
``seconds``. Then half-open: one caller (the probe) tries it while the others keep
skipping; its success closes the breaker, its failure opens it for another period. So a
dead provider costs one connect timeout per period, whatever the traffic.

The clock is Redis's own (``TIME``), so processes whose clocks differ still agree. When
Redis cannot be reached the breaker lets everything through: it saves time, and must never
be the reason a message is not sent.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from redis.exceptions import RedisError

from engine import runtime
from engine.queue.redis_scripts import DirectScript

CLOSED, OPEN, PROBE = 1, 0, 2

_SCRIPT = """
local key, op = KEYS[1], ARGV[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local period = tonumber(ARGV[3])
if op == 'allow' then
  local open_until = tonumber(redis.call('HGET', key, 'open_until') or '0')
  if open_until == 0 then
    return {1, tonumber(redis.call('HGET', key, 'failures') or '0')}
  end
  if now < open_until then return {0, open_until - now} end
  local probe_until = tonumber(redis.call('HGET', key, 'probe_until') or '0')
  if now < probe_until then return {0, probe_until - now} end
  redis.call('HSET', key, 'probe_until', now + period)
  return {2, 0}
elseif op == 'fail' then
  local failures = redis.call('HINCRBY', key, 'failures', 1)
  if failures >= tonumber(ARGV[2]) then
    redis.call('HSET', key, 'open_until', now + period, 'probe_until', 0)
  end
  redis.call('PEXPIRE', key, period * 2 + 3600000)
  return {failures, 0}
end
redis.call('DEL', key)
return {1, 0}
"""


@dataclass(frozen=True)
class Admission:
    """What the breaker says about one try: CLOSED (``failures`` so far), OPEN (skip it,
    ``wait`` seconds before it may be tried again) or PROBE (this try is the probe)."""

    state: int
    failures: int = 0
    wait: float = 0.0

    @property
    def allowed(self) -> bool:
        return self.state != OPEN


def breaker_key(plugin: str | None, url: str) -> str:
    """The breaker's Redis key: a digest of the provider, whose URL holds its credentials."""
    digest = hashlib.sha256(f"{plugin or ''}\n{url}".encode()).hexdigest()[:32]
    return f"herald:breaker:{digest}"


def _script() -> DirectScript:
    return runtime.redis_bound("breaker", lambda redis: DirectScript(redis, _SCRIPT))


def _call(key: str, op: str) -> list[int] | None:
    settings = runtime.settings()
    try:
        reply = _script()(keys=[key], args=[op, settings.provider_breaker_failures,
                                            int(settings.provider_breaker_seconds * 1000)])
    except (RedisError, OSError):
        return None
    return [int(value) for value in reply]


def admit(key: str) -> Admission:
    """Whether the provider behind ``key`` may be tried now."""
    reply = _call(key, "allow")
    if reply is None:
        return Admission(CLOSED)
    state, detail = reply
    if state == OPEN:
        return Admission(OPEN, wait=detail / 1000)
    return Admission(state, failures=detail if state == CLOSED else 0)


def failed(key: str) -> None:
    """The provider failed a try (connection, timeout, temporary answer)."""
    _call(key, "fail")


def succeeded(key: str, admission: Admission) -> None:
    """The provider answered: forget its failures (nothing to write when there were none)."""
    if admission.state == PROBE or admission.failures:
        _call(key, "ok")
