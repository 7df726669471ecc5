"""Rate limits (D10) and the monthly allowance (D9) in one Redis round trip per request
(docs/api.md, "Decisions").

Fixed windows aligned to the clock minute. The allowance's counter, its scripts and its
rebuild from the database when Redis has lost it are engine/sending/allowance.py's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from engine import runtime
from engine.database import generations
from engine.queue.redis_scripts import DirectScript
from engine.sending import allowance

# The allowance's own step is its module's (engine/sending/allowance.py): one unit taken
# only once the request passed both windows.
SCRIPT = allowance.TAKE_FUNCTION + """
local ip = redis.call('INCR', KEYS[1])
if ip == 1 then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
if ip > tonumber(ARGV[1]) then return 1 end
if KEYS[2] ~= '' then
  local k = redis.call('INCR', KEYS[2])
  if k == 1 then redis.call('EXPIRE', KEYS[2], ARGV[3]) end
  if k > tonumber(ARGV[2]) then return 2 end
end
if ARGV[5] == '1' then
  local taken = take_allowance(KEYS[3], ARGV[4], 1)
  if taken ~= 0 then return taken end
end
return 0
"""
OK, IP_LIMITED, KEY_LIMITED = 0, 1, 2
ALLOWANCE_EXHAUSTED, ALLOWANCE_MISSING = allowance.EXHAUSTED, allowance.MISSING


@dataclass(frozen=True)
class Verdict:
    code: int
    retry_after: int

    @property
    def rate_limited(self) -> bool:
        return self.code in (IP_LIMITED, KEY_LIMITED)


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
            allowance.key(account_id) if account_id else ""]
    return keys, 60 - int(clock % 60)


def script_args(ip_limit: int, key_limit: int, account_id: str | None,
                monthly_limit: int | None) -> list[object]:
    take = "1" if account_id is not None and monthly_limit is not None else "0"
    return [ip_limit, key_limit, 120, monthly_limit if monthly_limit is not None else 0, take]


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
    if code == ALLOWANCE_MISSING:  # Redis lost the counter: rebuilt, then one unit taken
        code = OK if allowance.rebuild_and_take(account_id, monthly_limit) \
            else ALLOWANCE_EXHAUSTED
    return Verdict(code, retry_after)


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
