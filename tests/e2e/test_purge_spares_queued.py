"""A notification older than its workspace's retention that is still queued (a backlog, a
retry, a schedule) is never purged: a real worker delivers it whole to a real SMTP server
after a purge ran, and the first purge after that takes its content (Postal's clean-up
once deleted mail not yet sent: docs/operations.md, "Data retention")."""

from __future__ import annotations

import datetime as dt

import pytest

from engine.database.models import Notification, utcnow
from engine.delivery.queue import enqueue_notification
from engine.queue.embedded_redis import free_port
from engine.retention import policy
from engine.retention.purge import purge
from tests import factories
from tests.e2e.test_worker_durability import _delivered, _stop, _wait, _worker
from tests.support.smtp_server import start_smtp


@pytest.fixture
def smtp_server():
    controller, handler = start_smtp(free_port())
    yield controller.port, handler
    controller.stop()


@pytest.mark.slow
def test_a_queued_notification_past_retention_is_still_delivered(settings, smtp_server):
    port, handler = smtp_server
    ws = factories.workspace()
    policy.set_days(ws.id, 1)
    long_ago = utcnow() - dt.timedelta(days=3)
    queued = factories.notification(ws, factories.email_payload(
        to=["ada@example.net"], subject="still coming", text="Hello Ada"),
        created_at=long_ago, updated_at=long_ago)
    assert purge(ws.id)["waiting"] == 1
    assert Notification.get_by_id(queued.id).payload["subject"] == "still coming"
    enqueue_notification(str(queued.id), workspace=queued.workspace_id)
    worker = _worker(settings, port)
    try:
        _wait(lambda: _delivered([str(queued.id)]) == 1, 60, "the old queued notification")
    finally:
        _stop(worker)
    (arrived,) = handler.received
    assert arrived.rcpt_tos == ["ada@example.net"]
    assert b"still coming" in arrived.content
    assert purge(ws.id)["notifications"] == 1
    assert set(Notification.get_by_id(queued.id).payload) == {"purgedAt"}
