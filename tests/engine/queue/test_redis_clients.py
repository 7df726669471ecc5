"""One client factory for every Redis URL; under Sentinel it follows a failover by itself."""

from __future__ import annotations

import threading

import pytest
from redis import Redis

from engine.queue import redis_outages
from engine.queue.redis_clients import connect
from tests.support.processes import wait_for
from tests.support.sentinel_group import start_group


def test_a_plain_url_is_one_server(redis_server):
    client = connect(redis_server.url)
    assert client.ping()
    assert client.connection_pool.connection_kwargs["port"] == redis_server.port


@pytest.fixture
def group():
    group = start_group(replicas=1)
    yield group
    group.stop()


@pytest.mark.slow
def test_a_patient_client_follows_the_promotion_on_a_connection_in_use(group):
    """The worker's case: its blocking dequeue is in flight on the old primary when that
    dies; retried, it lands on the promoted replica (redis-py alone would reconnect to the
    dead address for ever)."""
    client = connect(group.url, **redis_outages.client_options())
    assert client.ping()
    old = group.primary_port()
    answer: list[object] = []
    worker = threading.Thread(target=lambda: answer.append(client.blpop(["jobs"], timeout=15)),
                              daemon=True)
    worker.start()
    wait_for(lambda: any(c.get("cmd") == "blpop" for c in Redis(port=old).client_list()), 10,
             "the dequeue in flight")
    group.shut_down(old)
    wait_for(lambda: group.primary_port() not in (None, old), 30, "the promotion", group.log)
    Redis(port=group.primary_port()).rpush("jobs", "job-1")
    worker.join(timeout=30)
    alive = worker.is_alive()
    redis_outages.stop_waiting()  # a stuck thread gives up instead of outliving the test
    try:
        assert not alive, f"the dequeue still retries the dead primary. {group.log()}"
        assert answer == [(b"jobs", b"job-1")]
    finally:
        redis_outages._state.stopping = False


def test_the_sentinels_answer_for_the_api_fast_when_no_primary_is_known(group):
    """The API's client: a service no sentinel watches is a connection error at once (a
    503 at the API), not a hang."""
    from redis.exceptions import ConnectionError

    url = group.url.replace("/herald/0", "/nothing/0")
    client = connect(url, socket_connect_timeout=2.0, socket_timeout=5.0)
    with pytest.raises(ConnectionError):
        client.ping()
    assert Redis(port=group.primary_port()).ping()
