"""The callbacks' RQ job: send a workspace's due callbacks, one at a time, in the order they
were recorded.

- **One sender per workspace.** A Redis lock per workspace: a job that finds it taken
  leaves a mark (``due``) and returns; the holder looks at the mark before it lets go, so
  nothing recorded meanwhile waits for the next job.
- **Order.** Due callbacks go oldest first. One being retried waits for its time while the
  ones after it go on (spec 6.5 retries would otherwise hold a workspace for an hour), but
  a receiver that does not answer at all (timeout, refused connection, TLS) ends the pass:
  the rest wait for the retry instead of each costing the timeout again.
- **Never holding deliveries.** In ``herald worker`` the worker takes a callbacks job as it
  takes a delivery job: at dequeue it hands the workspace's pass to a pass slot of its own
  (engine/worker/handoff.py: as many as ``--concurrency``, apart from the delivery slots,
  each workspace's pass on one, several workspaces at once) through ``hand_over``, and
  settles the job without running it. Where RQ runs the job (the fork-per-job worker,
  tests) the job sends inside it, and its result is how many attempts it made.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from engine import runtime
from engine.callbacks import queue
from engine.callbacks.sending import DUE, RETRYING, attempt
from engine.database.models import utcnow
from engine.database.models.callbacks import Callback

LOCK_SECONDS = 60  # a worker killed mid-pass frees it by then
# The lock is renewed after an attempt once this long has passed since it was last set: it
# then always has 40 s left when an attempt starts, twice the longest an attempt waits (a
# 10 s connect, then a 10 s read), and a pass makes one round trip for it every 20 s at
# most, where it made one per attempt (issue 43: one of the four round trips of each).
RENEW_AFTER = LOCK_SECONDS / 3
BATCH = 100
PASS_SECONDS = 5.0  # then the pass yields its slot to other workspaces' jobs
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

_waiting_lock = threading.Lock()
# Workspaces whose pass is handed to a slot and not yet started: each outcome recorded
# enqueues a job, and a burst of them (a fan-out's deliveries) would otherwise hand over a
# pass each, all but the first finding nothing after five round trips. The waiting pass
# reads every row that is due when it starts, these included.
_waiting: set[str] = set()


def _keys(workspace_id: str) -> tuple[str, str]:
    return f"herald:callbacks:lock:{workspace_id}", f"herald:callbacks:due:{workspace_id}"


def send_callbacks(workspace_id: str) -> int:
    """RQ entry point, where RQ runs the job: the workspace's pass, inside the job; its
    result is how many attempts it made."""
    _started(workspace_id)
    return drain(workspace_id)


def _started(workspace_id: str) -> None:
    # From here an outcome recorded asks for a job of its own (queue.enqueue): this job's
    # pass may already have read the rows.
    runtime.redis().delete(queue.queued_key(workspace_id))


def hand_over(workspace_id: str, hand: Callable[[Callable[[], int]], None]) -> bool:
    """The job's start where the worker runs its pass in a slot (``hand``): the pass is
    handed over unless one of the workspace's waits already. Returns whether it was."""
    workspace_id = str(workspace_id)
    _started(workspace_id)
    with _waiting_lock:
        if workspace_id in _waiting:
            return False
        _waiting.add(workspace_id)
    try:
        hand(lambda: _pass_started(workspace_id))
    except BaseException:
        with _waiting_lock:
            _waiting.discard(workspace_id)
        raise
    return True


def _pass_started(workspace_id: str) -> int:
    with _waiting_lock:  # a job from now on hands over a pass of its own
        _waiting.discard(workspace_id)
    return drain(workspace_id)


def drain(workspace_id: Any) -> int:
    """Send what is due for the workspace, unless another pass holds it; returns how many
    attempts this call made."""
    workspace_id = str(workspace_id)
    redis = runtime.redis()
    lock, due = _keys(workspace_id)
    redis.set(due, 1, ex=LOCK_SECONDS * 10)
    made = 0
    while True:
        token = uuid.uuid4().hex
        if not redis.set(lock, token, nx=True, ex=LOCK_SECONDS):
            return made  # the holder sees the mark before it lets go
        try:
            count, stopped = _pass(workspace_id, redis, lock)
            made += count
        finally:
            redis.eval(_RELEASE, 1, lock, token)
        if stopped or not redis.exists(due):
            return made


def _pass(workspace_id: str, redis: Any, lock: str) -> tuple[int, bool]:
    """Attempts made, and whether the pass stopped early: out of time (the rest enqueued)
    or the receiver unreachable (the rest wait for the retry's job)."""
    _, due = _keys(workspace_id)
    started = renewed = time.monotonic()
    made = 0
    while True:
        redis.delete(due)
        now = utcnow()
        rows = list(Callback.select().where(
            Callback.workspace == workspace_id, Callback.status.in_(DUE),
            (Callback.next_attempt_at.is_null()) | (Callback.next_attempt_at <= now))
            .order_by(Callback.id).limit(BATCH))
        if not rows:
            _wake_for_next_retry(workspace_id, now)
            return made, False
        for row in rows:
            sent = attempt(row)
            made += 1
            at = time.monotonic()
            if at - renewed >= RENEW_AFTER:
                redis.expire(lock, LOCK_SECONDS)
                renewed = at
            if not sent.answered and sent.status == RETRYING:
                return made, True
            if at - started >= PASS_SECONDS:
                redis.set(due, 1, ex=LOCK_SECONDS * 10)
                queue.enqueue(workspace_id)  # the rest, after other workspaces' jobs
                return made, True


def _wake_for_next_retry(workspace_id: str, now: Any) -> None:
    """Schedule a job for the workspace's next retry, if one waits: a job that ran early
    (a clock a little ahead, a job scheduled before a retry was pushed back) would
    otherwise leave it to the sweep. Same second, same job (queue.enqueue)."""
    row = (Callback.select(Callback.next_attempt_at)
           .where(Callback.workspace == workspace_id, Callback.status.in_(DUE),
                  Callback.next_attempt_at > now)
           .order_by(Callback.next_attempt_at).first())
    if row is not None:
        queue.enqueue(workspace_id, delay=max((row.next_attempt_at - now).total_seconds(),
                                              0.001))
