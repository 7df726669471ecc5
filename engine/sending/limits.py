"""Rate limits (D10) and the monthly allowance (D9) in one Redis round trip per request
(docs/api.md, "Decisions").

Fixed windows aligned to the clock minute. The allowance counter is per account and UTC
month; when Redis has lost it, it is rebuilt from the database before counting.
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass

from peewee import fn

from engine import runtime
from engine.database import generations
from engine.database.models import Notification
from engine.database.vocabulary import NotificationStatus
from engine.queue.redis_scripts import DirectScript

SCRIPT = """
local ip = redis.call('INCR', KEYS[1])
if ip == 1 then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
if ip > tonumber(ARGV[1]) then return 1 end
if KEYS[2] ~= '' then
  local k = redis.call('INCR', KEYS[2])
  if k == 1 then redis.call('EXPIRE', KEYS[2], ARGV[3]) end
  if k > tonumber(ARGV[2]) then return 2 end
end
if ARGV[5] == '1' then
  local used = redis.call('GET', KEYS[3])
  if not used then return 4 end
  if tonumber(used) >= tonumber(ARGV[4]) then return 3 end
  redis.call('INCR', KEYS[3])
end
return 0
"""
OK, IP_LIMITED, KEY_LIMITED, ALLOWANCE_EXHAUSTED, ALLOWANCE_MISSING = range(5)


@dataclass(frozen=True)
class Verdict:
    code: int
    retry_after: int

    @property
    def rate_limited(self) -> bool:
        return self.code in (IP_LIMITED, KEY_LIMITED)


def _month(now: dt.datetime) -> str:
    return f"{now.year:04d}-{now.month:02d}"  # strftime's format parsing, at every send


def allowance_key(account_id: str, now: dt.datetime | None = None) -> str:
    now = now or dt.datetime.now(dt.UTC)
    return f"herald:allowance:{account_id}:{_month(now)}"


def used_this_month(account_id: str, now: dt.datetime | None = None) -> int:
    """Accepted, non-test notifications of the account in the current UTC month (a list's
    notifications its cancel stopped gave their units back: not counted)."""
    now = (now or dt.datetime.now(dt.UTC)).replace(tzinfo=None)
    start = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    return (Notification.select(fn.COUNT(Notification.id))
            .where(Notification.account == account_id, Notification.is_test == False,  # noqa: E712
                   Notification.created_at >= start,
                   Notification.status != NotificationStatus.CANCELLED).scalar() or 0)


def _script() -> DirectScript:
    """The registered script of this process's client: EVALSHA, so its text is sent once.
    It first checks the generations the request's cached answers relied on."""
    return runtime.redis_bound("limits", lambda redis: DirectScript(
        redis, generations.gated(SCRIPT)))


def windows(kind: str, ip: str, key_id: str | None, account_id: str | None,
            ) -> tuple[list[str], int]:
    """The script's three keys (IP window, key window, allowance) and the Retry-After."""
    clock = time.time()
    window = int(clock // 60)
    keys = [f"herald:rl:{kind}:ip:{ip}:{window}",
            f"herald:rl:{kind}:key:{key_id}:{window}" if key_id else "",
            allowance_key(account_id) if account_id else ""]
    return keys, 60 - int(clock % 60)


def script_args(ip_limit: int, key_limit: int, account_id: str | None,
                monthly_limit: int | None) -> list[object]:
    take = "1" if account_id is not None and monthly_limit is not None else "0"
    return [ip_limit, key_limit, 120, monthly_limit if monthly_limit is not None else 0, take]


def rebuild_and_take(rebuild_key: str, account_id: str, monthly_limit: int | None) -> int:
    """Redis lost the allowance counter (restart, flush): rebuild it from the database, then
    take one unit (OK or ALLOWANCE_EXHAUSTED)."""
    redis = runtime.redis()
    redis.set(rebuild_key, used_this_month(account_id), nx=True, ex=40 * 24 * 3600)
    return int(redis.eval(
        "local used = redis.call('GET', KEYS[1]) "
        "if tonumber(used) >= tonumber(ARGV[1]) then return 3 end "
        "redis.call('INCR', KEYS[1]) return 0", 1, rebuild_key, monthly_limit))


def check(kind: str, ip: str, key_id: str | None, ip_limit: int, key_limit: int,
          account_id: str | None = None, monthly_limit: int | None = None,
          held: generations.Ledger | None = None) -> Verdict:
    """Count this request in its windows and, if given, take one from the allowance; with
    ``held``, only while the generations its cached answers relied on are current (else
    nothing is counted and generations.Stale is raised)."""
    keys, retry_after = windows(kind, ip, key_id, account_id)
    args = script_args(ip_limit, key_limit, account_id, monthly_limit)
    names, gate = generations.gate_arguments(held)
    code = int(generations.gate_answer(_script()(keys=[*keys, *names], args=[*args, *gate]),
                                       names))
    if code == ALLOWANCE_MISSING:
        code = rebuild_and_take(keys[2], account_id, monthly_limit)
    return Verdict(code, retry_after)


def refund(account_id: str) -> None:
    """Give back an allowance unit taken for a send that was not accepted after all."""
    runtime.redis().decr(allowance_key(account_id))


def over_already(kind: str, ip: str, key_id: str | None, ip_limit: int,
                 key_limit: int) -> bool:
    """Whether this minute's windows are already full for the address or the key, read
    without counting: the API then skips reading the body of a request that will be 429."""
    window = int(time.time() // 60)
    names = [f"herald:rl:{kind}:ip:{ip}:{window}"]
    if key_id:
        names.append(f"herald:rl:{kind}:key:{key_id}:{window}")
    counts = [int(c or 0) for c in runtime.redis().mget(names)]
    return counts[0] >= ip_limit or (len(counts) > 1 and counts[1] >= key_limit)
