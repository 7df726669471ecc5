"""Hand accepted notifications to RQ: one job per notification, job id = notification id.

Two queues, which every worker serves in this order (docs/delivery.md, "Queues and
fairness"): ``herald``, every notification but Marketing email (a password reset, an SMS, a
webhook), and ``herald-bulk``, Marketing email and the rest of a fan-out that yielded the
worker. A worker takes a bulk job only when no other waits.

The job is the one RQ's own ``Queue.enqueue`` writes (the queue in ``rq:queues``, the job
hash, the id pushed on the queue list), written in one script call. RQ builds a ``Job``
object and sends five commands in a transaction for each enqueue, which was a third of
a send's CPU time; here RQ builds the job hash once per process, with a placeholder id,
and each enqueue fills in what differs: the id, the call data and the two timestamps.
tests/engine/queue/test_queueing.py holds this to what RQ itself writes, field by field.
Given its workspace, the same call puts the job in that workspace's lane of the queue
(engine/queue/lanes.py), which workers take in turn.
"""

from __future__ import annotations

import uuid
import zlib
from dataclasses import dataclass
from typing import Any

from redis import Redis
from rq import Queue
from rq.job import Job, JobStatus
from rq.utils import now, utcformat

from engine import runtime
from engine.plugins.channel_contract import goes_bulk
from engine.plugins.manager import default_registry
from engine.queue import lanes
from engine.queue.redis_scripts import DirectScript

QUEUE_NAME = "herald"  # the priority queue (its name from before there were two)
BULK_QUEUE_NAME = "herald-bulk"
QUEUE_NAMES = (QUEUE_NAME, BULK_QUEUE_NAME)  # the order workers serve them in
# Delivery callbacks (docs/callbacks.md): served last, and their jobs hand their work to a
# thread of their own, so a callback never holds a delivery.
CALLBACK_QUEUE_NAME = "herald-callbacks"
WORKER_QUEUE_NAMES = (*QUEUE_NAMES, CALLBACK_QUEUE_NAME)
JOB_FUNCTION = "engine.delivery.jobs.deliver_notification"
JOB_TIMEOUT = 300
# The database keeps the outcome; Redis keeps nothing once the job is done.
RESULT_TTL = 0
FAILURE_TTL = 3600
_PLACEHOLDER = "00000000-0000-0000-0000-000000000000"

# ARGV[1]: the job id, ARGV[2]: its workspace ('' untracked: no lane keys follow).
_ENQUEUE = """
redis.call('SADD', KEYS[1], KEYS[2])
redis.call('HSET', KEYS[3], unpack(ARGV, 3))
redis.call('RPUSH', KEYS[2], ARGV[1])
""" + lanes.JOIN + "return 1\n"
# The same, and a send's Idempotency-Key record marked done (engine/sending/idempotency.py).
_ENQUEUE_RECORDING = """
redis.call('SADD', KEYS[1], KEYS[2])
redis.call('HSET', KEYS[3], unpack(ARGV, 5))
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('SET', KEYS[4], ARGV[3], 'EX', ARGV[4])
""" + lanes.JOIN + "return 1\n"


@dataclass(frozen=True)
class _Enqueuer:
    """What one Redis client needs to enqueue: the queues, RQ's job hash and the script."""

    queue: Queue
    bulk: Queue
    fields: dict[str, Any]
    serializer: Any
    script: DirectScript
    recording: DirectScript

    @classmethod
    def build(cls, redis: Redis) -> _Enqueuer:
        queue = Queue(QUEUE_NAME, connection=redis)
        job = Job.create(JOB_FUNCTION, args=(_PLACEHOLDER,), id=_PLACEHOLDER, connection=redis,
                         timeout=JOB_TIMEOUT, result_ttl=RESULT_TTL, failure_ttl=FAILURE_TTL,
                         origin=queue.name, status=JobStatus.QUEUED)
        job.enqueued_at = now()
        return cls(queue, Queue(BULK_QUEUE_NAME, connection=redis), job.to_dict(),
                   job.serializer, DirectScript(redis, _ENQUEUE),
                   DirectScript(redis, _ENQUEUE_RECORDING))

    def enqueue(self, job_id: str, record: tuple[str, str, int] | None = None,
                bulk: bool = False, workspace: str | None = None) -> None:
        keys, args = self.call(job_id, record, bulk, workspace)
        (self.script if record is None else self.recording)(keys=keys, args=args)

    def call(self, job_id: str, record: tuple[str, str, int] | None = None,
             bulk: bool = False, workspace: str | None = None) -> tuple[list[str], list[Any]]:
        """The enqueue script's keys and arguments for one job."""
        queue = self.bulk if bulk else self.queue
        fields = dict(self.fields)
        fields["origin"] = queue.name
        fields["created_at"] = fields["enqueued_at"] = utcformat(now())
        fields["data"] = zlib.compress(
            self.serializer.dumps((JOB_FUNCTION, None, (job_id,), {})))
        fields["description"] = self.fields["description"].replace(_PLACEHOLDER, job_id)
        args: list[Any] = [job_id, workspace or ""]
        if record is not None:
            args += record[1:]
        for name, value in fields.items():
            args += (name, value)
        keys = [queue.redis_queues_keys, queue.key, Job.key_for(job_id)]
        if record is not None:
            keys.append(record[0])
        if workspace:
            keys += lanes.keys(queue.name, workspace)
        return keys, args


def _enqueuer() -> _Enqueuer:
    return runtime.redis_bound("queueing", _Enqueuer.build)


def enqueue_notifications(jobs: list[tuple[str, bool, uuid.UUID | str | None]]) -> None:
    """``enqueue_notification`` for each (id, bulk, workspace), all in one round trip."""
    enqueuer = _enqueuer()
    enqueuer.script.call_each([
        enqueuer.call(job_id, None, bulk, str(workspace).lower() if workspace else None)
        for job_id, bulk, workspace in jobs])


def queue(name: str = QUEUE_NAME) -> Queue:
    """The priority queue, or the queue of that name (one of QUEUE_NAMES)."""
    enqueuer = _enqueuer()
    return enqueuer.bulk if name == BULK_QUEUE_NAME else enqueuer.queue


def is_bulk(channel: str, payload: Any) -> bool:
    """Whether a notification's job goes to the bulk queue: its channel's ``bulk_when``
    (Marketing email)."""
    return goes_bulk(default_registry().channel(channel), payload)


def enqueue_notification(notification_id: str,
                         record: tuple[str, str, int] | None = None,
                         bulk: bool = False,
                         workspace: uuid.UUID | str | None = None) -> None:
    """Enqueue after the row is committed; enqueuing twice is harmless (the job claims the row).

    ``record``: (key, value, seconds) set in the same call (a send's Idempotency-Key record);
    ``bulk``: on the bulk queue, which workers serve after the priority queue;
    ``workspace``: the notification's workspace id, whose lane the job joins (without it
    the job is untracked: served when it reaches the head of the queue).
    """
    _enqueuer().enqueue(notification_id, record, bulk,
                        str(workspace).lower() if workspace is not None else None)
