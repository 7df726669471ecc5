"""Herald's RQ queues, and jobs written in one script call as RQ's own enqueue writes them.

Two queues for deliveries, which every worker serves in this order (docs/delivery.md,
"Queues and fairness"): ``herald``, the priority queue, and ``herald-bulk``, which a worker
takes from only when no other job waits; then ``herald-callbacks``.

A :class:`JobWriter` writes the job RQ's own ``Queue.enqueue`` writes (the queue in
``rq:queues``, the job hash, the id pushed on the queue list) in one script call. RQ builds
a ``Job`` object and sends five commands in a transaction for each enqueue, which was a
third of a send's CPU time; here RQ builds the job hash once per process, with a
placeholder id, and each enqueue fills in what differs: the id, the call data and the two
timestamps. Given its workspace, the same call puts the job in that workspace's lane of
the queue (engine/queue/lanes.py), which workers take in turn. The job a writer writes is
its caller's: the delivery job's is beside the job (engine/delivery/queue.py), and
tests/engine/queue/test_queueing.py holds it to what RQ itself writes, field by field.
"""

from __future__ import annotations

import datetime as dt
import struct
import zlib
from dataclasses import dataclass
from typing import Any

from redis import Redis
from rq import Queue
from rq.job import Job, JobStatus
from rq.utils import now

from engine import runtime
from engine.queue import lanes, redis_scripts
from engine.queue.redis_scripts import DirectScript

QUEUE_NAME = "herald"  # the priority queue (its name from before there were two)
BULK_QUEUE_NAME = "herald-bulk"
QUEUE_NAMES = (QUEUE_NAME, BULK_QUEUE_NAME)  # the order workers serve them in
# Delivery callbacks (docs/callbacks.md): served last, and their jobs hand their work to a
# thread of their own, so a callback never holds a delivery.
CALLBACK_QUEUE_NAME = "herald-callbacks"
WORKER_QUEUE_NAMES = (*QUEUE_NAMES, CALLBACK_QUEUE_NAME)
_PLACEHOLDER = "00000000-0000-0000-0000-000000000000"
# A record set in the enqueue's own call: (Redis key, value, seconds to keep it).
Record = tuple[str, str, int]

# ARGV[1]: the job id, ARGV[2]: its workspace ('' untracked: no lane keys follow).
_ENQUEUE = """
redis.call('SADD', KEYS[1], KEYS[2])
redis.call('HSET', KEYS[3], unpack(ARGV, 3))
redis.call('RPUSH', KEYS[2], ARGV[1])
""" + lanes.JOIN + "return 1\n"
# The same, and a record set beside it (a send's Idempotency-Key, engine/sending/idempotency.py).
_ENQUEUE_RECORDING = """
redis.call('SADD', KEYS[1], KEYS[2])
redis.call('HSET', KEYS[3], unpack(ARGV, 5))
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('SET', KEYS[4], ARGV[3], 'EX', ARGV[4])
""" + lanes.JOIN + "return 1\n"


@dataclass(frozen=True)
class JobSpec:
    """What every job of one kind shares: its function's path (written into each job, so
    it never moves), its timeout and how long RQ keeps it done or failed."""

    function: str
    timeout: int
    result_ttl: int
    failure_ttl: int


@dataclass(frozen=True)
class JobWriter:
    """What one Redis client needs to write one kind of job: the queues, RQ's job hash
    for it and the scripts."""

    spec: JobSpec
    queues: dict[str, Queue]
    fields: dict[str, Any]
    serializer: Any
    script: DirectScript
    recording: DirectScript

    @classmethod
    def build(cls, redis: Redis, spec: JobSpec) -> JobWriter:
        queues = {name: Queue(name, connection=redis) for name in QUEUE_NAMES}
        job = Job.create(spec.function, args=(_PLACEHOLDER,), id=_PLACEHOLDER,
                         connection=redis, timeout=spec.timeout, result_ttl=spec.result_ttl,
                         failure_ttl=spec.failure_ttl, origin=QUEUE_NAME,
                         status=JobStatus.QUEUED)
        job.enqueued_at = now()
        return cls(spec, queues, job.to_dict(), job.serializer, DirectScript(redis, _ENQUEUE),
                   DirectScript(redis, _ENQUEUE_RECORDING))

    def enqueue(self, job_id: str, record: Record | None = None,
                queue_name: str = QUEUE_NAME, workspace: str | None = None) -> None:
        """The job ``job_id``, its one argument its id; ``record``: (key, value, seconds)
        set in the same call; ``workspace``: the lane it joins (None: untracked)."""
        keys, args = self.call(job_id, record, queue_name, workspace)
        (self.script if record is None else self.recording)(keys=keys, args=args)

    def enqueue_each(self, jobs: list[tuple[str, str, str | None, Record | None]]) -> None:
        """``enqueue`` for each (id, queue name, workspace, record), all in one round trip."""
        redis_scripts.call_each([
            (self.script if record is None else self.recording,
             *self.call(job_id, record, queue_name, workspace))
            for job_id, queue_name, workspace, record in jobs])

    def call(self, job_id: str, record: Record | None = None,
             queue_name: str = QUEUE_NAME,
             workspace: str | None = None) -> tuple[list[str], list[Any]]:
        """The enqueue script's keys and arguments for one job."""
        queue = self.queues[queue_name]
        fields = dict(self.fields)
        fields["origin"] = queue.name
        fields["created_at"] = fields["enqueued_at"] = _timestamp()
        fields["data"] = stored_zlib(
            self.serializer.dumps((self.spec.function, None, (job_id,), {})))
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


def _timestamp() -> str:
    """Now in RQ's format ('%Y-%m-%dT%H:%M:%S.%fZ', rq.utils.utcformat), without strftime."""
    return dt.datetime.now(dt.UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def stored_zlib(data: bytes) -> bytes:
    """``data`` in the zlib format as one stored (uncompressed) block: what RQ's
    ``zlib.decompress`` reads back as it reads ``zlib.compress``'s output.

    A job's call data is a pickle of about a hundred bytes that deflate cannot shorten,
    and ``zlib.compress`` sets up its whole state (some 256 KB) for each one: 20-30 µs of a
    send's CPU on a quiet machine, several times that on a busy one. A stored block costs
    a checksum.
    """
    size = len(data)
    if size > 0xFFFF:  # one stored block holds at most 65,535 bytes
        return zlib.compress(data)
    return (b"\x78\x01\x01" + struct.pack("<HH", size, size ^ 0xFFFF) + data
            + struct.pack(">I", zlib.adler32(data)))


def writer(spec: JobSpec) -> JobWriter:
    """The writer of ``spec``'s jobs on this process's Redis client (made once per client)."""
    return runtime.redis_bound(spec.function,
                               lambda redis: JobWriter.build(redis, spec))


def queue(name: str = QUEUE_NAME) -> Queue:
    """The priority queue, or the queue of that name (one of WORKER_QUEUE_NAMES)."""
    return runtime.redis_bound("queues", lambda redis: {
        n: Queue(n, connection=redis) for n in WORKER_QUEUE_NAMES})[name]
