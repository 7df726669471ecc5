"""The worker takes jobs lane by lane through RQ's own dequeue (engine/worker/worker_class.py):
RQ's non-blocking pop, its blocking pop, and its choice for a worker of one queue all go
through the lanes' take."""

from __future__ import annotations

import subprocess
import sys
import threading
import uuid

import pytest
from redis import Redis
from rq.exceptions import DequeueTimeout

from engine import runtime
from engine.database import notification_store
from engine.delivery.queue import enqueue_notification
from engine.queue import lanes
from engine.queue.queueing import BULK_QUEUE_NAME, QUEUE_NAME, WORKER_QUEUE_NAMES, queue
from engine.worker import handoff
from engine.worker.worker_class import ForkingHeraldWorker, HeraldWorker, _LaneQueue
from tests import factories
from tests.support.processes import wait_for


def _lane_queues(names: list[str], redis: Redis) -> list[_LaneQueue]:
    return [_LaneQueue(name, connection=redis) for name in names]


@pytest.mark.parametrize(("names", "bulk"), [([QUEUE_NAME], False),  # RQ's lmove path
                                             (list(WORKER_QUEUE_NAMES), True)])
def test_a_blocked_dequeue_takes_a_job_enqueued_meanwhile_and_leaves_no_lane(settings, names,
                                                                             bulk):
    worker_side = Redis.from_url(settings.redis_url)
    answer: list[object] = []

    def dequeue() -> None:
        answer.append(_LaneQueue.dequeue_any(_lane_queues(names, worker_side), 15,
                                             connection=worker_side))

    blocked = threading.Thread(target=dequeue, daemon=True)
    blocked.start()
    redis = runtime.redis()
    wait_for(lambda: any(c.get("cmd") == "blpop" for c in redis.client_list()), 10,
             "the dequeue to block")
    job_id = str(uuid.uuid4())
    enqueue_notification(job_id, bulk=bulk, workspace=uuid.uuid4())
    blocked.join(timeout=15)
    assert not blocked.is_alive()
    job, taken_from = answer[0]
    assert job.id == job_id
    assert taken_from.name == (BULK_QUEUE_NAME if bulk else QUEUE_NAME)
    assert queue(taken_from.name).get_job_ids() == []
    assert redis.keys(f"{lanes.PREFIX}*") == []


def test_a_blocked_dequeue_that_meets_nothing_times_out_as_rqs(settings):
    redis = runtime.redis()
    with pytest.raises(DequeueTimeout):
        _LaneQueue.dequeue_any(_lane_queues(list(WORKER_QUEUE_NAMES), redis), 1,
                               connection=redis)


def test_jobs_waiting_are_taken_in_turn_without_blocking(settings):
    redis = runtime.redis()
    a = [str(uuid.uuid4()) for _ in range(3)]
    b = str(uuid.uuid4())
    for job_id in a:
        enqueue_notification(job_id, workspace="a")
    enqueue_notification(b, workspace="b")
    queues = _lane_queues(list(WORKER_QUEUE_NAMES), redis)
    taken = [_LaneQueue.dequeue_any(queues, 1, connection=redis)[0].id for _ in range(4)]
    assert taken == [a[0], b, a[1], a[2]]


@pytest.fixture
def claimed(settings, monkeypatch) -> list[str]:
    """The notifications claimed, in order; the claim itself is the real one."""
    monkeypatch.setenv("HERALD_EMAIL_PROVIDER", "inbox://")
    ids: list[str] = []
    real = notification_store.claim

    def claim(notification_id: str, *limits: float, **channel: str):
        ids.append(notification_id)
        return real(notification_id, *limits, **channel)

    monkeypatch.setattr(notification_store, "claim", claim)
    handoff.start()
    yield ids
    handoff.close()


@pytest.mark.parametrize("names", [[QUEUE_NAME], list(WORKER_QUEUE_NAMES)])
def test_the_worker_delivers_each_workspace_in_turn(claimed, names):
    def burst(count: int) -> list[str]:
        ws = factories.workspace()
        ids = [str(factories.notification(ws, factories.email_payload()).id)
               for _ in range(count)]
        for nid in ids:
            enqueue_notification(nid, workspace=ws.id)
        return ids

    a, b = burst(4), burst(1)
    HeraldWorker(names, connection=runtime.redis()).work(burst=True)
    handoff.close()
    assert claimed == [a[0], b[0], *a[1:]]


def test_the_forking_worker_takes_lanes_too():
    assert issubclass(ForkingHeraldWorker.queue_class, _LaneQueue)
    assert issubclass(HeraldWorker.queue_class, _LaneQueue)


def test_a_worker_of_a_process_herald_did_not_configure_takes_rqs_jobs(settings, tmp_path):
    # The bench's floor runs HeraldWorker on plain RQ jobs in a bare process: the take must
    # not ask engine.runtime for a client it never made (it raised, and no job ran).
    from rq import Queue

    queue = Queue("bare", connection=Redis.from_url(settings.redis_url))
    for n in range(3):
        queue.enqueue("bench.floor_jobs.noop", "x", job_id=f"bare-{n}", result_ttl=0)
    script = ("import sys; from redis import Redis; "
              "from engine.worker.worker_class import HeraldWorker; "
              "HeraldWorker(['bare'], connection=Redis.from_url(sys.argv[1]))"
              ".work(burst=True)")
    done = subprocess.run([sys.executable, "-c", script, settings.redis_url],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert queue.count == 0
