"""The monthly allowance (D9): every way a unit is taken or given back, and every script
that does it.

One counter per account and UTC month in Redis. A send takes one unit inside the admission
script (``TAKE_FUNCTION``, which engine/sending/limits.py puts after the rate-limit
windows); a list takes all of its rows' units at once when it starts, or none (``take``);
a unit not used after all is given back. A counter Redis has lost (a restart, a flush) is
rebuilt from the database before anything is taken: the accepted, non-test notifications
of the month.
"""

from __future__ import annotations

import datetime as dt

from peewee import fn

from engine import runtime
from engine.database.models import Notification
from engine.database.vocabulary import NotificationStatus
from engine.queue.redis_scripts import DirectScript

# What a take answers (the admission script's own codes: engine/sending/limits.py).
TAKEN, EXHAUSTED, MISSING = 0, 3, 4
KEEP_SECONDS = 40 * 24 * 3600  # a month's counter outlives its month
# Take ``count`` units from the counter ``key`` when all of them are left, else none.
TAKE_FUNCTION = """
local function take_allowance(key, limit, count)
  local used = redis.call('GET', key)
  if not used then return 4 end
  if tonumber(used) + tonumber(count) > tonumber(limit) then return 3 end
  redis.call('INCRBY', key, count)
  return 0
end
"""
_TAKE = TAKE_FUNCTION + "return take_allowance(KEYS[1], ARGV[1], ARGV[2])\n"
# Give back one unit ('' : none to give back), as a send refused after admission does.
GIVE_BACK_FUNCTION = """
local function give_back_allowance(key)
  if key ~= '' then redis.call('DECR', key) end
end
"""


def _month(now: dt.datetime) -> str:
    return f"{now.year:04d}-{now.month:02d}"  # strftime's format parsing, at every send


def key(account_id: str, now: dt.datetime | None = None) -> str:
    """The account's counter of this UTC month."""
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


def _take(counter: str, monthly_limit: int, count: int) -> int:
    script = runtime.redis_bound("allowance_take", lambda redis: DirectScript(redis, _TAKE))
    return int(script(keys=[counter], args=[monthly_limit, count]))


def rebuild_and_take(account_id: str, monthly_limit: int, count: int = 1) -> bool:
    """Redis lost the counter: rebuilt from the database (unless another process rebuilt
    it meanwhile), then ``count`` units taken; False (nothing taken) when fewer are left."""
    counter = key(account_id)
    runtime.redis().set(counter, used_this_month(account_id), nx=True, ex=KEEP_SECONDS)
    return _take(counter, monthly_limit, count) == TAKEN


def take(account_id: str, monthly_limit: int, count: int = 1) -> bool:
    """True when ``count`` units were taken; False (nothing taken) when fewer are left."""
    taken = _take(key(account_id), monthly_limit, count)
    if taken == MISSING:
        return rebuild_and_take(account_id, monthly_limit, count)
    return taken == TAKEN


def give_back(account_id: str, count: int = 1) -> None:
    """Give back units taken for notifications that were not accepted or not sent."""
    if count > 0:
        runtime.redis().decrby(key(account_id), count)
