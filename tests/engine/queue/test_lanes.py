"""The workspaces of a queue take turns (engine/queue/lanes.py): the order ``take`` serves
jobs in, against the real Redis, with jobs enqueued as the API enqueues them."""

from __future__ import annotations

import uuid

from redis import Redis

from engine import runtime
from engine.delivery.queue import enqueue_notification
from engine.queue import lanes
from engine.queue.queueing import BULK_QUEUE_NAME, QUEUE_NAME, queue

A, B, C = (str(uuid.uuid4()) for _ in range(3))


def _enqueue(workspace: str | None, count: int = 1, bulk: bool = False) -> list[str]:
    ids = [str(uuid.uuid4()) for _ in range(count)]
    for job_id in ids:
        enqueue_notification(job_id, bulk=bulk, workspace=workspace)
    return ids


def _take_all(*names: str) -> list[str]:
    """Every job the queues hold, in the order a worker takes them."""
    redis = runtime.redis()
    keys = [queue(name).key for name in names or (QUEUE_NAME,)]
    taken = []
    while (result := lanes.take(redis, keys)) is not None:
        taken.append(result[1].decode())
    return taken


def _lanes_left(redis: Redis) -> list[bytes]:
    return sorted(redis.keys(f"{lanes.PREFIX}*"))


def test_a_workspace_behind_anothers_burst_takes_the_second_turn(settings):
    burst = _enqueue(A, 5)
    (other,) = _enqueue(B)
    assert _take_all() == [burst[0], other, *burst[1:]]
    assert queue().get_job_ids() == []
    assert _lanes_left(runtime.redis()) == []


def test_three_workspaces_take_turns_in_the_order_they_came(settings):
    a, b, c = _enqueue(A, 3), _enqueue(B, 2), _enqueue(C, 1)
    assert _take_all() == [a[0], b[0], c[0], a[1], b[1], a[2]]
    assert _lanes_left(runtime.redis()) == []


def test_a_workspace_whose_lane_emptied_comes_back_at_the_end_of_the_turns(settings):
    a = _enqueue(A, 3)
    b = _enqueue(B, 1)
    redis = runtime.redis()
    assert lanes.take(redis, [queue().key])[1].decode() == a[0]
    assert lanes.take(redis, [queue().key])[1].decode() == b[0]
    b_again = _enqueue(B, 1)  # B's lane was empty: its turn comes after A's
    assert _take_all() == [a[1], b_again[0], a[2]]


def test_one_workspace_alone_is_served_in_arrival_order(settings):
    jobs = _enqueue(A, 20)
    assert _take_all() == jobs
    assert _lanes_left(runtime.redis()) == []


def test_untracked_jobs_are_served_when_they_reach_the_head(settings):
    first = _enqueue(A, 2)
    untracked = _enqueue(None)
    later = _enqueue(B)
    assert _take_all() == [first[0], later[0], first[1], untracked[0]]


def test_an_untracked_job_is_not_starved_by_tracked_ones_that_keep_coming(settings):
    redis = runtime.redis()
    a = _enqueue(A, 3)
    (untracked,) = _enqueue(None)
    b: list[str] = []
    c: list[str] = []
    served = []
    for _ in range(8):  # two workspaces' jobs arrive twice as fast as they are taken
        b += _enqueue(B)
        c += _enqueue(C)
        served.append(lanes.take(redis, [queue().key])[1].decode())
    assert served == [a[0], b[0], c[0], a[1], b[1], c[1], a[2], untracked]


def test_a_job_whose_ticket_was_removed_is_skipped(settings):
    redis = runtime.redis()
    a = _enqueue(A, 2)
    (gone,) = _enqueue(B)
    (c,) = _enqueue(C)
    redis.lrem(queue().key, 1, gone)  # as RQ's cancel removes a job from its queue
    assert _take_all() == [a[0], c, a[1]]  # B's turn held only the stale entry
    assert _lanes_left(redis) == []


def test_more_stale_entries_than_one_take_skips_still_end_in_the_queues_order(settings):
    redis = runtime.redis()
    _enqueue(A, lanes.STALE_LIMIT + 5)
    redis.delete(queue().key)  # as `rq empty` leaves it: the lanes are all stale
    kept = _enqueue(B, 2)
    (fresh,) = _enqueue(A)
    # B's turns come between A's stale entries; the third take meets more than it skips.
    assert _take_all() == [*kept, fresh]
    assert _lanes_left(redis) == []


def test_a_job_enqueued_twice_is_served_twice_without_error(settings):
    redis = runtime.redis()
    (job_id,) = _enqueue(A)
    enqueue_notification(job_id, workspace=A)  # the reconciler and the API, say
    (other,) = _enqueue(B)
    assert sorted(_take_all()) == sorted([job_id, job_id, other])
    assert _lanes_left(redis) == []


def test_a_priority_job_is_always_taken_before_any_bulk_job(settings):
    bulk = _enqueue(A, 3, bulk=True) + _enqueue(B, 1, bulk=True)
    priority = _enqueue(C, 2) + _enqueue(A, 1)
    taken = _take_all(QUEUE_NAME, BULK_QUEUE_NAME)
    assert taken == [priority[0], priority[2], priority[1], bulk[0], bulk[3], *bulk[1:3]]


def test_a_bulk_and_a_priority_lane_of_one_workspace_are_apart(settings):
    (news,) = _enqueue(A, bulk=True)
    (reset,) = _enqueue(A)
    redis = runtime.redis()
    assert redis.hget(f"{lanes.PREFIX}{BULK_QUEUE_NAME}:of", news) == A.encode()
    assert redis.hget(f"{lanes.PREFIX}{QUEUE_NAME}:of", reset) == A.encode()
    assert _take_all(QUEUE_NAME, BULK_QUEUE_NAME) == [reset, news]


def test_a_ticket_given_back_is_served_when_the_lanes_were_dropped_meanwhile(settings):
    """A blocking pop took the ticket; another worker's take found the list empty and
    dropped the lanes before the ticket came back."""
    redis = runtime.redis()
    (job_id,) = _enqueue(A)
    assert redis.lpop(queue().key).decode() == job_id  # the blocking pop
    assert lanes.take(redis, [queue().key]) is None  # the other worker
    taken = lanes.take(redis, [queue().key], back=(queue().key, job_id))
    assert taken == (queue().key.encode(), job_id.encode())
    assert queue().get_job_ids() == [] and _lanes_left(redis) == []


def test_a_tracked_head_with_no_turn_left_is_served_and_its_lane_given_turns(settings):
    redis = runtime.redis()
    a = _enqueue(A, 2)
    redis.delete(f"{lanes.PREFIX}{QUEUE_NAME}:ring")  # as no script of ours leaves it
    assert _take_all() == a
    assert _lanes_left(redis) == []
