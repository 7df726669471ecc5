"""A list's units of the account's monthly allowance: all of its rows taken at once when it
starts (or none, and nothing is sent), and given back for the rows that never went."""

from __future__ import annotations

from engine import runtime
from engine.sending import limits

# One script: the units are taken only when all of them are left.
_TAKE = """
local used = redis.call('GET', KEYS[1])
if not used then return -1 end
if tonumber(used) + tonumber(ARGV[2]) > tonumber(ARGV[1]) then return 0 end
redis.call('INCRBY', KEYS[1], ARGV[2])
return 1
"""


def take(account_id: str, monthly_limit: int, count: int) -> bool:
    """True when ``count`` units were taken; False (nothing taken) when fewer are left."""
    key = limits.allowance_key(account_id)
    redis = runtime.redis()
    taken = int(redis.eval(_TAKE, 1, key, monthly_limit, count))
    if taken == -1:  # Redis lost the counter: rebuilt from the database, as a send does
        redis.set(key, limits.used_this_month(account_id), nx=True, ex=40 * 24 * 3600)
        taken = int(redis.eval(_TAKE, 1, key, monthly_limit, count))
    return taken == 1


def give_back(account_id: str, count: int) -> None:
    if count > 0:
        runtime.redis().decrby(limits.allowance_key(account_id), count)
