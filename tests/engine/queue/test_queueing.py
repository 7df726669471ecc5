"""The enqueue writes exactly what RQ's own Queue.enqueue writes, and RQ runs what it wrote;
given a workspace, it also puts the job in that workspace's lane."""

from __future__ import annotations

import datetime as dt
import uuid
import zlib

from redis import Redis
from rq.job import Job, JobStatus

from engine import runtime
from engine.delivery.queue import (
    FAILURE_TTL,
    JOB_FUNCTION,
    JOB_TIMEOUT,
    RESULT_TTL,
    enqueue_notification,
)
from engine.queue import lanes
from engine.queue.queueing import QUEUE_NAME, queue, stored_zlib
from tests.support.rq_workers import PromptSimpleWorker

TIMESTAMPS = (b"created_at", b"enqueued_at")


def _state(redis: Redis, job_id: str) -> dict:
    return {"keys": sorted(redis.keys("*")), "queues": redis.smembers("rq:queues"),
            "list": redis.lrange(f"rq:queue:{QUEUE_NAME}", 0, -1),
            "job": redis.hgetall(f"rq:job:{job_id}")}


def test_a_job_is_written_as_rqs_own_enqueue_writes_it(settings):
    redis = runtime.redis()
    job_id = str(uuid.uuid4())
    enqueue_notification(job_id)
    ours = _state(redis, job_id)
    redis.flushdb()
    with redis.pipeline() as pipe:
        queue().enqueue(JOB_FUNCTION, job_id, job_id=job_id, job_timeout=JOB_TIMEOUT,
                        result_ttl=RESULT_TTL, failure_ttl=FAILURE_TTL, pipeline=pipe)
        pipe.execute()
    theirs = _state(redis, job_id)
    assert ours["job"].keys() == theirs["job"].keys()
    for name in ours["job"].keys() - set(TIMESTAMPS) - {b"data"}:
        assert ours["job"][name] == theirs["job"][name], name
    # The call's pickle, as RQ reads it back (zlib's stored block, not deflate's output).
    assert zlib.decompress(ours["job"][b"data"]) == zlib.decompress(theirs["job"][b"data"])
    assert {k: v for k, v in ours.items() if k != "job"} == \
        {k: v for k, v in theirs.items() if k != "job"}
    for name in TIMESTAMPS:
        written = dt.datetime.fromisoformat(ours["job"][name].decode().replace("Z", "+00:00"))
        assert abs(dt.datetime.now(dt.UTC) - written) < dt.timedelta(minutes=1)
        assert len(ours["job"][name]) == len(theirs["job"][name])  # RQ's format


def test_stored_zlib_reads_back_as_what_it_holds():
    for size in (0, 1, 120, 65535, 65536, 200_000):
        data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
        assert zlib.decompress(stored_zlib(data)) == data


def test_rq_reads_the_job_back_as_the_call_it_stands_for(settings):
    job_id = str(uuid.uuid4())
    enqueue_notification(job_id)
    job = Job.fetch(job_id, connection=runtime.redis())
    assert (job.func_name, job.args, job.kwargs) == (JOB_FUNCTION, (job_id,), {})
    assert (job.timeout, job.result_ttl, job.failure_ttl) == (JOB_TIMEOUT, RESULT_TTL,
                                                              FAILURE_TTL)
    assert (job.origin, job.get_status()) == (QUEUE_NAME, JobStatus.QUEUED)
    assert queue().get_job_ids() == [job_id]


def test_an_rq_worker_runs_the_job_and_keeps_nothing(settings):
    job_id = str(uuid.uuid4())  # no such notification: the job claims nothing and says so
    enqueue_notification(job_id)
    redis = runtime.redis()
    PromptSimpleWorker([queue()], connection=redis).work(burst=True)
    assert queue().get_job_ids() == []
    assert not redis.exists(f"rq:job:{job_id}")  # result_ttl 0: done means gone
    assert queue().failed_job_registry.get_job_ids() == []


def test_a_reconfigured_process_enqueues_on_its_new_client(settings):
    first = queue()
    runtime.configure(settings)  # a new Redis client, as after a fork
    assert queue() is not first and queue().connection is runtime.redis()
    job_id = str(uuid.uuid4())
    enqueue_notification(job_id)
    assert queue().get_job_ids() == [job_id]


def test_a_job_given_its_workspace_is_the_same_job_and_joins_its_lane(settings):
    redis = runtime.redis()
    workspace = uuid.uuid4()
    job_id = str(uuid.uuid4())
    enqueue_notification(job_id)
    untracked = _state(redis, job_id)
    redis.flushdb()
    enqueue_notification(job_id, workspace=workspace)
    tracked = _state(redis, job_id)
    assert tracked["list"] == untracked["list"] == [job_id.encode()]
    assert tracked["queues"] == untracked["queues"]
    assert tracked["job"].keys() == untracked["job"].keys()
    assert {n for n in tracked["job"] if tracked["job"][n] != untracked["job"][n]} <= set(
        TIMESTAMPS)
    ring, owners, lane = lanes.keys(QUEUE_NAME, str(workspace))
    assert redis.lrange(ring, 0, -1) == [str(workspace).encode()]
    assert redis.hgetall(owners) == {job_id.encode(): str(workspace).encode()}
    assert redis.lrange(lane, 0, -1) == [job_id.encode()]


def test_a_recorded_enqueue_joins_its_lane_in_the_same_call(settings):
    redis = runtime.redis()
    workspace = str(uuid.uuid4())
    job_id = str(uuid.uuid4())
    enqueue_notification(job_id, record=("herald:idem:test", "done", 60),
                         workspace=workspace.upper())  # workspace ids are kept lowercase
    assert redis.get("herald:idem:test") == b"done"
    assert 0 < redis.ttl("herald:idem:test") <= 60
    assert queue().get_job_ids() == [job_id]
    assert Job.fetch(job_id, connection=redis).args == (job_id,)
    _, owners, lane = lanes.keys(QUEUE_NAME, workspace)
    assert redis.hget(owners, job_id) == workspace.encode()
    assert redis.lrange(lane, 0, -1) == [job_id.encode()]
