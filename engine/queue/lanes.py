"""A lane per workspace inside each RQ queue, taken in turn (issue 37; docs/delivery.md,
"Queues and fairness").

RQ's queue list keeps every job id as RQ writes it: ``rq info``, the queue counts and the
reconciler read it unchanged. It is the set of tickets; the lanes decide the order. Beside
each queue (keys under ``herald:lanes:<queue>:``):

- ``ws:<workspace>``: the workspace's lane, its job ids in arrival order;
- ``ring``: the workspaces whose lane holds a job, in the order they take turns;
- ``of``: job id -> workspace, for the jobs in a lane.

The enqueue (engine/queue/queueing.py) writes the lane in the script that writes the job
(``JOIN``); a worker takes with ``take``, one script call that replaces RQ's LPOP. A job
enqueued without a workspace (RQ's own enqueues: the scheduler's, the web application's
mail, jobs queued before lanes existed) is untracked: served when it is the list's head, so
first come, first served, and never starved by the lanes. The take builds lane keys from
the ring inside the script, which Redis Cluster forbids; Herald runs one Redis server
(or Sentinel's primary), never a cluster.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Sequence
from typing import NamedTuple

from redis import Redis
from redis.commands.core import Script
from rq import Queue

from engine import runtime
from engine.queue.redis_scripts import DirectScript

PREFIX = "herald:lanes:"
# Stale lane entries (their ticket gone: ``rq empty``, a cancel) skipped in one take before
# it gives up on the lanes and serves the list's head, so one call stays short.
STALE_LIMIT = 100


def keys(queue_name: str, workspace: str) -> tuple[str, str, str]:
    """The ring, the job -> workspace hash and the workspace's lane of one queue."""
    return (*_queue_keys(queue_name), _lane_prefix(queue_name) + workspace)


def _queue_keys(queue_name: str) -> tuple[str, str]:
    return f"{PREFIX}{queue_name}:ring", f"{PREFIX}{queue_name}:of"


def _lane_prefix(queue_name: str) -> str:
    return f"{PREFIX}{queue_name}:ws:"


# Lua for the enqueue scripts: the job ARGV[1] joins workspace ARGV[2]'s lane, whose keys
# (``keys``) are the script's last three; nothing when ARGV[2] is '' (untracked). A lane
# that was empty puts its workspace at the back of the ring: its turn comes after those
# already waiting.
JOIN = """
if ARGV[2] ~= '' then
  redis.call('HSET', KEYS[#KEYS - 1], ARGV[1], ARGV[2])
  if redis.call('RPUSH', KEYS[#KEYS], ARGV[1]) == 1 then
    redis.call('RPUSH', KEYS[#KEYS - 2], ARGV[2])
  end
end
"""

# KEYS: for each queue, in the order served, its list, its ring and its hash ``of``.
# ARGV[1]: 0, or the number of the queue whose list gets the job id ARGV[2] back at its
# head first (what a blocking pop took); ARGV[3]: STALE_LIMIT; then each queue's lane key
# prefix; then the workspaces that are full (at their most in flight in this worker
# process): their turn passes to the next workspace, their jobs stay in the list.
# Returns {list, job id, workspace or ''}, {'held'} when only full workspaces' jobs wait,
# or false.
_TAKE = """
local back, limit = tonumber(ARGV[1]), tonumber(ARGV[3])
local queues = #KEYS / 3
local full, held = {}, false
for i = 4 + queues, #ARGV do full[ARGV[i]] = true end
if back > 0 then redis.call('LPUSH', KEYS[3 * back - 2], ARGV[2]) end
for q = 1, queues do
  local list, ring, owners, prefix = KEYS[3 * q - 2], KEYS[3 * q - 1], KEYS[3 * q], ARGV[q + 3]
  local skipped, passed = 0, false
  for _ = 1, limit do
    local head = redis.call('LINDEX', list, 0)
    if not head then
      -- No ticket left: whatever the lanes still hold is stale; drop it.
      if redis.call('EXISTS', ring, owners) > 0 then
        for _, workspace in ipairs(redis.call('LRANGE', ring, 0, -1)) do
          redis.call('DEL', prefix .. workspace)
        end
        redis.call('DEL', ring, owners)
      end
      break
    end
    local owner = redis.call('HGET', owners, head)
    if not owner then
      redis.call('LPOP', list)
      return {list, head, ''}
    end
    local workspace = redis.call('LPOP', ring)
    if not workspace then
      -- A tracked head and no turn to give (never after the scripts' own writes): serve
      -- the head, and give its lane its turns back if it still holds jobs.
      redis.call('LPOP', list)
      redis.call('HDEL', owners, head)
      if redis.call('LLEN', prefix .. owner) > 0 then redis.call('RPUSH', ring, owner) end
      return {list, head, owner}
    end
    if full[workspace] then
      -- Its turn passes; once every workspace waiting is full, this queue gives nothing.
      redis.call('RPUSH', ring, workspace)
      skipped = skipped + 1
      if skipped >= redis.call('LLEN', ring) then
        passed = true
        break
      end
    else
      local lane = prefix .. workspace
      local job = redis.call('LPOP', lane)
      if job then
        if redis.call('LLEN', lane) > 0 then redis.call('RPUSH', ring, workspace) end
        redis.call('HDEL', owners, job)
        if job == head then
          redis.call('LPOP', list)
          return {list, job, workspace}
        end
        -- Its turn, out of arrival order. Searched from the tail: a workspace that waits
        -- behind another's burst came after it.
        if redis.call('LREM', list, -1, job) == 1 then return {list, job, workspace} end
      end
    end
  end
  if passed then
    held = true
  else
    local head = redis.call('LPOP', list)
    if head then
      local owner = redis.call('HGET', owners, head) or ''
      redis.call('HDEL', owners, head)
      return {list, head, owner}
    end
  end
end
if held then return {'held'} end
return false
"""

# For a client other than the process's own. Bytes, so that the digest needs no client's
# encoder; each call names its client.
_take_script = Script(None, _TAKE.encode())  # type: ignore[arg-type]


class Taken(NamedTuple):
    """A job taken: its queue's key, its id, and its workspace (None: untracked)."""

    queue_key: bytes
    job_id: bytes
    workspace: str | None


# What ``take_turn`` gives when every job waiting belongs to a full workspace.
HELD = "held"


def take(connection: Redis, queue_keys: Sequence[str],
         back: tuple[str, str] | None = None) -> tuple[bytes, bytes] | None:
    """The next job of the first of ``queue_keys`` that holds one, the workspaces of each
    queue taking turns: (queue key, job id), or None. ``back``: (queue key, job id) put
    back at that list's head first, in the same call."""
    taken = take_turn(connection, queue_keys, back)
    return (taken.queue_key, taken.job_id) if isinstance(taken, Taken) else None


def take_turn(connection: Redis, queue_keys: Sequence[str],
              back: tuple[str, str] | None = None,
              full: Collection[str] = ()) -> Taken | str | None:
    """As ``take``, with the job's workspace, passing the turn of each workspace in
    ``full``: a Taken, HELD when only full workspaces' jobs wait, or None."""
    queue_keys = tuple(queue_keys)
    script_keys, prefixes = _layout(queue_keys)
    back_at = 0 if back is None else queue_keys.index(back[0]) + 1
    args = [back_at, back[1] if back is not None else "", STALE_LIMIT, *prefixes, *full]
    if connection is runtime.redis_if_made():
        # The worker's case, once a job: straight down this thread's connection, in less
        # CPU than RQ's own LPOP through the client (engine/queue/redis_scripts.py).
        direct = runtime.redis_bound("lanes", lambda redis: DirectScript(redis, _TAKE))
        result = direct(keys=script_keys, args=args)
    else:
        result = _take_script(keys=script_keys, args=args, client=connection)
    if not result:
        return None
    if len(result) == 1:
        return HELD
    owner = result[2].decode() if isinstance(result[2], bytes) else result[2]
    return Taken(result[0], result[1], owner or None)


@functools.lru_cache(maxsize=16)
def _layout(queue_keys: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """The take's keys and lane prefixes for these queues (a worker asks for the same few)."""
    names = [key.removeprefix(Queue.redis_queue_namespace_prefix) for key in queue_keys]
    script_keys = [k for key, name in zip(queue_keys, names, strict=True)
                   for k in (key, *_queue_keys(name))]
    return script_keys, [_lane_prefix(name) for name in names]
