"""A workspace's own provider that never answers holds the shared worker thread only a few
times (issue 37, finding 2): after HERALD_PROVIDER_BREAKER_FAILURES transient failures in a
row it is skipped without a connection, and another workspace's mail goes on."""

from __future__ import annotations

import json

import pytest
from redis import Redis

from engine import runtime
from engine.database.models import DeliveryAttempt
from engine.delivery import providers
from engine.delivery.jobs import deliver_notification
from engine.queue.embedded_redis import free_port
from tests import factories
from tests.support.recording_listener import RecordingListener
from tests.support.smtp_server import start_smtp


@pytest.fixture
def tarpit():
    server = RecordingListener(hold=True)
    yield server
    server.close()


def test_a_tarpit_provider_is_skipped_after_a_few_failures(settings, tarpit):
    controller, smtp = start_smtp(free_port())
    try:
        runtime.configure(settings.with_changes(
            email_provider=f"smtp://127.0.0.1:{controller.port}?tls=none"))
        providers.close_all()
        slow = factories.workspace(email_provider=json.dumps(
            {"plugin": "smtp", "url": f"smtp://127.0.0.1:{tarpit.port}?timeout=1"}))
        failures = runtime.settings().provider_breaker_failures
        outcomes = []
        for _ in range(failures + 3):
            n = factories.notification(slow, factories.email_payload())
            deliver_notification(str(n.id))
            outcomes.append(DeliveryAttempt.get(DeliveryAttempt.notification == n.id))
        assert [a.outcome for a in outcomes] == ["transient"] * (failures + 3)
        assert len(tarpit.connections) == failures  # the rest never connected
        assert all("circuit is open" in a.error for a in outcomes[failures:])
        # Another workspace, through the service's provider, is not held.
        other = factories.notification(factories.workspace(), factories.email_payload())
        assert deliver_notification(str(other.id)) == "delivered"
        assert len(smtp.received) == 1
    finally:
        controller.stop()
        providers.close_all()
        Redis.from_url(settings.redis_url).flushall()
        runtime.configure(settings)
