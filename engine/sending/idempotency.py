"""Idempotency-Key on send (Stripe's semantics), inside the round trips a send already makes.

One Redis record per (workspace, key), ``p`` while the first request runs and ``d`` once it
was accepted, each followed by the body's digest and the first answer's correlationId:

- the admission script (``limits.SCRIPT``, wrapped here) reads the record before it counts
  anything: a replay, a reuse with another body and a request racing the first are answered
  without touching the rate-limit windows or the allowance; otherwise it counts as usual
  and, for a request that passed everything, writes the pending record in the same call;
- the enqueue script marks the record done (engine/queue/queueing.py), kept 24 hours;
- a request refused after admission (a render error, the database) gives its allowance unit
  back and drops its pending record in one call, so a corrected retry proceeds.

The notification row keeps the key and the digest under a unique index: a Redis that lost
its records (a restart, a flush) still cannot accept one key twice (``insert_once``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from peewee import IntegrityError

from engine import runtime
from engine.database import generations
from engine.database.models import Notification, utcnow
from engine.errors import ApiError
from engine.queue import unheard_commits
from engine.queue.redis_scripts import DirectScript
from engine.sending import allowance, limits

HEADER = "Idempotency-Key"
KEEP_SECONDS = 24 * 3600
# A pending record outlives any send; one whose request died goes by itself (the unique
# index still stops a second notification if a send ever took longer).
PENDING_SECONDS = 60
# How long a request racing the first one waits for its answer before a 409.
WAIT_SECONDS = 2.0
ACCEPTED_MESSAGE = "Notification accepted and queued for delivery."
REUSED, REPLAY, IN_FLIGHT = 5, 6, 7
_KEY = re.compile(r"[\x20-\x7e]{1,255}")

_ADMIT = (
    "local function admit()\n" + limits.SCRIPT + "\nend\n"
    """
local record = redis.call('GET', KEYS[4])
if record then
  if string.sub(record, 2, 65) ~= ARGV[6] then return {5} end
  if string.sub(record, 1, 1) == 'd' then return {6, record} end
  return {7, record}
end
local code = admit()
if code == 0 and ARGV[5] == '1' then
  redis.call('SET', KEYS[4], ARGV[7], 'EX', ARGV[8])
end
return {code}
""")
_RELEASE = allowance.GIVE_BACK_FUNCTION + """
give_back_allowance(KEYS[1])
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
return 1
"""


class Replayed(Exception):
    """The key's first request was accepted with this body: its answer, given again."""

    def __init__(self, correlation_id: str) -> None:
        super().__init__(correlation_id)
        self.answer = {"accepted": True, "correlationId": correlation_id,
                       "message": ACCEPTED_MESSAGE}


@dataclass(frozen=True)
class IdempotencyKey:
    """A request's Idempotency-Key header: the key and its body's digest, or why the header
    is refused (raised at its place in D1's order, after authentication)."""

    key: str | None
    digest: str
    error: ApiError | None = None

    @property
    def usable(self) -> bool:
        return self.error is None and self.key is not None

    def record(self, workspace_id: str) -> str:
        """The Redis key of the record: scoped to the workspace."""
        return f"herald:idem:{workspace_id.lower()}:{self.key}"

    def pending(self, correlation_id: str) -> str:
        return f"p{self.digest}{correlation_id}"

    def done(self, correlation_id: str) -> str:
        return f"d{self.digest}{correlation_id}"


def read_header(value: str | None, body: object, parse_error: ApiError | None,
                ) -> IdempotencyKey | None:
    """None without the header; a body that did not parse has no digest and stores nothing."""
    if value is None:
        return None
    if not _KEY.fullmatch(value):
        return IdempotencyKey(None, "", ApiError(
            400, "notifications.idempotency_key_invalid",
            "The Idempotency-Key header must be 1 to 255 printable ASCII characters."))
    if parse_error is not None:
        return IdempotencyKey(None, "")
    return IdempotencyKey(value, digest(body))


def _canonical(value: Any) -> Any:
    """The JSON value with 1.0 and 1 alike, as RFC 8785 writes numbers."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    return value


def digest(body: object) -> str:
    """SHA-256 of the body's canonical JSON: member order, spacing and escapes do not count."""
    text = json.dumps(_canonical(body), sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _script(name: str, source: str) -> DirectScript:
    return runtime.redis_bound(name, lambda redis: DirectScript(redis, source))


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def admit(idem: IdempotencyKey, workspace_id: str, correlation_id: str, ip: str,
          key_id: str, account_id: str | None, monthly_limit: int | None,
          held: generations.Ledger | None = None) -> limits.Verdict:
    """limits.check with the record read first, in the same call; raises Replayed, 422 or
    409 when the key has a record, and leaves a pending record when the request passed."""
    settings = runtime.settings()
    keys, retry_after = limits.windows("send", ip, key_id, account_id)
    record = idem.record(workspace_id)
    args = [*limits.script_args(settings.rate_limit_send_per_ip,
                                settings.rate_limit_send_per_key, account_id, monthly_limit),
            idem.digest, idem.pending(correlation_id), PENDING_SECONDS]
    names, gate = generations.gate_arguments(held)
    reply = generations.gate_answer(_script("idempotency_admit", generations.gated(_ADMIT))(
        keys=[*keys, record, *names], args=[*args, *gate]), names)
    code = int(reply[0])
    if code == REUSED:
        raise _reused()
    if code in (REPLAY, IN_FLIGHT):
        _answer_of(_text(reply[1]), idem, record)
    if code == limits.ALLOWANCE_MISSING and account_id is not None:
        code = limits.OK if allowance.rebuild_and_take(account_id, monthly_limit) \
            else limits.ALLOWANCE_EXHAUSTED
        if code == limits.OK and not runtime.redis().set(
                record, idem.pending(correlation_id), nx=True, ex=PENDING_SECONDS):
            allowance.give_back(account_id)  # another request took the key meanwhile
            _answer_of(None, idem, record)
    return limits.Verdict(code, retry_after)


def _reused() -> ApiError:
    return ApiError(422, "notifications.idempotency_key_reused",
                    "This Idempotency-Key was used with another request body in the last "
                    "24 hours.")


def _answer_of(record: str | None, idem: IdempotencyKey, redis_key: str) -> None:
    """Replay a done record; wait a little for a pending one to finish, then 409 (at once
    when the record goes: the first request was refused, and a retry will proceed)."""
    deadline = time.monotonic() + WAIT_SECONDS
    pause = 0.01
    while True:
        if record is not None:
            if record[1:65] != idem.digest:
                raise _reused()
            if record[0] == "d":
                raise Replayed(record[65:])
        if time.monotonic() >= deadline:
            break
        time.sleep(pause)
        pause = min(pause * 2, 0.2)
        value = runtime.redis().get(redis_key)
        if value is None:  # the first request was refused after all: try again now
            break
        record = _text(value)
    raise ApiError(409, "notifications.idempotency_key_in_use",
                   "A request with this Idempotency-Key is still being processed; retry "
                   "after the time in Retry-After.", headers={"Retry-After": "1"})


def release(idem: IdempotencyKey, workspace_id: str, correlation_id: str,
            account_id: str) -> None:
    """Not accepted after all: the allowance unit back and the pending record gone (only
    ours: a record another request wrote since is left alone)."""
    _script("idempotency_release", _RELEASE)(
        keys=[allowance.key(account_id), idem.record(workspace_id)],
        args=[idem.pending(correlation_id)])


def insert_once(insert: Callable[[], None], idem: IdempotencyKey, workspace_id: str) -> None:
    """Run the notification's insert; when the unique index says the key already has a
    notification in this workspace (Redis had lost the record), answer as the record would.

    A notification older than the 24 hours lets go of the key and the insert runs again.
    The row found may be one whose send was answered 503 (engine/queue/unheard_commits.py):
    this answer names it, so it is delivered after all.
    """
    try:
        insert()
        return
    except IntegrityError:
        pass
    row = (Notification.select(Notification.id, Notification.correlation_id,
                               Notification.idempotency_digest, Notification.created_at)
           .where(Notification.workspace == workspace_id,
                  Notification.idempotency_key == idem.key).first())
    if row is not None and row.created_at > utcnow() - dt.timedelta(seconds=KEEP_SECONDS):
        if row.idempotency_digest != idem.digest:
            raise _reused()
        pipe = runtime.redis().pipeline(transaction=False)
        pipe.set(idem.record(workspace_id), idem.done(row.correlation_id), ex=KEEP_SECONDS)
        # A row whose first send was answered 503 (its commit unheard) is this answer's
        # now: the reconciler delivers it instead of dropping it.
        unheard_commits.lift(str(row.id), pipe)
        pipe.execute()
        raise Replayed(row.correlation_id)
    if row is not None:
        Notification.update(idempotency_key=None, idempotency_digest=None).where(
            Notification.id == row.id).execute()
    insert()
