"""/healthz and /readyz, and a dependency lost at run time: a real Redis stopped and
started again, a database port nobody listens on."""

from __future__ import annotations

import logging
import time

import pytest
from redis import Redis

from cli.app import create_app
from engine.catalog import keycache
from engine.observability.outages import incidents
from engine.queue.embedded_redis import free_port, start_redis
from tests.api.test_send import post


@pytest.fixture(autouse=True)
def _no_incident_open():
    incidents.open.clear()  # each test's outage is an incident of its own
    yield
    incidents.open.clear()


@pytest.fixture
def own_redis():
    """A Redis of this test's own, so stopping it disturbs no other test."""
    servers = [start_redis()]
    yield servers
    servers[-1].stop()


def _ready(client, deadline: float = 10.0):
    """/readyz until it answers 200 (Redis back is noticed by a fresh connection)."""
    end = time.monotonic() + deadline
    while True:
        response = client.get("/readyz")
        if response.status_code == 200 or time.monotonic() > end:
            return response
        time.sleep(0.05)


def test_healthz_answers_without_a_database_or_redis(settings):
    broken = settings.with_changes(database_url=f"postgresql://u@127.0.0.1:{free_port()}/x",
                                   redis_url=f"redis://127.0.0.1:{free_port()}/0")
    client = create_app(broken).test_client()
    response = client.get("/healthz")
    assert response.status_code == 200 and response.json == {"status": "ok"}
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json["errorCode"] == "service.unavailable"
    assert response.headers["Retry-After"].isdigit()
    assert set(response.json["checks"]) == {"database", "redis"}
    assert "HERALD_DATABASE_URL" in response.json["detail"]
    assert "HERALD_REDIS_URL" in response.json["detail"]


def test_readyz_names_redis_while_it_is_stopped_and_recovers(settings, tenant, own_redis,
                                                            caplog):
    keycache.clear()
    app = create_app(settings.with_changes(redis_url=own_redis[0].url))
    client = app.test_client()
    assert _ready(client).json == {"status": "ready",
                                   "checks": {"database": "ok", "redis": "ok"}}
    assert post(client, tenant["body"], tenant["key"]).status_code == 202
    port = own_redis[0].port
    own_redis[0].stop()
    caplog.set_level(logging.INFO)
    started = time.monotonic()
    response = client.get("/readyz")
    assert time.monotonic() - started < 2.5
    assert response.status_code == 503
    assert response.json["checks"] == {"database": "ok", "redis": response.json["checks"]["redis"]}
    assert response.json["checks"]["redis"] != "ok"
    assert "HERALD_REDIS_URL" in response.json["detail"]
    answers = [post(client, tenant["body"], tenant["key"]) for _ in range(5)]
    assert {a.status_code for a in answers} == {503}
    assert {a.json["errorCode"] for a in answers} == {"service.unavailable"}
    assert all(a.headers["Retry-After"].isdigit() for a in answers)
    validate = client.get("/api/v1/api-keys/validate", headers={"X-Api-Key": tenant["key"]})
    assert validate.status_code == 503 and validate.json["errorCode"] == "service.unavailable"
    lines = [r for r in caplog.records if r.name == "herald.dependencies"]
    assert len(lines) == 1 and "redis unreachable" in lines[0].getMessage()
    assert not any(r.exc_info for r in caplog.records)
    own_redis.append(start_redis(port=port))
    assert _ready(client).status_code == 200
    assert post(client, tenant["body"], tenant["key"]).status_code == 202


def test_a_database_that_refuses_connections_is_503_not_500(settings, tenant, caplog):
    app = create_app(settings.with_changes(
        database_url=f"postgresql://u:hunter2secret@127.0.0.1:{free_port()}/x"))
    client = app.test_client()
    caplog.set_level(logging.INFO)
    answers = [post(client, tenant["body"], tenant["key"]) for _ in range(3)]
    assert {a.status_code for a in answers} == {503}
    assert {a.json["errorCode"] for a in answers} == {"service.unavailable"}
    docs = client.get("/openapi/v1.json")
    assert docs.status_code in (200, 503)
    lines = [r for r in caplog.records if r.name == "herald.dependencies"]
    assert len(lines) == 1 and "database unreachable" in lines[0].getMessage()
    assert "hunter2secret" not in caplog.text


def test_a_web_page_without_its_database_is_a_503_page(settings, caplog):
    client = create_app(settings.with_changes(
        database_url=f"postgresql://u@127.0.0.1:{free_port()}/x")).test_client()
    caplog.set_level(logging.INFO)
    for _ in range(3):
        page = client.get("/account")
        assert page.status_code == 503 and page.headers["Retry-After"].isdigit()
        assert page.mimetype == "text/html"
    lines = [r for r in caplog.records if r.name == "herald.dependencies"]
    assert len(lines) == 1 and not any(r.exc_info for r in caplog.records)


def test_a_redis_out_of_memory_is_503_not_500(settings, tenant, own_redis):
    keycache.clear()
    client = create_app(settings.with_changes(redis_url=own_redis[0].url)).test_client()
    Redis.from_url(own_redis[0].url).config_set("maxmemory", "1")  # noeviction: writes refused
    answer = post(client, tenant["body"], tenant["key"])
    assert answer.status_code == 503, answer.json
    assert answer.json["errorCode"] == "service.unavailable"
