"""The request path's scripts and commands on their own connections: same answers, and
redis-py's own call whenever the direct one cannot be trusted."""

from __future__ import annotations

import os
import threading

from redis import Redis

from engine import runtime
from engine.queue.redis_scripts import DirectScript, commands, thread_connection

COUNT = "return redis.call('INCR', KEYS[1]) + tonumber(ARGV[1])"


def _client_ids(redis: Redis) -> list[int]:
    return [c["id"] for c in redis.client_list()]


def test_a_call_runs_the_script_once_and_returns_its_reply(settings):
    redis = runtime.redis()
    script = DirectScript(redis, COUNT)
    assert script(keys=["n"], args=[10]) == 11
    assert script(keys=["n"], args=[10]) == 12
    assert redis.get("n") == b"2"


def test_scripts_of_one_thread_share_its_connection(settings):
    redis = runtime.redis()
    before = set(_client_ids(redis))
    first, second = DirectScript(redis, COUNT), DirectScript(redis, COUNT)
    assert (first(keys=["n"], args=[0]), second(keys=["n"], args=[0])) == (1, 2)
    assert len(set(_client_ids(redis)) - before) == 1


def test_healthy_calls_stay_on_the_threads_own_connection(settings):
    # The fallback gives the same answers, so only this shows the direct path is taken.
    redis = runtime.redis()
    script = DirectScript(redis, COUNT)
    assert script(keys=["n"], args=[0]) == 1
    own = thread_connection(redis.connection_pool)
    for expected in (2, 3, 4):
        assert script(keys=["n"], args=[0, "x", b"y"]) == expected
    assert thread_connection(redis.connection_pool) is own
    assert own._sock is not None  # never dropped and reconnected on the way


def test_a_flushed_script_cache_is_loaded_again(settings):
    redis = runtime.redis()
    script = DirectScript(redis, COUNT)
    assert script(keys=["n"], args=[0]) == 1
    redis.script_flush()  # a Redis restart does the same
    assert script(keys=["n"], args=[0]) == 2
    assert redis.get("n") == b"2"  # NOSCRIPT ran nothing, so nothing ran twice


def test_a_killed_connection_falls_back_and_the_next_call_reconnects(settings):
    redis = runtime.redis()
    script = DirectScript(redis, COUNT)
    before = set(_client_ids(redis))
    assert script(keys=["n"], args=[0]) == 1
    own = set(_client_ids(redis)) - before
    assert len(own) == 1
    redis.client_kill_filter(_id=own.pop())
    assert script(keys=["n"], args=[0]) == 2  # through redis-py's call
    assert script(keys=["n"], args=[0]) == 3  # on a new connection of its own
    assert redis.get("n") == b"3"


def test_each_thread_has_its_own_connection(settings):
    redis = runtime.redis()
    script = DirectScript(redis, COUNT)
    before = set(_client_ids(redis))
    results: list[int] = []
    done = threading.Barrier(4)
    release = threading.Event()

    def call() -> None:
        results.append(script(keys=["n"], args=[0]))
        done.wait()
        release.wait()  # a thread's connection lives as long as the thread

    threads = [threading.Thread(target=call) for _ in range(3)]
    for thread in threads:
        thread.start()
    done.wait()
    try:
        assert sorted(results) == [1, 2, 3]
        assert len(set(_client_ids(redis)) - before) == 3
    finally:
        release.set()
        for thread in threads:
            thread.join()


def test_a_forked_child_never_uses_its_parents_connection(settings):
    redis = runtime.redis()
    script = DirectScript(redis, COUNT)
    assert script(keys=["n"], args=[0]) == 1
    parent = thread_connection(redis.connection_pool)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: a connection of its own, and the parent's left alone
        ok = (thread_connection(redis.connection_pool) is not parent
              and script(keys=["n"], args=[0]) == 2)
        os.write(write, b"1" if ok else b"0")
        os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(read, 1) == b"1"
    assert script(keys=["n"], args=[0]) == 3  # the parent's connection still in sync


def test_commands_go_in_one_round_trip_on_the_threads_connection(settings):
    redis = runtime.redis()
    before = set(_client_ids(redis))
    assert commands(redis, ("INCR", "n"), ("EXPIRE", "n", 120), ("INCRBY", "n", 5)) == [1, 1, 6]
    own = thread_connection(redis.connection_pool)
    value = b"x" * 100_000 + "\u00e9".encode()  # a stashed document, larger than a packet
    assert commands(redis, ("SET", "doc", value, "EX", 60)) in ([b"OK"], ["OK"])
    assert redis.get("doc") == value and 0 < redis.ttl("doc") <= 60
    assert 0 < redis.ttl("n") <= 120
    assert thread_connection(redis.connection_pool) is own and own._sock is not None
    assert len(set(_client_ids(redis)) - before) == 1  # the thread's, not the pool's


def test_commands_on_a_killed_connection_fall_back_and_then_reconnect(settings):
    redis = runtime.redis()
    before = set(_client_ids(redis))
    assert commands(redis, ("INCR", "n")) == [1]
    own = set(_client_ids(redis)) - before
    assert len(own) == 1
    redis.client_kill_filter(_id=own.pop())
    assert commands(redis, ("INCR", "n"), ("EXPIRE", "n", 60)) == [2, True]  # redis-py's
    assert commands(redis, ("INCR", "n")) == [3]  # a new connection of its own
    assert redis.get("n") == b"3"
