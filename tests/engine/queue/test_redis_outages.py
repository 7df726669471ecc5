"""The worker's Redis client waits out a lost Redis, says so once, and stops waiting on a stop."""

from __future__ import annotations

import logging
import threading

import pytest
from redis import Redis
from redis.exceptions import AuthenticationError, ConnectionError

from engine.queue import redis_outages
from engine.queue.embedded_redis import EmbeddedRedis, free_port, start_redis
from tests.support.processes import wait_for


@pytest.fixture
def outages(monkeypatch):
    """This test's own view of Redis (the state is process-wide)."""
    monkeypatch.setattr(redis_outages, "_state", redis_outages._Outages())
    return redis_outages


@pytest.fixture
def own_redis():
    servers: list[EmbeddedRedis] = [start_redis()]
    yield servers
    for server in servers:
        server.stop()


def _shut_down(server: EmbeddedRedis) -> None:
    Redis.from_url(server.url).shutdown(nosave=True)
    server.process.wait(timeout=10)


class _Call(threading.Thread):
    """A Redis command on a thread of its own: its result, or what it raised."""

    def __init__(self, command) -> None:
        super().__init__(daemon=True)
        self.command, self.result, self.error = command, None, None

    def run(self) -> None:
        try:
            self.result = self.command()
        except Exception as err:  # the test looks at it
            self.error = err


def _records(caplog, text: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "herald.redis" and text in r.getMessage()]


def test_a_command_waits_for_redis_to_come_back_and_the_log_says_so_once(outages, own_redis,
                                                                         caplog):
    client = Redis.from_url(own_redis[0].url, **outages.client_options())
    assert client.incr("n") == 1
    port = own_redis[0].port
    _shut_down(own_redis[0])
    caplog.set_level(logging.INFO, logger="herald.redis")
    call = _Call(lambda: client.incr("n"))
    call.start()
    wait_for(lambda: _records(caplog, "Redis unreachable"), 10, "the outage to be logged")
    assert call.is_alive(), "the command gave up instead of waiting"
    own_redis.append(start_redis(port=port))
    call.join(timeout=10)
    assert call.error is None and call.result == 1  # a new, empty server took the command
    assert len(_records(caplog, "Redis unreachable")) == 1
    assert len(_records(caplog, "Redis is back after")) == 1
    assert outages.outages_ended() == 1


def test_a_connection_redis_closed_while_idle_is_no_outage(outages, own_redis, caplog):
    client = Redis.from_url(own_redis[0].url, **outages.client_options())
    client.ping()
    Redis.from_url(own_redis[0].url).client_kill_filter(_type="normal", skipme=True)
    caplog.set_level(logging.INFO, logger="herald.redis")
    assert client.ping()
    assert _records(caplog, "") == [] and outages.outages_ended() == 0


def test_a_server_turned_replica_is_waited_out_like_a_lost_one(outages, own_redis, caplog):
    """A failover: the address still answers, but READONLY, until it names a primary again."""
    client = Redis.from_url(own_redis[0].url, **outages.client_options())
    admin = Redis.from_url(own_redis[0].url)
    admin.replicaof("127.0.0.1", free_port())  # a primary that is not there
    caplog.set_level(logging.INFO, logger="herald.redis")
    call = _Call(lambda: client.set("n", 1))
    call.start()
    wait_for(lambda: _records(caplog, "read only replica"), 10, "the READONLY wait")
    admin.replicaof("NO", "ONE")
    call.join(timeout=10)
    assert call.error is None and call.result is True
    assert len(_records(caplog, "Redis is back after")) == 1


def test_a_stop_ends_the_wait(outages, own_redis):
    client = Redis.from_url(own_redis[0].url, **outages.client_options())
    _shut_down(own_redis[0])
    call = _Call(lambda: client.get("n"))
    call.start()
    wait_for(lambda: outages._state.since is not None, 10, "the wait to begin")
    outages.stop_waiting()
    call.join(timeout=10)
    assert not call.is_alive() and isinstance(call.error, ConnectionError)


def test_refused_credentials_are_not_waited_for(outages, own_redis):
    Redis.from_url(own_redis[0].url).config_set("requirepass", "the-password")
    client = Redis.from_url(own_redis[0].url, **outages.client_options())
    with pytest.raises(AuthenticationError):
        client.ping()
    assert outages._state.since is None
