"""A database that commits a send's row and then loses its answer (the connection cut between
the commit and the reply, as when PostgreSQL shuts down under load): the client was told 503,
"nothing was accepted", so that row must never be delivered; a retry with the same
Idempotency-Key takes it up; and a send that was committed is never answered 503 because a
later bookkeeping write lost its answer. A TCP proxy in front of the suite's PostgreSQL
loses the answer; on SQLite a commit has no connection to lose its answer on."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from redis import Redis

from cli.app import create_app
from engine.database.models import Notification
from engine.observability.outages import incidents
from engine.queue.queueing import QUEUE_NAME, queue
from engine.worker import reconciler
from tests.api.test_send import post
from tests.support.tcp_proxy import TcpProxy

INSERT = b"EXECUTE herald_insert"  # the send's INSERT, a prepared statement on PostgreSQL


@pytest.fixture
def lossy(settings):
    """The API bound to the database through a proxy that can lose an answer."""
    parts = urlsplit(settings.database_url)
    if parts.scheme == "sqlite":
        pytest.skip("SQLite commits in this process: there is no answer to lose")
    proxy = TcpProxy((parts.hostname or "127.0.0.1", parts.port or 5432))
    url = settings.database_url.replace(parts.netloc.rpartition("@")[2],
                                        f"127.0.0.1:{proxy.port}")
    incidents.open.clear()
    yield proxy, create_app(settings.with_changes(database_url=url)).test_client()
    proxy.stop()
    incidents.open.clear()


def _job_ids() -> list[str]:
    return queue(QUEUE_NAME).get_job_ids()


def _reconciled(settings) -> None:
    """A reconciler pass on the test's own connection: every queued row without a job."""
    from engine import runtime

    runtime.configure(settings)
    reconciler.reconcile_lost_now()


def test_a_send_whose_commit_was_not_heard_is_503_and_never_sent(settings, tenant, lossy):
    proxy, client = lossy
    proxy.lose_answer_to(INSERT)
    answer = post(client, tenant["body"], tenant["key"])
    assert proxy.lost.is_set(), "the proxy never saw the send's INSERT"
    assert answer.status_code == 503, answer.json
    assert answer.json["errorCode"] == "service.unavailable"
    stored = Notification.get()  # the database did commit it
    assert stored.correlation_id == answer.headers["X-Correlation-Id"]
    assert _job_ids() == []
    _reconciled(settings)
    assert not Notification.select().where(Notification.id == stored.id).exists()
    assert _job_ids() == []
    # The database back, the next send is accepted and queued as ever.
    again = post(client, tenant["body"], tenant["key"])
    assert again.status_code == 202, again.json
    assert len(_job_ids()) == 1


def test_a_retry_with_the_same_key_takes_up_the_row_whose_answer_was_lost(settings, tenant,
                                                                          lossy):
    proxy, client = lossy
    proxy.lose_answer_to(INSERT)
    first = post(client, tenant["body"], tenant["key"], **{"Idempotency-Key": "order-7"})
    assert proxy.lost.is_set() and first.status_code == 503, first.json
    retry = post(client, tenant["body"], tenant["key"], **{"Idempotency-Key": "order-7"})
    assert retry.status_code == 202, retry.json
    stored = Notification.get()
    assert retry.json["correlationId"] == stored.correlation_id
    _reconciled(settings)  # the retry's 202 stands: the row is sent, not dropped
    assert Notification.select().where(Notification.id == stored.id).exists()
    assert _job_ids() == [str(stored.id)]


def test_a_committed_send_is_202_when_recording_the_keys_use_loses_its_answer(
        settings, tenant, lossy):
    proxy, client = lossy
    proxy.lose_answer_to(b'UPDATE "api_key"')  # the key's last use, written after the commit
    answer = post(client, tenant["body"], tenant["key"])
    assert proxy.lost.is_set(), ("the send never wrote the key's last use", answer.json)
    assert answer.status_code == 202, answer.json
    stored = Notification.get()
    assert _job_ids() == [str(stored.id)]
    assert Redis.from_url(settings.redis_url).exists(f"rq:job:{stored.id}")
