"""Generation numbers in Redis: how a process caches what the send path reads and still sees
every change at the next request (docs/api.md, "Caches and changes").

Each change bumps the generation of its scope (every workspace's API keys, one workspace, one
account, one workspace's suppressions) once its transaction commits. A cache entry carries the
generation its scope had, as this process last read it from Redis, *before* the entry was
loaded. The request path reads the current generations inside the round trip it already makes
(the admission script, wrapped by ``gated``): an entry is used only when its generation is
still current, otherwise the script changes nothing and the request is decided again from the
database. Where Redis cannot be read the request fails with 503, so no stale answer slips
through; a bump lost to a Redis outage is bounded by the caches' own lifetime
(HERALD_KEY_CACHE_SECONDS).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from redis.exceptions import RedisError

from engine import runtime
from engine.database.db import database
from engine.formats import uuid_text
from engine.queue.redis_scripts import DirectScript

log = logging.getLogger(__name__)

KEYS_SCOPE = "herald:gen:keys"
# A value no generation ever has: an entry relying on two generations of one scope is stale.
_CONFLICT = "!"
# Past this many scopes the process forgets what it read (each is read again next time).
MAX_SCOPES = 50_000


def workspace_scope(workspace_id: Any) -> str:
    """Templates, versions, hierarchy and defaults, the workspace row (its providers)."""
    return f"herald:gen:ws:{uuid_text.lower(workspace_id)}"


def account_scope(account_id: Any) -> str:
    """Plan, allowance, entitlements and senders: shared by every workspace of the account."""
    return f"herald:gen:acct:{uuid_text.lower(account_id)}"


def suppressions_scope(workspace_id: Any) -> str:
    return f"herald:gen:supp:{uuid_text.lower(workspace_id)}"


# Scope -> the generation this process last read from Redis.
_seen: dict[str, str] = {}
_lock = threading.Lock()


def known(scope: str) -> str | None:
    """The scope's generation as last read by this process: the tag of an entry loaded now
    (read before the load, so a change committed after it can only make the entry stale)."""
    return _seen.get(scope)


def current(tag: str | None, scope: str) -> bool:
    """Whether an entry tagged ``tag`` may serve: its generation is the last one read (an
    entry loaded before this process ever read the scope serves only outside a request
    whose script checks it, bounded by its lifetime as before)."""
    return tag == _seen.get(scope)


def observe(values: dict[str, str]) -> None:
    with _lock:
        if len(_seen) + len(values) > MAX_SCOPES:
            _seen.clear()
        _seen.update(values)


def forget() -> None:
    """Drop every generation read (tests; a process that lost track)."""
    with _lock:
        _seen.clear()


# --- bumping -------------------------------------------------------------------------

# A missing generation (a new scope, or Redis lost its keys) starts at the clock in
# microseconds: larger than any value an earlier life of Redis gave it, so an entry tagged
# before a flush can never match again.
_BUMP = """
for i = 1, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then redis.call('INCR', KEYS[i])
  else redis.call('SET', KEYS[i], ARGV[1]) end
end
return #KEYS
"""


def _seed() -> str:
    return str(time.time_ns() // 1000)


def bump(scopes: Iterable[str]) -> None:
    """Move the scopes' generations on now: every process's entries of them go stale."""
    names = sorted(set(scopes))
    if not names:
        return
    try:
        runtime.redis_bound("generations_bump", lambda r: r.register_script(_BUMP))(
            keys=names, args=[_seed()])
    except (RedisError, OSError, RuntimeError) as err:
        # The change is committed (a RuntimeError: no Redis is configured, as for `herald db
        # upgrade`); other processes' caches follow within their lifetime.
        log.warning("generations not bumped (%s): caches follow within "
                    "HERALD_KEY_CACHE_SECONDS", err.__class__.__name__)


def changed(*scopes: str) -> None:
    """Bump ``scopes`` once the current transaction commits (at once outside one): a bump
    before the commit would let a process load the old rows under the new generation."""
    names = tuple(scopes)
    if names:
        database.after_commit(lambda: bump(names))


def changed_keys() -> None:
    changed(KEYS_SCOPE)


def changed_workspace(workspace_id: Any) -> None:
    changed(workspace_scope(workspace_id))


def changed_account(account_id: Any) -> None:
    changed(account_scope(account_id))


def changed_suppressions(workspace_id: Any) -> None:
    changed(suppressions_scope(workspace_id))


# --- reading -------------------------------------------------------------------------

class Ledger:
    """What one request's cached answers relied on: scope -> the tag used (None: only read)."""

    def __init__(self, *, fresh: bool = False) -> None:
        self.scopes: dict[str, str | None] = {}
        self.fresh = fresh  # decide from the database alone (the last try after stale ones)

    def rely(self, scope: str, tag: str) -> None:
        held = self.scopes.get(scope)
        self.scopes[scope] = tag if held in (None, tag) else _CONFLICT

    def read(self, scope: str) -> None:
        self.scopes.setdefault(scope, None)


_ledger: contextvars.ContextVar[Ledger | None] = contextvars.ContextVar(
    "herald_generation_ledger", default=None)


@contextlib.contextmanager
def ledger(*, fresh: bool = False) -> Iterator[Ledger]:
    held = Ledger(fresh=fresh)
    token = _ledger.set(held)
    try:
        yield held
    finally:
        _ledger.reset(token)


def cached(tag: str | None, scope: str) -> bool:
    """Whether a cache entry tagged ``tag`` may answer this request: it must be current as far
    as this process knows, and the request's script then checks it against Redis."""
    held = _ledger.get()
    if held is None:
        return current(tag, scope)
    if held.fresh or tag is None or not current(tag, scope):
        return False
    held.rely(scope, tag)
    return True


def loaded(scope: str) -> str | None:
    """The tag for an entry about to be loaded from the database; the request's script will
    read the scope, so the next request can use the entry."""
    held = _ledger.get()
    if held is not None:
        held.read(scope)
    return known(scope)


def read(scope: str) -> None:
    """Have this request's script read ``scope`` (what is cached under it is checked later,
    against the value the script returns: the preview's suppression answers)."""
    held = _ledger.get()
    if held is not None:
        held.read(scope)


# The gate wraps a script: its own KEYS and ARGV keep their positions; the generation keys
# follow its KEYS, and their expected values (or '' for "read only"), a seed and their count
# follow its ARGV. It answers {1, the script's answer, generations...}, or {0, 0,
# generations...} without running the script when an expected value is not current.
_GATE = """
local n = tonumber(ARGV[#ARGV])
local seed = ARGV[#ARGV - 1]
local found = {}
local stale = false
for i = 1, n do
  local key = KEYS[#KEYS - n + i]
  local value = redis.call('GET', key)
  if not value then
    redis.call('SET', key, seed)
    value = seed
  end
  found[i] = value
  local want = ARGV[#ARGV - 2 - n + i]
  if want ~= '' and want ~= value then stale = true end
end
if stale then return {0, 0, unpack(found)} end
return {1, body(), unpack(found)}
"""


def gated(source: str) -> str:
    """``source`` as a script that first checks the generations a request relied on."""
    return "local function body()\n" + source + "\nend\n" + _GATE


def gate_arguments(held: Ledger | None) -> tuple[list[str], list[str]]:
    """The keys and arguments to append to a gated script's own."""
    names = sorted(held.scopes) if held is not None else []
    wants = [held.scopes[name] or "" for name in names] if held is not None else []
    return names, [*wants, _seed(), str(len(names))]


class Stale(Exception):
    """A cached answer this request relied on is out of date: decide it again."""


def gate_answer(reply: Sequence[Any], names: Sequence[str]) -> Any:
    """The wrapped script's own answer; raises Stale when the gate did not run it."""
    values = [v.decode() if isinstance(v, bytes) else str(v) for v in reply[2:]]
    observe(dict(zip(names, values, strict=True)))
    if int(reply[0]) == 0:
        raise Stale()
    return reply[1]


_read_now: contextvars.ContextVar[set[str] | None] = contextvars.ContextVar(
    "herald_generations_read_now", default=None)


@contextlib.contextmanager
def read_once() -> Iterator[None]:
    """Inside, ``refresh`` reads each scope from Redis once: one delivery's answers are
    checked at its start, not again by each part that asks (an email's own provider was
    read twice and its sender once: three round trips where one does)."""
    token = _read_now.set(set())
    try:
        yield
    finally:
        _read_now.reset(token)


def refresh(scopes: Sequence[str]) -> None:
    """Read ``scopes`` now (one round trip), for a process that makes no admission call:
    the worker, before it uses what it caches per workspace (inside ``read_once``, only the
    scopes not read yet)."""
    done = _read_now.get()
    names = [name for name in scopes if done is None or name not in done]
    if not names:
        return
    reply = runtime.redis_bound("generations_read", lambda r: DirectScript(
        r, gated("return 0")))(keys=names, args=["" for _ in names] + [_seed(), str(len(names))])
    gate_answer(reply, names)
    if done is not None:
        done.update(names)
